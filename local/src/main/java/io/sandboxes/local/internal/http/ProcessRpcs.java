package io.sandboxes.local.internal.http;

import static io.sandboxes.local.internal.http.EnvdCalls.keepalive;
import static io.sandboxes.local.internal.http.EnvdCalls.reply;
import static io.sandboxes.local.internal.http.EnvdCalls.streamError;
import static io.sandboxes.local.internal.http.EnvdCalls.streamRequest;
import static io.sandboxes.local.internal.http.EnvdCalls.timeoutHeader;
import static io.sandboxes.local.internal.http.EnvdCalls.unaryRequest;
import static io.sandboxes.local.internal.http.EnvdCalls.user;
import static io.sandboxes.local.internal.http.EnvdCalls.writeMessage;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.annotation.JsonDeserialize;
import io.sandboxes.e2b.internal.Connect;
import io.sandboxes.local.internal.LocalSandbox;
import io.sandboxes.local.internal.common.RpcError;
import io.sandboxes.local.internal.SandboxProcess;
import io.sandboxes.local.internal.TemplateBuilds;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * envd's {@code process.Process} calls: start and connect (streamed: the process's events until
 * it ends), list, input, signals, closing stdin and resizing a PTY.
 */
final class ProcessRpcs {
  /** Where a built template's default user and working directory for its processes come from. */
  private final Supplier<Function<String, Optional<TemplateBuilds.Defaults>>> templateDefaults;

  ProcessRpcs(Supplier<Function<String, Optional<TemplateBuilds.Defaults>>> templateDefaults) {
    this.templateDefaults = templateDefaults;
  }

  /** {@code List}'s answer. */
  record Processes(List<Info> processes) {}

  /** One running process: how it was started, its pid and its tag. */
  record Info(Config config, int pid, @Nullable String tag) {}

  /** The command a process runs. */
  record Config(String cmd, List<String> args, Map<String, String> envs, @Nullable String cwd) {}

  /** A message of Start's and Connect's stream: one event. */
  record EventMessage(Event event) {
    static final EventMessage KEEPALIVE = new EventMessage(new Event(null, EnvdCalls.Nothing.NOTHING, null));
  }

  /** A process's event other than its output (written without a tree, see {@link #writeData}): exactly one part is there. */
  record Event(@Nullable Started start, EnvdCalls.@Nullable Nothing keepalive, @Nullable Ended end) {}

  /** The process started. */
  record Started(int pid) {}

  /**
   * The process ended: its exit code left out when 0, {@code exited} when false, as protobuf's
   * JSON leaves out a default value.
   */
  record Ended(@JsonInclude(JsonInclude.Include.NON_DEFAULT) int exitCode, @JsonInclude(JsonInclude.Include.NON_DEFAULT) boolean exited,
      String status, @Nullable String error) {}

  /**
   * {@code Start}'s request: the process, its tag, a PTY (any value but null asks for one) and
   * whether it takes stdin. Every field is read leniently, as it always was.
   */
  record StartBody(@JsonDeserialize(using = Lenient.Part.class) @Nullable Process process,
      @JsonDeserialize(using = Lenient.Text.class) @Nullable String tag,
      @JsonDeserialize(using = Lenient.Part.class) @Nullable Pty pty, Lenient.@Nullable Flag stdin) {

    /** The command: its texts read as text, its arguments a list's (or an object's) values. */
    record Process(@JsonDeserialize(using = Lenient.Text.class) @Nullable String cmd,
        @JsonDeserialize(using = Lenient.Texts.class) @Nullable List<String> args,
        @JsonDeserialize(using = Lenient.TextMap.class) @Nullable Map<String, String> envs,
        @JsonDeserialize(using = Lenient.Text.class) @Nullable String cwd) {
      static final Process NONE = new Process(null, null, null, null);
    }

    /** A PTY's request. */
    record Pty(@JsonDeserialize(using = Lenient.Part.class) @Nullable Size size) {}

    /** A PTY's size, 0 where not given as a number. */
    record Size(@JsonDeserialize(using = Lenient.Int.class) @Nullable Integer cols,
        @JsonDeserialize(using = Lenient.Int.class) @Nullable Integer rows) {
      static final Size NONE = new Size(0, 0);

      Size {
        cols = cols == null ? 0 : cols;
        rows = rows == null ? 0 : rows;
      }
    }
  }

  void routes(Map<String, EnvdCalls.Call> t) {
    t.put("/process.Process/Start", this::start);
    t.put("/process.Process/Connect", ProcessRpcs::connect);
    t.put("/process.Process/List", ProcessRpcs::list);
    t.put("/process.Process/SendInput", ProcessRpcs::sendInput);
    t.put("/process.Process/SendSignal", ProcessRpcs::sendSignal);
    t.put("/process.Process/CloseStdin", ProcessRpcs::closeStdin);
    t.put("/process.Process/Update", ProcessRpcs::update);
  }

  private void start(Exchange ex, LocalSandbox sandbox) throws RpcError, IOException {
    StartBody req = RequestBody.bind(streamRequest(ex), StartBody.class);
    String user = user(ex);
    Duration timeout = timeoutHeader(ex);
    StartBody.Process process = req.process() == null ? StartBody.Process.NONE : req.process();
    // a built template's USER and WORKDIR are its processes' defaults, as on E2B
    Optional<TemplateBuilds.Defaults> defaults = templateDefaults.get().apply(sandbox.templateId());
    String cwd = process.cwd();
    if (defaults.isPresent()) {
      if (ex.header("Authorization") == null || ex.header("Authorization").isBlank()) {
        user = defaults.get().user();
      }
      if (cwd == null || cwd.isEmpty()) {
        cwd = defaults.get().workdir();
      }
    }
    String cmd = process.cmd();
    if (cmd == null || cmd.isEmpty()) {
      streamError(ex, new RpcError("invalid_argument", "'process.cmd' is required"));
      return;
    }
    List<String> args = process.args() == null ? List.of() : process.args();
    Map<String, String> envs = new LinkedHashMap<>(sandbox.envVars());
    if (process.envs() != null) {
      envs.putAll(process.envs());
    }
    StartBody.Pty pty = req.pty();
    StartBody.Size size = pty == null || pty.size() == null ? StartBody.Size.NONE : pty.size();
    boolean stdin = Lenient.Flag.or(req.stdin(), true);
    LocalSandbox.StartSpec spec = new LocalSandbox.StartSpec(user, cmd, args, envs, cwd,
        req.tag(), pty != null, size.cols(), size.rows(), stdin, timeout);
    SandboxProcess.Subscriber[] sub = new SandboxProcess.Subscriber[1];
    SandboxProcess p;
    try {
      p = sandbox.start(spec, sub);
    } catch (RpcError e) {
      streamError(ex, e);
      return;
    }
    follow(ex, p, sub[0], keepalive(ex));
  }

  private static void connect(Exchange ex, LocalSandbox sandbox) throws RpcError, IOException {
    JsonNode req = streamRequest(ex);
    SandboxProcess p;
    try {
      p = select(sandbox, RequestBody.bind(req, ProcessBodies.SelectBody.class).process());
    } catch (RpcError e) {
      streamError(ex, e);
      return;
    }
    follow(ex, p, p.subscribe(), keepalive(ex));
  }

  /** The process a selector names: by pid, else by tag. */
  private static SandboxProcess select(LocalSandbox sandbox, ProcessBodies.@Nullable Selector selector) throws RpcError {
    Integer pid = selector == null ? null : selector.pid();
    if (pid != null) {
      SandboxProcess p = sandbox.process(pid);
      if (p == null) {
        throw new RpcError("not_found", "process with pid " + pid + " not found");
      }
      return p;
    }
    String tag = selector == null ? null : selector.tag();
    if (tag != null) {
      SandboxProcess p = sandbox.processByTag(tag);
      if (p == null) {
        throw new RpcError("not_found", "process with tag " + tag + " not found");
      }
      return p;
    }
    throw new RpcError("invalid_argument", "the process selector needs a pid or a tag");
  }

  /** Streams a process's events to the client until it ends, the deadline fails it, or the client leaves. */
  private static void follow(Exchange ex, SandboxProcess p, SandboxProcess.Subscriber sub, Duration keepalive) {
    OutputStream out = ex.stream(200, Connect.STREAM_CONTENT_TYPE);
    try {
      writeMessage(out, new EventMessage(new Event(new Started(p.pid()), null, null)));
      while (true) {
        SandboxProcess.Event e = sub.poll(keepalive.toMillis(), TimeUnit.MILLISECONDS);
        if (e == null) {
          writeMessage(out, EventMessage.KEEPALIVE);
          continue;
        }
        switch (e) {
          case SandboxProcess.Data d -> {
            writeData(out, d.stream(), d.buf(), d.off(), d.len());
            out.flush();
          }
          case SandboxProcess.End end -> {
            EnvdCalls.endStream(ex, EnvdCalls.Nothing.NOTHING,
                new EventMessage(new Event(null, null, new Ended(end.exitCode(), end.exited(), end.status(), end.error()))));
            return;
          }
          case SandboxProcess.Severed s -> {
            p.unsubscribe(sub);
            ex.abort(new IOException(s.why()));
            return;
          }
          case SandboxProcess.Failure f -> {
            EnvdCalls.endStream(ex, new EnvdCalls.ErrorEnd(f.code(), f.message()));
            return;
          }
        }
      }
    } catch (IOException e) {
      // the client went away; the process goes on, as envd's do
      p.unsubscribe(sub);
      ex.abort(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      p.unsubscribe(sub);
      ex.abort(e);
    }
  }

  private static final byte[] STDOUT_HEAD = "{\"event\":{\"data\":{\"stdout\":\"".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] STDERR_HEAD = "{\"event\":{\"data\":{\"stderr\":\"".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] PTY_HEAD = "{\"event\":{\"data\":{\"pty\":\"".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] DATA_TAIL = "\"}}}".getBytes(StandardCharsets.US_ASCII);

  /**
   * The most output bytes one data message carries (a multiple of 3, so only a message's last
   * base64 group is ever padded). The official JS SDK puts a message together from the reads it
   * arrives in by copying what it holds so far at each read, so a message of the daemon's largest
   * chunk (256 KiB, 350 KB of base64) cost it several copies of itself: 50 MB of stdout read at
   * 0.91-0.93x its own ceiling (a fake envd sending 32 KiB messages), at 0.97-0.99x in messages of
   * this size. The Java client reads both alike.
   */
  static final int DATA_MESSAGE_BYTES = 32 * 1024 - 2;

  /**
   * One output chunk as whole Connect envelopes of at most {@link #DATA_MESSAGE_BYTES} each,
   * written at once: the JSON is fixed text around the base64 (which needs no escaping), so no
   * JSON tree is built per chunk. One write is one HTTP chunk and one send: written in parts, a
   * client could be woken for each.
   */
  static void writeData(OutputStream out, SandboxProcess.Stream stream, byte[] buf, int off, int len) throws IOException {
    byte[] head = stream == SandboxProcess.Stream.STDERR ? STDERR_HEAD : stream == SandboxProcess.Stream.PTY ? PTY_HEAD : STDOUT_HEAD;
    int pieces = Math.max(1, (len + DATA_MESSAGE_BYTES - 1) / DATA_MESSAGE_BYTES);
    int frame = 5 + head.length + DATA_TAIL.length;
    // base64 takes 4 bytes for every 3 begun; every piece but the last is a multiple of 3
    byte[] messages = new byte[pieces * frame + (len / 3) * 4 + (len % 3 == 0 ? 0 : 4)];
    int at = 0;
    for (int done = 0; done < len || at == 0; done += DATA_MESSAGE_BYTES) {
      ByteBuffer encoded = Base64.getEncoder().encode(ByteBuffer.wrap(buf, off + done, Math.min(DATA_MESSAGE_BYTES, len - done)));
      int b64 = encoded.remaining();
      int msgLen = head.length + b64 + DATA_TAIL.length;
      messages[at + 1] = (byte) (msgLen >>> 24);
      messages[at + 2] = (byte) (msgLen >>> 16);
      messages[at + 3] = (byte) (msgLen >>> 8);
      messages[at + 4] = (byte) msgLen;
      System.arraycopy(head, 0, messages, at + 5, head.length);
      encoded.get(messages, at + 5 + head.length, b64);
      System.arraycopy(DATA_TAIL, 0, messages, at + 5 + head.length + b64, DATA_TAIL.length);
      at += 5 + msgLen;
    }
    out.write(messages, 0, at);
  }

  private static void list(Exchange ex, LocalSandbox sandbox) throws RpcError, IOException {
    unaryRequest(ex);
    List<Info> out = new ArrayList<>();
    for (SandboxProcess p : sandbox.running()) {
      out.add(new Info(new Config(p.cmd(), p.args(), p.envs(), p.cwd()), p.pid(), p.tag()));
    }
    reply(ex, new Processes(out));
  }

  private static SandboxProcess running(LocalSandbox sandbox, ProcessBodies.@Nullable Selector selector) throws RpcError {
    SandboxProcess p = select(sandbox, selector);
    if (p.end() != null) {
      throw new RpcError("not_found", "process with pid " + p.pid() + " has exited");
    }
    return p;
  }

  private static void sendInput(Exchange ex, LocalSandbox sandbox) throws RpcError, IOException {
    ProcessBodies.SendInputBody req = RequestBody.bind(unaryRequest(ex), ProcessBodies.SendInputBody.class);
    SandboxProcess p = running(sandbox, req.process());
    byte[] data = req.bytes();
    try {
      p.writeInput(data);
    } catch (IOException e) {
      throw new RpcError("failed_precondition", "stdin of process " + p.pid() + " is closed");
    }
    reply(ex, EnvdCalls.Nothing.NOTHING);
  }

  private static void sendSignal(Exchange ex, LocalSandbox sandbox) throws RpcError, IOException {
    ProcessBodies.SendSignalBody req = RequestBody.bind(unaryRequest(ex), ProcessBodies.SendSignalBody.class);
    SandboxProcess p = running(sandbox, req.process());
    ProcessBodies.Signal sig = req.signal() == null ? ProcessBodies.Signal.NONE : req.signal();
    int signal = switch (sig.key()) {
      case "SIGNAL_SIGKILL", "9" -> 9;
      case "SIGNAL_SIGTERM", "15" -> 15;
      default -> throw new RpcError("invalid_argument", "unsupported signal " + sig.written());
    };
    sandbox.signal(p, signal);
    reply(ex, EnvdCalls.Nothing.NOTHING);
  }

  private static void closeStdin(Exchange ex, LocalSandbox sandbox) throws RpcError, IOException {
    ProcessBodies.SelectBody req = RequestBody.bind(unaryRequest(ex), ProcessBodies.SelectBody.class);
    SandboxProcess p = running(sandbox, req.process());
    if (p.pty()) {
      throw new RpcError("failed_precondition", "a PTY has no stdin to close; send Ctrl-D (0x04) as input instead");
    }
    p.closeInput();
    reply(ex, EnvdCalls.Nothing.NOTHING);
  }

  private static void update(Exchange ex, LocalSandbox sandbox) throws RpcError, IOException {
    ProcessBodies.UpdateBody req = RequestBody.bind(unaryRequest(ex), ProcessBodies.UpdateBody.class);
    SandboxProcess p = running(sandbox, req.process());
    StartBody.Pty pty = req.pty();
    StartBody.Size size = pty == null || pty.size() == null ? StartBody.Size.NONE : pty.size();
    if (!p.pty()) {
      throw new RpcError("failed_precondition", "process " + p.pid() + " has no PTY to resize");
    }
    if (size.cols() < 1 || size.rows() < 1) {
      throw new RpcError("invalid_argument", "pty.size needs cols and rows of at least 1");
    }
    sandbox.resize(p, size.cols(), size.rows());
    reply(ex, EnvdCalls.Nothing.NOTHING);
  }
}
