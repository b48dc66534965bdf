package io.sandboxes.local.internal;

import com.fasterxml.jackson.databind.JsonNode;
import io.sandboxes.e2b.internal.Json;
import io.sandboxes.local.internal.common.RpcError;
import io.sandboxes.local.internal.daemon.DaemonProcess;
import io.sandboxes.local.internal.daemon.ProcessEvent;
import io.sandboxes.local.internal.daemon.ProcessSpec;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * A volume's files without a sandbox, as E2B's volume content API serves them: each operation is
 * one run of a small Python program ({@code volume_content.py}) as root in the volume's helper
 * ({@link VolumeWorkers}), which resolves every path there, under the volume's mount; file
 * contents stream through the run's stdin and stdout, never held whole in the server.
 */
public final class VolumeContent {
  private static final String SCRIPT = script();
  private static final int CHUNK = 256 * 1024;
  private static final int ERR_KEPT = 64 * 1024;

  /** An operation the API refused, with E2B's status for it. */
  public static final class Refused extends Exception {
    private final int status;

    Refused(int status, String message) {
      super(message);
      this.status = status;
    }

    public int status() {
      return status;
    }
  }

  private final VolumeWorkers workers;

  public VolumeContent(VolumeWorkers workers) {
    this.workers = workers;
  }

  /** Stops the volume's helper, if it has one. */
  public void release(String volumeId) {
    workers.release(volumeId);
  }

  /**
   * Runs a metadata operation ({@code stat}, {@code list}, {@code mkdir}, {@code update},
   * {@code delete}) or a write (with {@code content}), answering what the program printed.
   *
   * @param opts its options, {@code key=value}
   */
  public JsonNode call(String volumeId, String op, String path, Map<String, String> opts, @Nullable InputStream content)
      throws RpcError, IOException, Refused {
    Result r = workers.with(volumeId, daemon -> {
      try (DaemonProcess p = daemon.start(spec(op, path, opts, content != null))) {
        IOException stdinFailed = null;
        if (content != null) {
          try {
            byte[] buf = new byte[CHUNK];
            int n;
            while ((n = content.read(buf)) > 0) {
              p.writeStdin(java.util.Arrays.copyOf(buf, n));
            }
            p.closeStdin();
          } catch (IOException e) {
            stdinFailed = e; // the program may have refused before reading (its answer says), or the upload broke off
            try {
              p.signal(9, true);
            } catch (IOException ended) {
              // it had ended already
            }
          }
        }
        DaemonProcess.Result done = p.collect();
        int exit = done.status().exited() ? done.status().exitCode() : -1;
        if (stdinFailed != null && exit == 0) {
          throw stdinFailed;
        }
        return new Result(done.stdout(), done.stderr(), exit);
      }
    });
    refusal(r);
    return Json.parse(r.stdout());
  }

  /**
   * Streams a file: the answer is opened (by {@code open}) only once the file could be opened,
   * so a refusal is still an answer of its own; a failure after that ends the stream abruptly.
   */
  public void read(String volumeId, String path, Supplier<OutputStream> open) throws RpcError, IOException, Refused {
    Result r = workers.with(volumeId, daemon -> {
      try (DaemonProcess p = daemon.start(spec("read", path, Map.of(), false))) {
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        OutputStream out = null;
        ProcessEvent e;
        while ((e = p.next()) != null) {
          if (e instanceof ProcessEvent.Output o) {
            if (o.fd() == 2) {
              err.write(o.buf(), o.off(), Math.min(o.len(), Math.max(0, ERR_KEPT - err.size()))); // only its start is told
            } else if (out != null) {
              out.write(o.buf(), o.off(), o.len());
            } else {
              head.write(o.buf(), o.off(), o.len());
              if (head.size() >= 3) {
                byte[] h = head.toByteArray();
                if (h[0] != 'O' || h[1] != 'K' || h[2] != '\n') {
                  throw new IOException("the volume helper answered a read without its mark");
                }
                out = open.get();
                out.write(h, 3, h.length - 3);
              }
            }
          } else if (e instanceof ProcessEvent.Exit x) {
            int code = x.status().exited() ? x.status().exitCode() : -1;
            if (out == null && code == 0 && head.size() == 0) {
              throw new IOException("the volume helper ended a read without its mark");
            }
            if (out != null && code != 0) {
              throw new IOException("the volume helper's read failed midway (exit " + code + ")");
            }
            return new Result(new byte[0], err.toByteArray(), code);
          }
        }
        throw new IOException("the volume helper's read ended without an exit");
      }
    });
    refusal(r);
  }

  private record Result(byte[] stdout, byte[] stderr, int exit) {}

  private static void refusal(Result r) throws Refused, IOException {
    if (r.exit() == 0) {
      return;
    }
    String err = new String(r.stderr(), StandardCharsets.UTF_8);
    if (r.exit() == 2) {
      JsonNode n = Json.parse(r.stderr());
      throw new Refused(n.path("status").asInt(500), n.path("message").asText("refused"));
    }
    throw new IOException("the volume helper failed (exit " + r.exit() + "): " + err.substring(0, Math.min(err.length(), 2000)));
  }

  private static ProcessSpec spec(String op, String path, Map<String, String> opts, boolean stdin) {
    List<String> argv = new ArrayList<>(List.of("/usr/bin/python3", "-c", SCRIPT, op, path));
    opts.forEach((k, v) -> argv.add(k + "=" + v));
    ProcessSpec s = new ProcessSpec(argv, Map.of(), "/", "root", null, false, null);
    return stdin ? s.withStdin() : s;
  }

  private static String script() {
    try (InputStream in = VolumeContent.class.getResourceAsStream("/io/sandboxes/local/volumes/volume_content.py")) {
      if (in == null) {
        throw new IllegalStateException("volume_content.py is missing from the jar");
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
