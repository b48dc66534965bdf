/**
 * Sandboxes for LangChain4j: {@link io.sandboxes.langchain4j.SandboxTools}, tools that give each
 * conversation a sandbox of its own, and {@link io.sandboxes.langchain4j.SandboxCodeExecutionEngine},
 * LangChain4j's code execution engine backed by a sandbox.
 */
@NullMarked
package io.sandboxes.langchain4j;

import org.jspecify.annotations.NullMarked;
