package io.sandboxes.local.internal.build;

import static io.sandboxes.local.internal.build.TemplateService.DEFAULT_TAG;

import io.sandboxes.local.internal.common.RpcError;
import io.sandboxes.local.internal.build.TemplateService.Built;
import io.sandboxes.local.internal.build.TemplateService.Requested;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * Requested builds ({@code POST /v3/templates}): the name and tags checked, the template's id
 * kept across rebuilds of a name, each request known by its build id for its uploads and start.
 */
final class BuildRequests {
  private static final Pattern NAME = Pattern.compile("^[a-z0-9][a-z0-9_.-]{0,62}$");

  private final KnownTemplates templates;
  private final TemplateCatalogue catalogue;
  private final Map<String, Requested> requested = new ConcurrentHashMap<>();

  BuildRequests(KnownTemplates templates, TemplateCatalogue catalogue) {
    this.templates = templates;
    this.catalogue = catalogue;
  }

  /** Every build requested in this server's run. */
  Collection<Requested> all() {
    return requested.values();
  }

  /**
   * Requests a build of {@code name} (a template of that name is rebuilt under its id).
   *
   * @throws RpcError invalid_argument for a bad name
   */
  Requested request(@Nullable String nameWithTag, List<String> tags, int cpuCount, int memoryMB) throws RpcError {
    if (nameWithTag == null || nameWithTag.isBlank()) {
      throw new RpcError("invalid_argument", "'name' is required");
    }
    String name = nameWithTag;
    List<String> named = new ArrayList<>();
    int colon = nameWithTag.indexOf(':');
    if (colon >= 0) {
      name = nameWithTag.substring(0, colon);
      named.add(nameWithTag.substring(colon + 1));
    }
    if (!NAME.matcher(name).matches() || name.equals(KnownTemplates.BASE)) {
      throw new RpcError("invalid_argument", "template name must be lowercase letters, digits, '_', '.' or '-' (and not 'base'), got '"
          + name + "'");
    }
    named.addAll(tags);
    List<String> allTags = TemplateTags.validTags(named);
    if (allTags.isEmpty()) {
      allTags = List.of(DEFAULT_TAG);
    }
    if (cpuCount < 1 || cpuCount > 8 || memoryMB < 128 || memoryMB > 16_384) {
      throw new RpcError("invalid_argument", "cpuCount must be 1 to 8 and memoryMB 128 to 16384");
    }
    if (templates.snapshotNamed(name)) {
      // names are one namespace: a build must not hide a snapshot of that name, nor be hidden by it
      throw new RpcError("already_exists", "the name '" + name + "' is taken by a snapshot: delete it first or choose another name");
    }
    String finalName = name;
    String templateId = catalogue.findTemplate(name).map(Built::templateId)
        .orElseGet(() -> requested.values().stream().filter(r -> r.name().equals(finalName)).map(Requested::templateId).findFirst()
            .orElseGet(() -> "tpl" + io.sandboxes.local.internal.common.Ids.newSandboxId().substring(0, 17)));
    Requested r = new Requested(templateId, java.util.UUID.randomUUID().toString(), name, allTags, cpuCount, memoryMB, Instant.now());
    requested.put(r.buildId(), r);
    return r;
  }

  Requested requested(String templateId, String buildId) throws RpcError {
    Requested r = requested.get(buildId);
    if (r == null || !r.templateId().equals(templateId)) {
      throw new RpcError("not_found", "build '" + buildId + "' of template '" + templateId + "' not found");
    }
    return r;
  }

  boolean knownTemplate(String templateId) {
    return requested.values().stream().anyMatch(r -> r.templateId().equals(templateId)) || catalogue.findTemplate(templateId).isPresent();
  }
}
