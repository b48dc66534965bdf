package io.sandboxes.langchain4j;

import dev.langchain4j.code.CodeExecutionEngine;
import io.sandboxes.dsl.SandboxClient;
import java.time.Duration;
import java.util.Objects;

/**
 * LangChain4j's {@link CodeExecutionEngine} backed by a sandbox: {@link #execute} runs Python 3
 * code there and answers what it printed. The sandbox is made on the first call and kept, so
 * files one call writes are there for the next; {@link #close} kills it.
 *
 * {@snippet :
 * try (SandboxClient sandboxes = Sandboxes.local();
 *      SandboxCodeExecutionEngine engine = new SandboxCodeExecutionEngine(sandboxes)) {
 *   String answer = engine.execute("print(sum(range(101)))"); // "5050"
 * }
 * }
 *
 * <p>A program that fails answers its exit code and stderr as text, as does one that runs past
 * the command timeout: an engine's caller (a tool, a model) reads text, not exceptions.
 */
public final class SandboxCodeExecutionEngine implements CodeExecutionEngine, AutoCloseable {
  private static final String CONVERSATION = "code-execution-engine";
  private final SandboxTools tools;

  /**
   * An engine on the client's default template, with {@link SandboxTools}' default limits.
   *
   * @param client where the sandbox runs; stays the caller's to close
   */
  public SandboxCodeExecutionEngine(SandboxClient client) {
    this(SandboxTools.builder(client).build());
  }

  /**
   * An engine with the given command timeout and output limit.
   *
   * @param client where the sandbox runs; stays the caller's to close
   * @param timeout how long one program may run
   * @param outputLimit the most characters of output answered, at least 100
   */
  public SandboxCodeExecutionEngine(SandboxClient client, Duration timeout, int outputLimit) {
    this(SandboxTools.builder(client).commandTimeout(timeout).outputLimit(outputLimit).build());
  }

  private SandboxCodeExecutionEngine(SandboxTools tools) {
    this.tools = Objects.requireNonNull(tools, "tools");
  }

  /**
   * Runs Python 3 code in the engine's sandbox.
   *
   * @param code the program
   * @return what it printed, without a final newline, when it exits 0; otherwise its exit code
   *     and output, or an {@code error:} line
   */
  @Override
  public String execute(String code) {
    return tools.toolkit().pythonOutput(CONVERSATION, code);
  }

  /** Kills the engine's sandbox, if one was made. */
  @Override
  public void close() {
    tools.close();
  }
}
