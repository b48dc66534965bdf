package io.sandboxes.examples;

import io.sandboxes.ExecResult;
import io.sandboxes.Sandbox;
import io.sandboxes.dsl.SandboxClient;
import io.sandboxes.dsl.Sandboxes;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/**
 * Hello, sandbox: start the local runtime, create a sandbox, write a Python program into it, run
 * it, print what it said, serve a page from inside and fetch it at its preview URL, and kill the
 * sandbox.
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
    try (Sandbox sandbox = sandboxes.create()) {
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

      // A server inside the sandbox is reached at its preview URL: on the local runtime, a
      // loopback address forwarded into the sandbox (which still has no network of its own);
      // on E2B's cloud, https://<port>-<sandbox id>.e2b.app.
      sandbox.writeFile("/home/user/site/index.txt", "served from inside the sandbox\n");
      sandbox.exec("cd /home/user/site && (nohup python3 -m http.server 8000 >/dev/null 2>&1 &) && "
          + "for i in $(seq 100); do python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", 8000))' "
          + "2>/dev/null && break; sleep 0.1; done").orThrow();
      String preview = sandbox.previewUrl(8000);
      out.println("preview URL " + preview);
      out.print("the page says: " + fetch(URI.create(preview + "/index.txt")));
    }
    out.println("sandbox killed");
  }

  private static String fetch(URI url) {
    try (HttpClient http = HttpClient.newHttpClient()) {
      return http.send(HttpRequest.newBuilder(url).timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString()).body();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while fetching " + url, e);
    }
  }
}
