package io.sandboxes.local.internal.build;

import java.util.LinkedHashMap;
import java.util.Map;

/** The state a build carries from step to step. */
final class BuildState {
  String image;
  Map<String, String> env = new LinkedHashMap<>();
  String workdir;
  String user;

  BuildState(String image, String workdir, String user) {
    this.image = image;
    this.workdir = workdir;
    this.user = user;
  }

  String describe() {
    return "env=" + env + "\nworkdir=" + workdir + "\nuser=" + user;
  }
}
