package io.sandboxes.local.internal.build;

import static io.sandboxes.local.internal.build.BuildLabels.*;
import static io.sandboxes.local.internal.build.TemplateService.DEFAULT_TAG;

import com.fasterxml.jackson.databind.JsonNode;
import io.sandboxes.e2b.internal.Json;
import io.sandboxes.local.internal.common.RpcError;
import io.sandboxes.local.internal.build.TemplateService.Assigned;
import io.sandboxes.local.internal.build.TemplateService.Built;
import io.sandboxes.local.internal.build.TemplateService.Defaults;
import io.sandboxes.local.internal.build.TemplateService.SandboxUse;
import io.sandboxes.local.internal.build.TemplateService.TagInfo;
import io.sandboxes.local.internal.runtime.BuildRuntime;
import io.sandboxes.local.internal.runtime.InUse;
import io.sandboxes.local.internal.runtime.BuildRuntime.Image;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;

/**
 * The built templates: what the runtime's images say of them (a build is an image tagged in {@link
 * BuildLabels#BUILD_REPOSITORY}, each of its template's tags a tag in {@link
 * BuildLabels#REPOSITORY}), looked up by id, name or {@code name:tag}, their tags moved or
 * removed, a template deleted. Nothing is kept here but the defaults' cache: a restarted server
 * reads the same catalogue back.
 */
final class TemplateCatalogue {
  private final BuildRuntime runtime;
  private final ImageSweeper sweeper;
  private final Executor background;
  /** Held while a template is registered or deleted; a lock, not a monitor, so virtual threads waiting on the runtime under it stay unpinned. */
  private final ReentrantLock registration;
  private final Map<String, Optional<Defaults>> defaultsCache = new ConcurrentHashMap<>();

  TemplateCatalogue(BuildRuntime runtime, ImageSweeper sweeper, Executor background, ReentrantLock registration) {
    this.runtime = runtime;
    this.sweeper = sweeper;
    this.background = background;
    this.registration = registration;
  }

  /** Forgets the templates' defaults looked up so far: a registration or a tag moved changes them. */
  void forgetDefaults() {
    defaultsCache.clear();
  }

  /** @return every built template, newest first (one per id: its newest build) */
  public List<Built> list() {
    Map<String, Built> byId = new LinkedHashMap<>();
    builds().forEach(t -> byId.putIfAbsent(t.templateId(), t));
    return List.copyOf(byId.values());
  }

  /** @return every registered build of every template, newest first */
  public List<Built> builds() {
    List<Image> images = runtime.images(Map.of(LABEL_OURS, "true"), false);
    return images.stream().map(TemplateCatalogue::builtOf).flatMap(Optional::stream)
        .sorted(Comparator.comparing(Built::createdAt).reversed().thenComparing(Built::buildId)).toList();
  }

  /** @return the registered builds of one template (by its id or name, a tag ignored), newest first */
  public List<Built> buildsOf(String idOrName) {
    String n = idOrName.contains(":") ? idOrName.substring(0, idOrName.indexOf(':')) : idOrName;
    List<Built> all = builds();
    Optional<String> id = all.stream().filter(t -> t.templateId().equals(n) || t.name().equals(n)).map(Built::templateId).findFirst();
    return id.map(x -> all.stream().filter(t -> t.templateId().equals(x)).toList()).orElse(List.of());
  }

  /**
   * Whether an image is a build (tagged in {@link #BUILD_REPOSITORY}): a snapshot or fork of a
   * template's sandbox carries the template's labels too, and is no build to remove.
   */
  static boolean isBuild(Image i) {
    return i.tags().stream().anyMatch(t -> t.startsWith(BUILD_REPOSITORY + ":"));
  }

  /** The template's tags an image carries (its tags in {@link BuildLabels#REPOSITORY} for that template id). */
  static List<String> registeredTags(Image i, String templateId) {
    List<String> tags = new ArrayList<>();
    String prefix = REPOSITORY + ":" + templateId;
    for (String t : i.tags()) {
      if (t.equals(prefix)) {
        tags.add(DEFAULT_TAG);
      } else if (t.startsWith(prefix + ".") && t.length() > prefix.length() + 1) {
        tags.add(t.substring(prefix.length() + 1));
      }
    }
    tags.sort(Comparator.naturalOrder());
    return tags;
  }

  static Instant parseInstant(@Nullable String s) {
    try {
      return s == null ? Instant.EPOCH : Instant.parse(s);
    } catch (java.time.format.DateTimeParseException e) {
      return Instant.EPOCH;
    }
  }

  private static Optional<Built> builtOf(Image i) {
    Map<String, String> l = i.labels();
    if (l.getOrDefault(LABEL_TEMPLATE_ID, "").isEmpty() || l.getOrDefault(LABEL_TEMPLATE_NAME, "").isEmpty()) {
      return Optional.empty();
    }
    // only an image a tag of the template points at is a build of it: an earlier build, a deleted one or one half-made is not
    List<String> tags = registeredTags(i, l.get(LABEL_TEMPLATE_ID));
    if (tags.isEmpty()) {
      return Optional.empty();
    }
    try {
      JsonNode d = Json.parse(l.getOrDefault(LABEL_TEMPLATE_DEFAULTS, "{}").getBytes(StandardCharsets.UTF_8));
      Defaults defaults = new Defaults(Json.stringMap(d.get("env")), d.path("workdir").asText("/home/user"), d.path("user").asText("user"),
          Json.text(d, "startCmd"), Json.text(d, "readyCmd"));
      String[] res = l.getOrDefault(LABEL_TEMPLATE_RESOURCES, "2/2048").split("/");
      return Optional.of(new Built(l.get(LABEL_TEMPLATE_ID), l.get(LABEL_TEMPLATE_NAME), l.getOrDefault(LABEL_TEMPLATE_BUILD, ""),
          Instant.parse(l.getOrDefault(LABEL_TEMPLATE_CREATED, Instant.EPOCH.toString())), i.id(), defaults, List.copyOf(tags),
          Integer.parseInt(res[0]), Integer.parseInt(res[res.length - 1])));
    } catch (IOException | RuntimeException e) {
      return Optional.empty();
    }
  }

  /**
   * The build a template reference stands for: {@code name} or {@code id} is its {@code default}
   * tag's build, {@code name:tag} that tag's, {@code name:<build id>} that build while a tag points at it.
   */
  public Optional<Built> find(String reference) {
    int colon = reference.indexOf(':');
    String tag = colon < 0 ? DEFAULT_TAG : reference.substring(colon + 1).trim().toLowerCase(java.util.Locale.ROOT);
    return buildsOf(reference).stream().filter(t -> t.tags().contains(tag) || t.buildId().equals(tag)).findFirst();
  }

  /** A built template by its id or name, whatever its tags: its newest build. */
  public Optional<Built> findTemplate(String idOrName) {
    List<Built> all = buildsOf(idOrName);
    return all.isEmpty() ? Optional.empty() : Optional.of(all.get(0));
  }

  /** @return the image of a built template, or null */
  public @Nullable String resolve(String idOrName) {
    return find(idOrName).map(Built::imageId).orElse(null);
  }

  /** The defaults a template gives its sandboxes; empty for base and snapshots. */
  public Optional<Defaults> defaults(String templateId) {
    if (templateId.equals(KnownTemplates.BASE)) {
      return Optional.empty();
    }
    // looked up outside the map's lock: a call to the runtime must not hold it (nor pin a virtual thread's carrier)
    Optional<Defaults> known = defaultsCache.get(templateId);
    if (known == null) {
      known = find(templateId).map(Built::defaults);
      defaultsCache.put(templateId, known);
    }
    return known;
  }

  /**
   * Deletes a built template, every build of it.
   *
   * @return false when there is no such template
   * @throws RpcError already_exists when a sandbox was created from it
   */
  boolean delete(String idOrName, List<SandboxUse> sandboxes) throws RpcError {
    registration.lock();
    try {
      Optional<Built> t = findTemplate(idOrName);
      if (t.isEmpty()) {
        return false;
      }
      String templateId = t.get().templateId();
      for (SandboxUse s : sandboxes) {
        Optional<Built> of = findTemplate(s.templateId());
        if (of.isPresent() && of.get().templateId().equals(templateId)) {
          throw new RpcError("already_exists", "cannot delete template " + t.get().name() + ": sandbox " + s.id() + " ("
              + (s.paused() ? "paused" : "running") + ") was created from it");
        }
      }
      for (Built b : buildsOf(templateId)) {
        for (String tag : b.tags()) {
          try {
            // the image keeps its build tag, so this only unregisters: it never waits on layers
            runtime.removeImage(REPOSITORY + ":" + TemplateTags.registrationTag(templateId, tag)); // false: gone already
          } catch (InUse e) {
            throw new RpcError("already_exists", "template " + t.get().name() + " is in use: " + e.getMessage());
          }
        }
      }
      forgetDefaults();
      background.execute(() -> sweeper.removeImagesOf(templateId));
      return true;
    } finally {
      registration.unlock();
    }
  }

  /**
   * Points tags at the build {@code target} ({@code name:tag}, or a bare name for its
   * {@code default}) stands for, moving each from where it pointed; a build no tag points at any
   * more goes.
   *
   * @throws RpcError invalid_argument for no or bad tags, not_found for an unknown target
   */
  public Assigned assignTags(@Nullable String target, List<String> rawTags) throws RpcError {
    if (target == null || target.isBlank()) {
      throw new RpcError("invalid_argument", "'target' is required: the template as name:tag");
    }
    if (rawTags.isEmpty()) {
      throw new RpcError("invalid_argument", "at least one tag is required");
    }
    List<String> tags = TemplateTags.validTags(rawTags);
    Built b;
    registration.lock();
    try {
      b = find(target.trim()).orElseThrow(() -> new RpcError("not_found", "template '" + target + "' not found"
          + (target.contains(":") ? "" : " (a bare name means its 'default' tag)")));
      for (String tag : tags) {
        runtime.tag(b.imageId(), REPOSITORY, TemplateTags.registrationTag(b.templateId(), tag));
      }
      forgetDefaults();
    } finally {
      registration.unlock();
    }
    background.execute(() -> sweeper.sweepUntagged(b.templateId()));
    return new Assigned(b.buildId(), tags);
  }

  /**
   * Removes tags from a template. The {@code default} tag stays (as on E2B), and so does a
   * template's last tag (delete the template instead); a tag it does not have is already gone.
   *
   * @throws RpcError invalid_argument for a name with a tag, no or bad tags, {@code default} or the
   *     last tag; not_found for an unknown template
   */
  public void removeTags(@Nullable String name, List<String> rawTags) throws RpcError {
    if (name == null || name.isBlank()) {
      throw new RpcError("invalid_argument", "'name' is required");
    }
    if (name.contains(":")) {
      throw new RpcError("invalid_argument", "the template name should not contain a tag, use the 'tags' field instead");
    }
    List<String> tags = TemplateTags.validTags(rawTags);
    if (tags.isEmpty()) {
      throw new RpcError("invalid_argument", "at least one tag is required");
    }
    if (tags.contains(DEFAULT_TAG)) {
      throw new RpcError("invalid_argument", "cannot delete the '" + DEFAULT_TAG + "' tag");
    }
    String templateId;
    registration.lock();
    try {
      List<Built> all = buildsOf(name.trim());
      if (all.isEmpty()) {
        throw new RpcError("not_found", "template '" + name + "' not found");
      }
      templateId = all.get(0).templateId();
      Set<String> left = new java.util.HashSet<>();
      all.forEach(b -> left.addAll(b.tags()));
      tags.forEach(left::remove);
      if (left.isEmpty()) {
        throw new RpcError("invalid_argument", "cannot remove every tag of template '" + name + "': it would leave no build to create"
            + " from; delete the template instead");
      }
      for (Built b : all) {
        for (String tag : tags) {
          if (b.tags().contains(tag)) {
            runtime.removeImage(REPOSITORY + ":" + TemplateTags.registrationTag(templateId, tag)); // false: gone already
          }
        }
      }
      forgetDefaults();
    } finally {
      registration.unlock();
    }
    background.execute(() -> sweeper.sweepUntagged(templateId));
  }

  /**
   * @return the tags of a template by id or name, each with its build (its time is the build's: the
   *     local runtime keeps no time of an assignment)
   * @throws RpcError not_found for an unknown template
   */
  public List<TagInfo> tagsOf(String idOrName) throws RpcError {
    List<Built> all = buildsOf(idOrName);
    if (all.isEmpty()) {
      throw new RpcError("not_found", "template '" + idOrName + "' not found");
    }
    List<TagInfo> out = new ArrayList<>();
    for (Built b : all) {
      b.tags().forEach(t -> out.add(new TagInfo(t, b.buildId(), b.createdAt())));
    }
    out.sort(Comparator.comparing(TagInfo::tag));
    return out;
  }
}
