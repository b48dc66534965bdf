package io.sandboxes.e2b;

import io.sandboxes.CommandTimeoutException;
import io.sandboxes.DirEntry;
import io.sandboxes.ExecOptions;
import io.sandboxes.ExecResult;
import io.sandboxes.HibernationOutcome;
import io.sandboxes.Sandbox;
import io.sandboxes.SandboxException;
import io.sandboxes.SandboxInfo;
import io.sandboxes.SandboxState;
import io.sandboxes.e2b.internal.Envd;
import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;

/**
 * A live E2B sandbox. Commands and files go to the sandbox's daemon (envd); lifecycle calls go to
 * the control plane. {@link #close()} kills the sandbox.
 *
 * <p>Thread-safe: several commands may run at once on one handle.
 *
 * @since 0.1
 */
public final class LiveSandbox implements Sandbox {

  /** The exit code reported when a command's outcome cannot be observed: 128 + SIGKILL, never 0. */
  public static final int EXIT_CODE_UNKNOWN = 137;

  private final E2BApi api;
  private final String id;
  private final @Nullable String templateId;
  private final @Nullable String envdVersion;
  private final String previewDomain;
  private volatile Envd envd;
  /** The traffic token as the create or connect answer gave it; {@link #NOT_TOLD} for a handle from a listing. */
  private volatile @Nullable String trafficAccessToken;
  /** Set once this handle has killed its sandbox: a killed sandbox never comes back, so nothing need be asked. */
  private volatile boolean killed;
  private final AtomicBoolean closed = new AtomicBoolean();

  /** Marks a handle made without a create or connect answer, which alone carries the traffic token. */
  static final String NOT_TOLD = new String("not told");

  LiveSandbox(E2BApi api, String id, @Nullable String templateId, @Nullable String envdVersion, Envd envd, String previewDomain,
      @Nullable String trafficAccessToken) {
    this.api = api;
    this.trafficAccessToken = trafficAccessToken;
    this.id = id;
    this.templateId = templateId;
    this.envdVersion = envdVersion;
    this.envd = envd;
    this.previewDomain = previewDomain;
  }

  @Override
  public String id() {
    return id;
  }

  /**
   * The sandbox's processes, as E2B's {@code sandbox.commands}: run a command in the foreground or
   * the background, list what runs, reattach to a process by pid (from this JVM or a later one),
   * write to it, close its input, kill it.
   *
   * @return the commands of this sandbox
   */
  public Commands commands() {
    return new Commands(this);
  }

  /**
   * The sandbox's terminals, as E2B's {@code sandbox.pty}: start a shell on a terminal, and type
   * into, resize, attach to or kill any terminal by its pid.
   *
   * @return the terminals of this sandbox
   */
  public Pty pty() {
    return new Pty(this);
  }

  /**
   * The sandbox's network, as E2B's {@code sandbox.updateNetwork} and {@code getInfo().network}:
   * replace the egress policy of the running sandbox, or read it.
   *
   * @return the network of this sandbox
   */
  public Network network() {
    return new Network(this);
  }

  /**
   * The sandbox's file system, as E2B's {@code sandbox.files}: read and write files whole or as
   * streams, several at once, list to a depth, make folders, rename, remove, ask what a path is,
   * watch a folder, each as any user of the sandbox.
   *
   * @return the file system of this sandbox
   */
  public Filesystem files() {
    return new Filesystem(this);
  }

  /**
   * Git in the sandbox, as E2B's {@code sandbox.git}: clone, branch, stage, commit, push and pull,
   * read a repository's status, and read and write git's configuration, with credentials kept off
   * disk unless asked.
   *
   * @return git for this sandbox
   */
  public Git git() {
    return new Git(this);
  }

  /**
   * The domain the sandbox is reached under, as E2B's {@code sandbox.sandboxDomain}: the one the
   * server named for it, else the client's.
   *
   * @return the domain, e.g. {@code e2b.app}
   */
  public String sandboxDomain() {
    return previewDomain;
  }

  /**
   * The token a request to one of the sandbox's ports must carry in the
   * {@code e2b-traffic-access-token} header when the sandbox was created with
   * {@code SandboxNetwork#withAllowPublicTraffic(false)}, as E2B's {@code sandbox.trafficAccessToken}.
   *
   * @return the token, or null when the server gave none (the ports are public)
   * @throws IllegalStateException when this handle came from a listing, which does not carry the
   *     token: connect to the sandbox ({@link E2BApi#connect(String)}) for a handle that has it
   */
  public @Nullable String trafficAccessToken() {
    String token = trafficAccessToken;
    if (token == NOT_TOLD) {
      throw new IllegalStateException("the handle of sandbox " + id + " comes from a listing, which does not carry its "
          + "traffic access token; connect to it for a handle that has it");
    }
    return token;
  }

  /**
   * Returns the template the sandbox was created from.
   *
   * @return the template's id, or {@code null} when the server did not say
   */
  public @Nullable String templateId() {
    return templateId;
  }

  /**
   * Returns the version of the sandbox's daemon (envd).
   *
   * @return the version, or {@code null} when the server did not say
   */
  public @Nullable String envdVersion() {
    return envdVersion;
  }

  /**
   * {@inheritDoc}
   *
   * <p>The sandbox must come from a code-interpreter template ({@code code-interpreter-v1} on E2B
   * and on the local runtime). Output and results reach the listeners as each event arrives; a
   * timeout closes the stream, which makes the code interpreter interrupt the kernel.
   */
  @Override
  public io.sandboxes.CodeExecution runCode(String code, io.sandboxes.RunCodeOptions options) {
    Objects.requireNonNull(code, "code");
    Objects.requireNonNull(options, "options");
    return envd.codeInterpreter().run(code, options);
  }

  @Override
  public io.sandboxes.CodeContext createCodeContext(String language, @Nullable String cwd) {
    return envd.codeInterpreter().create(Objects.requireNonNull(language, "language"), cwd);
  }

  @Override
  public List<io.sandboxes.CodeContext> listCodeContexts() {
    return envd.codeInterpreter().list();
  }

  @Override
  public void restartCodeContext(String contextId) {
    envd.codeInterpreter().restart(Objects.requireNonNull(contextId, "contextId"));
  }

  @Override
  public void removeCodeContext(String contextId) {
    envd.codeInterpreter().remove(Objects.requireNonNull(contextId, "contextId"));
  }

  /**
   * {@inheritDoc}
   *
   * <p>Asks the control plane ({@code GET /sandboxes/{id}}, which wakes nothing), so the answer is
   * the sandbox's state now, whoever paused, resumed or killed it: a sandbox the server no longer
   * has is {@link SandboxState#KILLED}. Once this handle has killed its sandbox it answers
   * {@code KILLED} without asking.
   *
   * @throws SandboxException when the control plane cannot be asked; never a guess
   */
  @Override
  public SandboxState status() {
    if (killed) {
      return SandboxState.KILLED;
    }
    try {
      return api.info(id).state();
    } catch (io.sandboxes.SandboxNotFoundException gone) {
      return SandboxState.KILLED;
    }
  }

  @Override
  public String previewUrl() {
    return previewUrl(api.provider().settings.defaultPreviewPort());
  }

  @Override
  public String previewUrl(int port) {
    return FileUrls.preview(id, port, api.provider().settings.previewUrls(), previewDomain);
  }

  /**
   * {@inheritDoc}
   *
   * <p>The command runs as {@code /bin/bash -l -c <command>}, started in the background and
   * waited on. Its deadline is sent to the daemon, which kills it when it passes; that surfaces
   * as a {@link CommandTimeoutException} carrying the output written before the kill. Output
   * callbacks ({@link ExecOptions#onStdout(java.util.function.Consumer)}) see each piece as it
   * arrives; one that throws kills the command, and its exception is thrown from here.
   *
   * <p>A command that has not finished after 1.5 s is checked: while its process
   * lives, the wait goes on (bounded only by the command's own deadline). When the process is
   * gone and its stream then stays silent for 2 s without an exit report (a
   * detached child holds its output open), the result is exit code {@link #EXIT_CODE_UNKNOWN} with a line on stderr
   * saying why: an outcome that was not observed is never reported as success. An exit report
   * whose {@code exitCode} is not an int ({@code {}}, {@code "abc"}, {@code 4294967296}) is reported
   * the same way, never as 0. A failed check
   * counts as "still alive". Nothing (thread, timer, stream) outlives the call; an interrupt
   * cancels it.
   */
  @Override
  public ExecResult exec(String command, ExecOptions options) {
    return Processes.exec(this, command, options);
  }

  /** The lifetime of a spawned process unless the options give one: one hour. */
  public static final Duration DEFAULT_SPAWN_TIMEOUT = Duration.ofHours(1);

  /**
   * {@inheritDoc}
   *
   * <p>Pipes run {@code /bin/bash -l -c <command>} with stdin open. A PTY runs the interactive
   * login shell ({@code /bin/bash -i -l}) with {@code TERM=xterm-256color} and a UTF-8 locale;
   * a command other than a shell name runs inside it ({@code -c}). A server that cannot give a
   * PTY makes this throw; it never falls back to pipes.
   */
  @Override
  public io.sandboxes.SpawnHandle spawn(String command, io.sandboxes.SpawnOptions options) {
    return Processes.spawn(this, command, options);
  }

  /**
   * {@inheritDoc}
   *
   * <p>The archive is written to {@code /tmp/mol-import-<id>.tar} through the file API in pieces of
   * {@value TarTransfer#IMPORT_PIECE_BYTES} bytes, then extracted with {@code tar xf ...
   * --no-same-owner --no-same-permissions} (300 s deadline); the spool files are removed last on
   * every path. A step that exits non-zero fails as {@code importFiles: <step> failed (<code>):
   * <stderr>}; a failure to run a step at all is thrown as it is.
   */
  @Override
  public void importFiles(String path, java.io.InputStream tar) {
    TarTransfer.importFiles(this, Objects.requireNonNull(path, "path"), Objects.requireNonNull(tar, "tar"));
  }

  /**
   * {@inheritDoc}
   *
   * <p>Runs {@code tar cf /tmp/mol-export-<id>.tar -C <parent> <name>}, reads the archive's
   * exact bytes through the file API, and removes it last on every path. The root and relative
   * paths are refused before anything runs.
   */
  @Override
  public java.io.InputStream exportFiles(String path) {
    return TarTransfer.exportFiles(this, Objects.requireNonNull(path, "path"));
  }

  /**
   * {@inheritDoc}
   *
   * <p>Through {@link #files()}: one raw upload to envd's {@code /files}.
   */
  @Override
  public void writeBytes(String path, byte[] content) {
    files().putBytes(Objects.requireNonNull(path, "path"), Objects.requireNonNull(content, "content"), FileOptions.defaults());
  }

  @Override
  public byte[] readBytes(String path) {
    return files().readBytes(Objects.requireNonNull(path, "path"));
  }

  @Override
  public void deleteFile(String path) {
    files().remove(Objects.requireNonNull(path, "path"));
  }

  /**
   * {@inheritDoc}
   *
   * <p>Lists through envd's {@code ListDir} ({@link Filesystem#list(String)}) rather than parsing
   * {@code ls}: names come back exactly (runs of spaces included), sizes as numbers, and a symlink,
   * to a file or a folder, as {@link DirEntry.Type#SYMLINK} with its resolved target.
   */
  @Override
  public List<DirEntry> readDir(String path) {
    return SandboxHandles.dirEntries(files().list(Objects.requireNonNull(path, "path")));
  }

  /**
   * {@inheritDoc}
   *
   * <p>{@link Filesystem#watchDir} on the whole tree, without a deadline; the returned handle
   * stops the watch and waits for its thread.
   */
  @Override
  public io.sandboxes.Subscription onFileChange(String path, java.util.function.Consumer<io.sandboxes.FileChange> listener) {
    Objects.requireNonNull(listener, "listener");
    return files().watchDir(Objects.requireNonNull(path, "path"), e -> listener.accept(new io.sandboxes.FileChange(e.name(), e.type())),
        WatchOptions.defaults().withRecursive(true).withTimeout(Duration.ZERO));
  }

  @Override
  public HibernationOutcome hibernate() {
    boolean pausedNow = api.pause(id, true);
    return new HibernationOutcome(true, "pause", pausedNow ? null : "the sandbox was already paused");
  }

  @Override
  public HibernationOutcome resume() {
    LiveSandbox fresh = api.connect(id, api.provider().settings.defaultTimeout());
    this.envd = fresh.envd;
    this.trafficAccessToken = fresh.trafficAccessToken;
    return new HibernationOutcome(true, "resume", null);
  }

  @Override
  public void keepAlive(Duration duration) {
    api.setTimeout(id, duration);
  }

  /**
   * Asks the control plane about this sandbox now, without connecting to it.
   *
   * @return what the control plane says about this sandbox now
   */
  public SandboxInfo info() {
    return api.info(id);
  }

  /**
   * Sets the sandbox to end {@code timeout} from now.
   *
   * @param timeout positive
   */
  public void setTimeout(Duration timeout) {
    api.setTimeout(id, timeout);
  }

  /**
   * Reads this sandbox's resource-use samples over its life so far.
   *
   * @return the samples, oldest first
   * @throws io.sandboxes.SandboxNotFoundException when this sandbox is gone
   * @see E2BApi#metrics(String, Instant, Instant)
   */
  public List<SandboxMetrics> metrics() {
    return api.metrics(id, null, null);
  }

  /**
   * Reads this sandbox's resource-use samples taken between two moments, as E2B's
   * {@code sandbox.getMetrics({start, end})}.
   *
   * @param start the earliest sample wanted, or null for the sandbox's start
   * @param end the latest sample wanted, or null for now
   * @return the samples in the range, oldest first
   * @throws IllegalArgumentException when {@code start} is after {@code end}
   * @throws io.sandboxes.SandboxNotFoundException when this sandbox is gone
   * @see E2BApi#metrics(String, Instant, Instant)
   */
  public List<SandboxMetrics> metrics(@Nullable Instant start, @Nullable Instant end) {
    return api.metrics(id, start, end);
  }

  /**
   * A URL that downloads a file of this sandbox with a plain GET, no headers needed, as E2B's
   * {@code sandbox.downloadUrl(path)}: signed with this sandbox's access token, without
   * expiring.
   *
   * @param path the file's path in the sandbox, exactly as it will be read
   * @return the URL
   * @see #downloadUrl(String, String, Duration)
   */
  public URI downloadUrl(String path) {
    return downloadUrl(path, null, null);
  }

  /**
   * A URL that downloads a file of this sandbox with a plain GET, as E2B's
   * {@code sandbox.downloadUrl(path, {user, useSignatureExpiration})}. A secured sandbox's URL is
   * signed ({@code signature} and, with an expiry, {@code signature_expiration} in the query);
   * after the expiry the daemon answers 401 "signature is already expired". The signature is
   * computed here, from the token the client holds: nothing is sent.
   *
   * @param path the file's path in the sandbox, exactly as it will be read
   * @param user the user the file is read as, or null for the sandbox's default user
   * @param expiresIn how long the URL works from now (whole seconds, rounded down), or null for a
   *     URL that does not expire
   * @return the URL
   * @throws IllegalStateException when an expiry is asked of a sandbox that is not secured (it has
   *     no token to sign with), as E2B's SDK refuses it
   * @throws IllegalArgumentException when {@code expiresIn} is not positive
   */
  public URI downloadUrl(String path, @Nullable String user, @Nullable Duration expiresIn) {
    java.util.Objects.requireNonNull(path, "path");
    return FileUrls.of(this, path, "read", user, expiresIn);
  }

  /**
   * A URL that uploads to this sandbox with a plain multipart POST, no headers needed, as E2B's
   * {@code sandbox.uploadUrl(path)}: signed, without expiring.
   *
   * @param path where the upload is written, or null to take each part's file name as its path
   * @return the URL
   * @see #uploadUrl(String, String, Duration)
   */
  public URI uploadUrl(@Nullable String path) {
    return uploadUrl(path, null, null);
  }

  /**
   * A URL that uploads to this sandbox with a plain multipart POST, as E2B's
   * {@code sandbox.uploadUrl(path, {user, useSignatureExpiration})}; signed as
   * {@link #downloadUrl(String, String, Duration)} is, for writing.
   *
   * @param path where the upload is written, or null to take each part's file name as its path
   *     (the signature then covers the empty path)
   * @param user the user the file is written as, or null for the sandbox's default user
   * @param expiresIn how long the URL works from now (whole seconds, rounded down), or null for a
   *     URL that does not expire
   * @return the URL
   * @throws IllegalStateException when an expiry is asked of a sandbox that is not secured
   * @throws IllegalArgumentException when {@code expiresIn} is not positive
   */
  public URI uploadUrl(@Nullable String path, @Nullable String user, @Nullable Duration expiresIn) {
    return FileUrls.of(this, path == null ? "" : path, "write", user, expiresIn);
  }

  /**
   * Captures this sandbox's filesystem as a snapshot, usable as a template id; the sandbox keeps
   * running. Re-using a name replaces that snapshot.
   *
   * @param name the snapshot's name, or null for a generated one
   * @return the snapshot, whose id is a template id
   */
  public SnapshotInfo snapshot(@Nullable String name) {
    return api.createSnapshot(id, name);
  }

  /**
   * Lists the snapshots taken of this sandbox, every page, as E2B's {@code sandbox.listSnapshots()}.
   *
   * @return the snapshots, in the server's order
   * @see E2BApi#listSnapshots(String, String)
   */
  public List<SnapshotInfo> listSnapshots() {
    return api.listSnapshots(id, null);
  }

  /**
   * Reads one page of the snapshots taken of this sandbox, as E2B's {@code sandbox.listSnapshots(opts)}.
   *
   * @param query the name, page size and page token; its sandbox is this one whatever it says
   * @return the page, with the token of the next one when there is more
   */
  public SnapshotPage listSnapshots(SnapshotQuery query) {
    return api.listSnapshots(query.withSandboxId(id));
  }

  /**
   * Forks this sandbox once: a new sandbox that starts from this one's state now and diverges
   * from then on, while this one keeps running untouched.
   *
   * @param timeout how long the fork lives from now, positive
   * @return the fork; close it to kill it
   * @throws io.sandboxes.SandboxNotFoundException when this sandbox is gone
   * @throws io.sandboxes.SandboxApiException when the fork could not be made or did not start
   * @see E2BApi#fork(String, int, Duration) what a fork keeps of its parent
   */
  public LiveSandbox fork(Duration timeout) {
    return SandboxHandles.onlyFork(api.fork(id, 1, timeout), id);
  }

  /**
   * Forks this sandbox {@code count} times, the forks succeeding or failing independently.
   *
   * @param count how many forks, 1 to 100
   * @param timeout how long each fork lives from now, positive
   * @return one result per requested fork, in order
   * @throws io.sandboxes.SandboxNotFoundException when this sandbox is gone
   * @see E2BApi#fork(String, int, Duration)
   */
  public List<ForkResult> fork(int count, Duration timeout) {
    return api.fork(id, count, timeout);
  }

  /**
   * Pauses the sandbox, keeping its memory and processes. {@link E2BApi#connect} resumes it;
   * until then its daemon does not answer.
   *
   * @return true when it is paused now, false when it already was
   */
  public boolean pause() {
    return api.pause(id, true);
  }

  /**
   * Pauses the sandbox, as E2B's {@code sandbox.pause({keepMemory})}.
   *
   * @param keepMemory true to keep its memory and processes (they carry on after a resume), false
   *     to keep only its filesystem (a resume boots it afresh)
   * @return true when it is paused now, false when it already was
   */
  public boolean pause(boolean keepMemory) {
    return api.pause(id, keepMemory);
  }

  /**
   * Connects this handle again, as E2B's {@code sandbox.connect({timeoutMs, onResume})}: a paused
   * sandbox is resumed as {@code onResume} says and lives {@code timeout} from now; a running one's
   * deadline only moves later. Calls through this handle then reach the resumed sandbox.
   *
   * @param timeout how long it should live from now at least, positive
   * @param onResume from memory ({@link OnResume#RESTORE}) or a cold boot ({@link OnResume#REBOOT})
   * @throws io.sandboxes.SandboxApiException when the server refuses that resume; it never resumes
   *     another way instead
   */
  public void connect(Duration timeout, OnResume onResume) {
    LiveSandbox fresh = api.connect(id, timeout, onResume);
    this.envd = fresh.envd;
    this.trafficAccessToken = fresh.trafficAccessToken;
  }

  /**
   * Kills the sandbox now.
   *
   * @return true when it was killed, false when it was already gone
   */
  public boolean kill() {
    closed.set(true);
    boolean wasThere = api.kill(id);
    killed = true;
    return wasThere;
  }

  /** Kills the sandbox; a sandbox already gone is not an error. Idempotent. */
  @Override
  public void close() {
    if (closed.compareAndSet(false, true)) {
      api.kill(id);
      killed = true;
    }
  }

  Envd envd() {
    return envd;
  }

  String previewDomain() {
    return previewDomain;
  }

  E2BApi api() {
    return api;
  }

  @Override
  public String toString() {
    return "LiveSandbox[" + id + "]";
  }
}
