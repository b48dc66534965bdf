package io.sandboxes;

import java.nio.charset.StandardCharsets;
import org.jspecify.annotations.Nullable;

/**
 * A live sandbox: an isolated machine that runs commands and holds files.
 *
 * <p>Obtained from a provider; {@link #close()} destroys the sandbox, so use it with
 * try-with-resources:
 *
 * {@snippet class=io.sandboxes.snippets.CoreSnippets region=sandbox :
 * try (Sandbox sandbox = provider.create(SandboxConfig.forProject("demo"))) {
 *   sandbox.writeFile("/home/user/hello.py", "print('hi')");
 *   ExecResult result = sandbox.exec("python3 /home/user/hello.py");
 *   System.out.println(result.stdout());
 * }
 * }
 *
 * @since 0.1
 */
public interface Sandbox extends AutoCloseable {

  /**
   * Returns the sandbox's id.
   *
   * @return the id, as the provider knows it
   */
  String id();

  /**
   * Runs a shell command ({@code bash -l -c}) and waits for it to finish, with the default options.
   *
   * @param command the command line
   * @return its exit code and output; a non-zero exit is returned, not thrown
   * @throws SandboxException when the command's outcome could not be obtained
   */
  default ExecResult exec(String command) {
    return exec(command, ExecOptions.defaults());
  }

  /**
   * Runs a shell command ({@code bash -l -c}) and waits for it to finish.
   *
   * @param command the command line
   * @param options working directory, environment, user and deadline
   * @return its exit code and output; a non-zero exit is returned, not thrown
   * @throws SandboxException when the command's outcome could not be obtained
   */
  ExecResult exec(String command, ExecOptions options);

  /**
   * Writes a file with exactly these bytes, creating parent directories; an existing file is
   * replaced.
   *
   * @param path absolute, or relative to the default user's home
   * @param content the bytes to write
   */
  void writeBytes(String path, byte[] content);

  /**
   * Writes text as UTF-8, creating parent directories; an existing file is replaced.
   *
   * @param path absolute, or relative to the default user's home
   * @param content the text to write
   */
  default void writeFile(String path, String content) {
    writeBytes(path, content.getBytes(StandardCharsets.UTF_8));
  }

  /**
   * Reads a file's exact bytes.
   *
   * @param path absolute, or relative to the default user's home
   * @return the file's content
   * @throws SandboxFileNotFoundException when there is no such file
   */
  byte[] readBytes(String path);

  /**
   * Reads a file as UTF-8 text.
   *
   * @param path absolute, or relative to the default user's home
   * @return the file's content
   * @throws SandboxFileNotFoundException when there is no such file
   */
  default String readFile(String path) {
    return new String(readBytes(path), StandardCharsets.UTF_8);
  }

  /**
   * Starts a long-lived process and returns at once with a handle to its output, input and end.
   * With {@link SpawnOptions#pty()} it gets a real terminal, or the call fails: it never falls
   * back to pipes.
   *
   * @param command a shell command line (for a PTY, a shell name such as {@code bash} starts an
   *     interactive login shell; anything else runs inside one)
   * @param options cwd, environment, lifetime and terminal
   * @return a handle to the running process
   */
  SpawnHandle spawn(String command, SpawnOptions options);

  /**
   * Deletes a file or a folder (with its contents). A path that does not exist is success.
   *
   * @param path absolute, or relative to the default user's home
   */
  void deleteFile(String path);

  /**
   * Lists a folder, one level deep. A symlink is reported as a link with its target, never as a
   * second copy of what it points at.
   *
   * @param path absolute, or relative to the default user's home
   * @return the entries; empty for an empty folder
   * @throws SandboxFileNotFoundException when there is no such folder
   * @throws SandboxException when the path is not a folder or cannot be read
   */
  java.util.List<DirEntry> readDir(String path);

  /**
   * Subscribes to changes under a folder (recursively), as they happen. The subscription lasts
   * until it is closed.
   *
   * @param path the folder to watch
   * @param listener called for each change, on a background thread
   * @return the subscription; close it to stop
   * @throws SandboxFileNotFoundException when there is no such folder
   */
  Subscription onFileChange(String path, java.util.function.Consumer<FileChange> listener);

  /**
   * Extracts a tar archive into a folder of the sandbox (created if missing). The archive is
   * streamed in bounded pieces; ownership and setuid/setgid bits in it are never restored.
   *
   * @param path the absolute folder to extract into
   * @param tar the archive; read to its end, not closed
   * @throws SandboxException naming the step that failed (spooling, extracting) with its stderr
   */
  void importFiles(String path, java.io.InputStream tar);

  /**
   * Archives a folder of the sandbox as tar, rooted at the folder's own name: exporting
   * {@code /workspace/my-app} gives entries {@code my-app/...}.
   *
   * @param path an absolute folder below {@code /}
   * @return the archive's bytes
   * @throws SandboxException naming the step that failed
   */
  java.io.InputStream exportFiles(String path);

  /**
   * Runs code in the sandbox's code interpreter, in the default Python context, and waits for it
   * to finish; see {@link #runCode(String, RunCodeOptions)}.
   *
   * @param code the code
   * @return its results, output and error; an error the code raised is returned, not thrown
   * @throws CodeTimeoutException when it ran past the default timeout (60 s)
   * @throws UnsupportedOperationException when the sandbox has no code interpreter
   */
  default CodeExecution runCode(String code) {
    return runCode(code, RunCodeOptions.defaults());
  }

  /**
   * Runs code in the sandbox's code interpreter and waits for it to finish. The sandbox must come
   * from a code-interpreter template (E2B's {@code code-interpreter-v1}, which the local runtime
   * also serves). State persists across runs in one context; one execution at a time runs in a
   * context, later ones wait their turn.
   *
   * @param code the code
   * @param options the context or language, environment, timeout and listeners
   * @return its results, output and error; an error the code raised is returned, not thrown
   * @throws CodeTimeoutException when it ran past its timeout (the kernel is interrupted)
   * @throws UnsupportedOperationException when the sandbox has no code interpreter
   * @throws SandboxException when the code interpreter could not be reached or refused the request
   */
  default CodeExecution runCode(String code, RunCodeOptions options) {
    throw noCodeInterpreter();
  }

  /**
   * Creates a code interpreter context: a new kernel with its own state.
   *
   * @param language the kernel's language; the local runtime serves {@code python}, {@code javascript}
   *     (also {@code js}) and {@code bash}, and refuses others naming what it serves
   * @param cwd its working directory, or {@code null} for the user's home
   * @return the context
   * @throws UnsupportedOperationException when the sandbox has no code interpreter
   */
  default CodeContext createCodeContext(String language, @Nullable String cwd) {
    throw noCodeInterpreter();
  }

  /**
   * Creates a Python code interpreter context in the user's home.
   *
   * @return the context
   */
  default CodeContext createCodeContext() {
    return createCodeContext("python", null);
  }

  /**
   * Lists the code interpreter's contexts, the default ones included.
   *
   * @return the contexts
   * @throws UnsupportedOperationException when the sandbox has no code interpreter
   */
  default java.util.List<CodeContext> listCodeContexts() {
    throw noCodeInterpreter();
  }

  /**
   * Restarts a context's kernel: its state is lost, the context id stays. A context whose kernel
   * died is brought back this way.
   *
   * @param contextId the context's id
   * @throws UnsupportedOperationException when the sandbox has no code interpreter
   */
  default void restartCodeContext(String contextId) {
    throw noCodeInterpreter();
  }

  /**
   * Removes a context, ending its kernel.
   *
   * @param contextId the context's id
   * @throws UnsupportedOperationException when the sandbox has no code interpreter
   */
  default void removeCodeContext(String contextId) {
    throw noCodeInterpreter();
  }

  /**
   * Returns the sandbox's state as its provider knows it now, whichever handle (or other program)
   * paused, resumed or killed it; a sandbox the provider no longer has is
   * {@link SandboxState#KILLED}. Asking may be a remote call.
   *
   * @return the sandbox's state now
   * @throws SandboxException when the provider cannot be asked (never a guess in its place)
   */
  SandboxState status();

  /**
   * Returns the URL of the sandbox's default preview port; see {@link #previewUrl(int)}.
   *
   * @return the URL at which that port is reached from outside
   */
  String previewUrl();

  /**
   * The URL at which a port inside the sandbox is reached from outside. On E2B's cloud that is
   * {@code https://<port>-<id>.<domain>}, computed without a call. On the local runtime reached
   * through {@code Sandboxes.local()} it is {@code http://127.0.0.1:<port>} of a listener the
   * server opens on first request and relays into the sandbox.
   *
   * @param port a port inside the sandbox
   * @return the URL at which that port is reached from outside
   */
  String previewUrl(int port);

  /**
   * Pauses the sandbox, keeping its processes. A sandbox that is already paused is success, and
   * the outcome says so. Until it is resumed, every call into it (commands, files, code) throws
   * {@link SandboxPausedException}, unless it was created to resume by itself when called
   * ({@link SandboxSpec#autoResume()}), in which case the call resumes it.
   *
   * @return what the pause did
   * @throws SandboxException when the pause fails; the status is then unchanged
   */
  HibernationOutcome hibernate();

  /**
   * Resumes a paused sandbox (reconnecting to it); later calls on this handle go to the resumed
   * sandbox.
   *
   * @return what the resume did
   */
  HibernationOutcome resume();

  /**
   * Same as {@link #hibernate()}.
   *
   * @return what the pause did
   */
  default HibernationOutcome sleep() {
    return hibernate();
  }

  /**
   * Same as {@link #hibernate()}: a stop that keeps everything.
   *
   * @return what the pause did
   */
  default HibernationOutcome stop() {
    return hibernate();
  }

  /**
   * Same as {@link #resume()}.
   *
   * @return what the resume did
   */
  default HibernationOutcome wake() {
    return resume();
  }

  /**
   * Same as {@link #resume()}.
   *
   * @return what the resume did
   */
  default HibernationOutcome start() {
    return resume();
  }

  /**
   * Keeps the sandbox alive: its deadline becomes {@code duration} from now.
   *
   * @param duration positive
   */
  void keepAlive(java.time.Duration duration);

  /** Destroys the sandbox. Idempotent; a sandbox already gone is not an error. */
  @Override
  void close();

  private UnsupportedOperationException noCodeInterpreter() {
    return new UnsupportedOperationException("this sandbox (" + getClass().getSimpleName() + ") has no code interpreter");
  }
}
