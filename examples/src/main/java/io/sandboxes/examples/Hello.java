package io.sandboxes.examples;

import io.sandboxes.ExecResult;
import io.sandboxes.Sandbox;
import io.sandboxes.dsl.SandboxClient;
import io.sandboxes.dsl.Sandboxes;
import java.io.PrintStream;

/**
 * Hello, sandbox: start the local runtime, create a sandbox, write a Python program into it, run
 * it, print what it said, and kill the sandbox.
 *
 * <p>Run it with {@code scripts/run-examples.sh Hello}. The same code runs on E2B's cloud if
 * {@code Sandboxes.local()} is replaced by {@code Sandboxes.e2b()} and {@code E2B_API_KEY} is set.
 */
public final class Hello {
  private Hello() {}

  public static void main(String[] args) {
    // The provider owns the in-process local server; closing it stops the server.
    try (SandboxClient sandboxes = Sandboxes.local()) {
      run(sandboxes, System.out);
    }
  }

  static void run(SandboxClient sandboxes, PrintStream out) {
    // A sandbox is closed like a file: closing it kills it.
    try (Sandbox sandbox = sandboxes.create().start()) {
      out.println("created sandbox " + sandbox.id());

      // Files go in through the sandbox's daemon; parent folders are made as needed.
      sandbox.writeFile("/home/user/hello.py", """
          import platform, getpass
          print(f"Hello from Python {platform.python_version()} in a sandbox, as {getpass.getuser()}")
          print("6 x 7 =", 6 * 7)
          """);

      // exec runs a shell command and waits; a non-zero exit code is returned, not thrown.
      ExecResult result = sandbox.exec("python3 /home/user/hello.py");
      out.print(result.stdout());
      out.println("exit code " + result.exitCode() + " after " + result.duration().toMillis() + " ms");
    }
    out.println("sandbox killed");
  }
}
