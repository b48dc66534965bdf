package io.sandboxes.local.internal.build;

import static io.sandboxes.local.internal.build.BuildLabels.*;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sandboxes.e2b.internal.Json;
import io.sandboxes.local.internal.build.TemplateService.Defaults;
import io.sandboxes.local.internal.runtime.BuildRuntime;
import java.io.IOException;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Registration of a finished build: one last commit labels its image with the template, and the
 * build's tags are pointed at it. Until then a build is no template: one that fails, or a server
 * that stops before this, leaves only unlabelled step images.
 */
final class TemplateRegistration {
  private final BuildRuntime runtime;
  private final KnownTemplates templates;
  private final StepRunner steps;
  private final TemplateCatalogue catalogue;
  private final ImageSweeper sweeper;
  private final Executor background;
  private final ReentrantLock registration;
  private final String serverId;

  TemplateRegistration(BuildRuntime runtime, KnownTemplates templates, StepRunner steps, TemplateCatalogue catalogue,
      ImageSweeper sweeper, Executor background, ReentrantLock registration, String serverId) {
    this.runtime = runtime;
    this.templates = templates;
    this.steps = steps;
    this.catalogue = catalogue;
    this.sweeper = sweeper;
    this.background = background;
    this.registration = registration;
    this.serverId = serverId;
  }

  /**
   * The last commit: labels the image with the template and points the build's tags at it; an
   * earlier build that no tag points at any more goes.
   */
  void register(Build b, String image, Defaults d) throws IOException {
    Map<String, String> labels = steps.neutralLabels();
    labels.put(LABEL_OURS, "true");
    labels.put(LABEL_TEMPLATE_ID, b.request.templateId());
    labels.put(LABEL_TEMPLATE_NAME, b.request.name());
    labels.put(LABEL_TEMPLATE_BUILD, b.request.buildId());
    labels.put(LABEL_TEMPLATE_CREATED, Instant.now().toString());
    labels.put(LABEL_TEMPLATE_RESOURCES, b.request.cpuCount() + "/" + b.request.memoryMB());
    labels.put(LABEL_BUILT_BY, serverId);
    ObjectNode defaults = Json.object().put("workdir", d.workdir()).put("user", d.user());
    defaults.set("env", Json.toObject(d.env()));
    if (d.startCmd() != null) {
      defaults.put("startCmd", d.startCmd());
    }
    if (d.readyCmd() != null) {
      defaults.put("readyCmd", d.readyCmd());
    }
    labels.put(LABEL_TEMPLATE_DEFAULTS, Json.string(defaults));
    BuildState st = new BuildState(image, "/", "root");
    String id = steps.createStep(b, st, List.of("true"), "root", "/");
    registration.lock();
    try {
      if (templates.snapshotNamed(b.request.name())) {
        throw new IOException("the name '" + b.request.name() + "' was taken by a snapshot during the build");
      }
      String committed;
      try {
        committed = runtime.commit(id, labels, BUILD_REPOSITORY, b.request.buildId());
      } finally {
        runtime.removeStep(id);
        b.steps.remove(id);
      }
      // the registration itself: each tag moved from an earlier build at once
      for (String tag : b.request.tags()) {
        runtime.tag(committed, REPOSITORY, TemplateTags.registrationTag(b.request.templateId(), tag));
      }
      catalogue.forgetDefaults();
    } finally {
      registration.unlock();
    }
    // earlier builds no tag points at go in the background: the tags resolve to this build already
    background.execute(() -> sweeper.sweepUntagged(b.request.templateId()));
  }
}
