/**
 * Sandboxes for Spring AI: {@link io.sandboxes.springai.SandboxSpringTools}, tools with a sandbox
 * per conversation, and {@link io.sandboxes.springai.SandboxesAutoConfiguration} for Spring Boot.
 */
@NullMarked
package io.sandboxes.springai;

import org.jspecify.annotations.NullMarked;
