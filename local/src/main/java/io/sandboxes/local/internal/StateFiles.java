package io.sandboxes.local.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sandboxes.e2b.internal.Json;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.channels.Channels;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The state kept across restarts: one small JSON file per sandbox in the server's state folder,
 * holding what changes during its life (its deadline, whether and how it is paused, its network
 * policy) and, for a claimed warm pool member, its identity. The file is a create's commit: a
 * container without one was never answered.
 */
final class StateFiles {
  /** Logs under the registry's name, which operators filter on. */
  private static final Logger LOG = LoggerFactory.getLogger(Registry.class);

  private static final FileAttribute<Set<PosixFilePermission>> OWNER_ONLY =
      PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------"));

  private final Path stateDir;
  private final boolean posix;

  StateFiles(Path stateDir) {
    this.stateDir = stateDir;
    this.posix = stateDir.getFileSystem().supportedFileAttributeViews().contains("posix");
  }

  /** @return the state folder */
  Path dir() {
    return stateDir;
  }

  Path file(String id) {
    return stateDir.resolve(id + ".json");
  }

  /** Records a sandbox's changing state; a failure is logged, the sandbox carries on. */
  void persist(LocalSandbox s) {
    try {
      record(s);
    } catch (IOException e) {
      LOG.warn("could not record the state of sandbox {} in {}: {}", s.id(), stateDir, e.toString());
    }
  }

  /**
   * Records a sandbox's changing state (its deadline, pause, network policy and, for a claimed
   * pool member, its identity), replacing the file atomically.
   */
  void record(LocalSandbox s) throws IOException {
    synchronized (s.stateWrites) {
      if (s.killed()) {
        return; // its file says killed until the removal is over: a late write must not bring it back
      }
      write(s);
    }
  }

  private void write(LocalSandbox s) throws IOException {
    ObjectNode state = Json.object()
        .put("endAt", s.endAt().toString())
        .put("paused", s.paused())
        .put("memoryKept", s.memoryKept());
    if (s.network() != null) {
      ObjectNode network = Json.MAPPER.valueToTree(s.network());
      NetworkPolicy.EgressProxySetting proxy = s.network().egressProxy();
      if (proxy != null && proxy.password() != null) {
        // the policy's JSON never holds the password; a server that takes the sandbox back needs it
        ((ObjectNode) network.get("egressProxy")).put("password", proxy.password());
      }
      state.set("network", network);
    }
    if (s.allowInternetAccess() != null) {
      state.put("allowInternetAccess", s.allowInternetAccess());
    }
    if (s.pooled()) {
      // a claimed pool member's identity is nowhere in its container's config: this file holds it
      state.put("pooled", true)
          .put("template", s.templateId())
          .put("envdToken", s.envdToken())
          .put("startedAt", s.startedAt().toString());
      state.set("metadata", Json.toObject(s.metadata()));
      state.set("envVars", Json.toObject(s.envVars()));
      state.set("lifecycle", Json.object()
          .put("pauseOnTimeout", s.lifecycle().pauseOnTimeout())
          .put("autoPauseMemory", s.lifecycle().autoPauseMemory())
          .put("autoResume", s.lifecycle().autoResume())
          .put("timeoutSeconds", s.lifecycle().timeoutSeconds()));
    }
    replace(s.id(), Json.bytes(state), s.pooled());
  }

  /**
   * Replaces a sandbox's file atomically: written to a temporary file and moved over it. With
   * {@code secret} (a claimed member's file holds its token) the temporary file is made readable
   * by this user alone as it is created, where the file system has POSIX permissions (elsewhere
   * the folder's own permissions guard it). Every claim writes one, so it costs few calls: the
   * folder is made only when it is missing, and no permission is changed after the fact.
   */
  private void replace(String id, byte[] bytes, boolean secret) throws IOException {
    if (!Files.isDirectory(stateDir)) {
      Files.createDirectories(stateDir);
    }
    Path tmp = stateDir.resolve(id + ".json.tmp");
    if (secret && posix) {
      try {
        writeNew(tmp, bytes);
      } catch (FileAlreadyExistsException e) {
        // left by a write cut short, with whatever permissions it was made with
        Files.delete(tmp);
        writeNew(tmp, bytes);
      }
    } else {
      Files.write(tmp, bytes);
    }
    Files.move(tmp, file(id), StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
  }

  private static void writeNew(Path tmp, byte[] bytes) throws IOException {
    try (OutputStream out = Channels.newOutputStream(Files.newByteChannel(tmp,
        Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE), OWNER_ONLY))) {
      out.write(bytes);
    }
  }

  /**
   * Marks a sandbox killed, before its kill is answered: its file says {@code "killed": true}
   * (nothing else) until its removal is over and the file goes, and no later write replaces it.
   * A server that stops before the removal is over leaves it so, and a restart removes the
   * container ({@link SandboxRecovery}). When the mark cannot be written the file goes at once,
   * which a restart takes the same way (a container without a state file is nobody's).
   */
  void markKilled(LocalSandbox s) {
    synchronized (s.stateWrites) {
      s.markKilled();
      try {
        replace(s.id(), Json.bytes(Json.object().put(KILLED, true)), false);
      } catch (IOException e) {
        LOG.warn("could not mark sandbox {} killed in {} ({}); its state file goes instead", s.id(), stateDir, e.toString());
        forget(s.id());
      }
    }
  }

  /** The field of a state file that says its sandbox was killed and its removal may not be over. */
  static final String KILLED = "killed";

  /** Removes a sandbox's state file: the sandbox is gone. */
  void forget(String id) {
    try {
      Files.deleteIfExists(file(id));
    } catch (IOException e) {
      LOG.debug("could not remove the state file of {}: {}", id, e.toString());
    }
  }

  /** @return a sandbox's recorded state, or null when it has none or it cannot be read */
  @Nullable JsonNode read(String id) {
    Path f = file(id);
    if (!Files.exists(f)) {
      return null;
    }
    try {
      return Json.parse(Files.readAllBytes(f));
    } catch (IOException e) {
      LOG.warn("unreadable state file {}: {}", f, e.toString());
      return null;
    }
  }
}
