package io.sandboxes.examples;

import dev.langchain4j.agent.tool.ToolSpecification;
import io.sandboxes.dsl.SandboxClient;
import io.sandboxes.dsl.Sandboxes;
import io.sandboxes.langchain4j.SandboxCodeExecutionEngine;
import io.sandboxes.langchain4j.SandboxTools;
import java.io.PrintStream;

/**
 * LangChain4j: the sandbox tools as a model sees them (the specifications LangChain4j derives and
 * sends it), then called the way an AI service calls them on a model's behalf, for two
 * conversations that each get a sandbox of their own, and the code execution engine. No language
 * model runs here: in an application, {@code AiServices.builder(...).toolProvider(tools)} hands these
 * tools to one.
 *
 * <p>Run it with {@code scripts/run-examples.sh LangChain4jTools}.
 */
public final class LangChain4jTools {
  private LangChain4jTools() {}

  public static void main(String[] args) {
    try (SandboxClient sandboxes = Sandboxes.local()) {
      run(sandboxes, System.out);
    }
  }

  static void run(SandboxClient sandboxes, PrintStream out) {
    try (SandboxTools tools = SandboxTools.builder(sandboxes).outputLimit(400).build()) {
      for (ToolSpecification spec : tools.toolSpecifications()) {
        out.println("tool " + spec.name() + " " + spec.parameters().properties().keySet() + ": " + spec.description());
      }
      out.println(tools.writeFile("alice", "/home/user/plan.txt", "step 1: count primes\n"));
      out.println(tools.runPython("alice", "print(sum(all(n % d for d in range(2, n)) for n in range(2, 10_000)))"));
      out.println(tools.readFile("bob", "/home/user/plan.txt")); // bob has a sandbox of his own: not there
      out.println(tools.runCommand("bob", "seq 1 100000")); // cut in the middle, with the full length
    }
    try (SandboxCodeExecutionEngine engine = new SandboxCodeExecutionEngine(sandboxes)) {
      out.println("engine: " + engine.execute("import platform; print(platform.python_version())"));
    }
  }
}
