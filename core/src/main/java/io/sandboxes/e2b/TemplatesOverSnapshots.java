package io.sandboxes.e2b;

import io.sandboxes.SandboxException;
import io.sandboxes.SandboxInfo;
import io.sandboxes.TemplateCommit;
import io.sandboxes.TemplateDescriptor;
import io.sandboxes.VolumeMount;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * The seed's template contract ({@link io.sandboxes.TemplateManagement}) for
 * {@link E2BSandboxProvider}, on E2B's snapshots: a template is a snapshot named by the template's
 * id, and it is in use while a running or paused sandbox was booted from it.
 */
final class TemplatesOverSnapshots {
  private TemplatesOverSnapshots() {}

  /** The caller's id out of E2B's reference: {@code team/name:tag} becomes {@code name}. */
  static String bareName(String reference) {
    String s = reference;
    int slash = s.lastIndexOf('/');
    if (slash >= 0) {
      s = s.substring(slash + 1);
    }
    int colon = s.indexOf(':');
    return colon >= 0 ? s.substring(0, colon) : s;
  }

  private static Set<String> inUse(E2BApi api) {
    Set<String> used = new HashSet<>();
    for (SandboxInfo s : api.listAll(SandboxQuery.all())) {
      used.add(bareName(s.templateId()));
      if (s.alias() != null) {
        used.add(bareName(s.alias()));
      }
    }
    return used;
  }

  /** Snapshots the sandbox under the template's id, refusing a capture path on a mounted volume. */
  static TemplateDescriptor commit(E2BApi api, TemplateCommit commit) {
    if (!commit.capturePaths().isEmpty()) {
      SandboxInfo info = api.info(commit.sandboxId());
      for (String path : commit.capturePaths()) {
        for (VolumeMount m : info.volumeMounts()) {
          if (path.equals(m.path()) || path.startsWith(m.path() + "/")) {
            throw new SandboxException("cannot capture " + path + ": it lies on the mounted volume '" + m.volume() + "' at "
                + m.path() + ", and volumes are not part of a template");
          }
        }
      }
    }
    SnapshotInfo snap = api.createSnapshot(commit.sandboxId(), commit.templateId());
    return new TemplateDescriptor(commit.templateId(), snap.snapshotId(), commit.label(), null, true,
        Timestamps.isoMillis(Instant.now()));
  }

  static Optional<TemplateDescriptor> get(E2BApi api, String templateId) {
    Optional<SnapshotInfo> snap = api.listSnapshots(null, templateId).stream()
        .filter(s -> bareName(s.names().isEmpty() ? s.snapshotId() : s.names().get(0)).equals(templateId)
            || bareName(s.snapshotId()).equals(templateId))
        .findFirst();
    if (snap.isEmpty()) {
      return Optional.empty();
    }
    boolean used = inUse(api).contains(templateId);
    return Optional.of(new TemplateDescriptor(templateId, snap.get().snapshotId(), null, null, used, null));
  }

  static List<TemplateDescriptor> list(E2BApi api, @Nullable String idPrefix) {
    List<SnapshotInfo> snaps = api.listSnapshots(null, null);
    Set<String> used = inUse(api);
    List<TemplateDescriptor> out = new ArrayList<>();
    for (SnapshotInfo s : snaps) {
      String id = bareName(s.names().isEmpty() ? s.snapshotId() : s.names().get(0));
      if (idPrefix == null || id.startsWith(idPrefix)) {
        out.add(new TemplateDescriptor(id, s.snapshotId(), null, null, used.contains(id), null));
      }
    }
    return out;
  }

  /** Deletes the template's snapshot; a template some sandbox still uses is refused. */
  static void remove(E2BApi api, String templateId) {
    Optional<TemplateDescriptor> t = get(api, templateId);
    if (t.isEmpty()) {
      return;
    }
    if (t.get().inUse()) {
      throw new SandboxException("template " + templateId + " is currently running (a running or paused sandbox was booted from it);"
          + " destroy those sandboxes first");
    }
    api.deleteTemplate(t.get().ref());
  }
}
