package io.sandboxes.local.internal.build;

import static io.sandboxes.local.internal.build.TemplateService.DEFAULT_TAG;

import io.sandboxes.local.internal.common.RpcError;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

/** A template's tags: how E2B's are taken, and the Docker tag each stands for. */
final class TemplateTags {
  private static final Pattern TAG = Pattern.compile("^[a-z0-9_.-]{1,100}$");
  private static final Pattern UUID_LIKE = Pattern.compile("^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$");

  private TemplateTags() {}

  /**
   * Tags as E2B takes them: trimmed, lowercased, deduplicated in order; {@code default} is a tag
   * like any other here.
   *
   * @throws RpcError invalid_argument for a malformed tag or one shaped like a build id
   */
  static List<String> validTags(List<String> raw) throws RpcError {
    Set<String> out = new LinkedHashSet<>();
    for (String t : raw) {
      String c = t == null ? "" : t.trim().toLowerCase(java.util.Locale.ROOT);
      if (!TAG.matcher(c).matches()) {
        throw new RpcError("invalid_argument", "invalid tag '" + t + "': a tag is 1 to 100 lowercase letters, digits, '_', '.' or '-'");
      }
      if (UUID_LIKE.matcher(c).matches()) {
        throw new RpcError("invalid_argument", "invalid tag '" + t + "': a tag cannot be a UUID (build ids are)");
      }
      out.add(c);
    }
    return List.copyOf(out);
  }

  /** The Docker tag (in {@link #REPOSITORY}) that stands for a template's tag. */
  static String registrationTag(String templateId, String tag) {
    return tag.equals(DEFAULT_TAG) ? templateId : templateId + "." + tag;
  }
}
