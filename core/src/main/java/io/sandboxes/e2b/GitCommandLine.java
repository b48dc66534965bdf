package io.sandboxes.e2b;

import io.sandboxes.ExecResult;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/**
 * The pieces of {@link Git}'s command lines: quoting for the shell, credentials given to git
 * through a credential helper that reads them from the environment, credentials in URLs, and
 * reading git's complaints.
 */
final class GitCommandLine {
  /** The environment variables the credential helper reads. */
  static final String USERNAME_ENV = "SANDBOXES_GIT_USERNAME";
  static final String PASSWORD_ENV = "SANDBOXES_GIT_PASSWORD";

  /**
   * A credential helper, given with {@code -c} for one command: it answers git's {@code get} with
   * the credentials in the command's environment, and ignores {@code store} and {@code erase}, so
   * they reach no file. The empty helper before it drops any configured one for this command.
   */
  static final List<String> HELPER_ARGS = List.of("-c", "credential.helper=", "-c",
      "credential.helper=!f() { test \"$1\" = get || exit 0; printf 'username=%s\\npassword=%s\\n' \"$"
          + USERNAME_ENV + "\" \"$" + PASSWORD_ENV + "\"; }; f");

  private static final List<String> AUTH_SNIPPETS = List.of("authentication failed", "terminal prompts disabled",
      "could not read username", "could not read password", "invalid username or password", "access denied",
      "permission denied", "not authorized");

  private static final List<String> UPSTREAM_SNIPPETS = List.of("has no upstream branch", "no upstream branch",
      "no upstream configured", "no tracking information", "set the remote as upstream", "set the upstream branch",
      "please specify which branch you want to merge with");

  private GitCommandLine() {}

  /** One argument quoted for bash: between single quotes, each single quote closed, escaped and reopened. */
  static String quote(String arg) {
    return "'" + arg.replace("'", "'\\''") + "'";
  }

  /** {@code git [-C repo] args...}, every part quoted. */
  static String command(@Nullable String repo, List<String> args) {
    StringBuilder sb = new StringBuilder("git");
    if (repo != null) {
      sb.append(" -C ").append(quote(repo));
    }
    for (String a : args) {
      sb.append(' ').append(quote(a));
    }
    return sb.toString();
  }

  /** Where the authority of an http(s) URL starts and ends, or null for any other URL. */
  private static int @Nullable [] authority(String url) {
    int sep = url.indexOf("://");
    if (sep < 0) {
      return null;
    }
    String scheme = url.substring(0, sep).toLowerCase(Locale.ROOT);
    if (!scheme.equals("http") && !scheme.equals("https")) {
      return null;
    }
    int start = sep + 3;
    int end = start;
    while (end < url.length() && "/?#".indexOf(url.charAt(end)) < 0) {
      end++;
    }
    return new int[] {start, end};
  }

  static boolean isHttp(String url) {
    return authority(url) != null;
  }

  /** The username and password written into an http(s) URL, or null when it has no password. */
  static @Nullable GitCredentials inlineCredentials(String url) {
    int[] a = authority(url);
    if (a == null) {
      return null;
    }
    String authority = url.substring(a[0], a[1]);
    int at = authority.lastIndexOf('@');
    int colon = at < 0 ? -1 : authority.indexOf(':');
    if (colon < 0 || colon > at || colon == at - 1) {
      return null;
    }
    return new GitCredentials(decode(authority.substring(0, colon)), decode(authority.substring(colon + 1, at)));
  }

  /** The URL without the username and password in its authority (other URLs as they are). */
  static String withoutCredentials(String url) {
    int[] a = authority(url);
    if (a == null) {
      return url;
    }
    int at = url.substring(a[0], a[1]).lastIndexOf('@');
    return at < 0 ? url : url.substring(0, a[0]) + url.substring(a[0] + at + 1);
  }

  /** The http(s) URL with these credentials in its authority, percent-encoded. */
  static String withCredentials(String url, GitCredentials credentials) {
    String bare = withoutCredentials(url);
    int[] a = authority(bare);
    if (a == null) {
      throw new IllegalArgumentException("only http(s) git URLs take a username and password");
    }
    return bare.substring(0, a[0]) + encode(credentials.username()) + ":" + encode(credentials.password()) + "@"
        + bare.substring(a[0]);
  }

  /** Percent-encodes all but RFC 3986's unreserved characters. */
  static String encode(String s) {
    StringBuilder sb = new StringBuilder();
    for (byte b : s.getBytes(StandardCharsets.UTF_8)) {
      char c = (char) (b & 0xff);
      if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || "-._~".indexOf(c) >= 0) {
        sb.append(c);
      } else {
        sb.append('%').append(Character.toUpperCase(Character.forDigit(c >> 4, 16)))
            .append(Character.toUpperCase(Character.forDigit(c & 0xf, 16)));
      }
    }
    return sb.toString();
  }

  private static String decode(String s) {
    return java.net.URLDecoder.decode(s.replace("+", "%2B"), StandardCharsets.UTF_8);
  }

  /** The text with the password, raw and percent-encoded, replaced by a mask. */
  static String redact(String text, @Nullable GitCredentials credentials) {
    if (credentials == null || text.isEmpty()) {
      return text;
    }
    String out = text.replace(credentials.password(), "[redacted]");
    String encoded = encode(credentials.password());
    return out.replace(encoded, "[redacted]");
  }

  static ExecResult redact(ExecResult result, @Nullable GitCredentials credentials) {
    if (credentials == null) {
      return result;
    }
    return new ExecResult(result.exitCode(), redact(result.stdout(), credentials), redact(result.stderr(), credentials),
        result.duration());
  }

  private static boolean says(ExecResult result, List<String> snippets) {
    String text = (result.stderr() + "\n" + result.stdout()).toLowerCase(Locale.ROOT);
    return snippets.stream().anyMatch(text::contains);
  }

  /** Git said the server wanted credentials or refused them, in the words E2B's SDK looks for. */
  static boolean isAuthFailure(ExecResult result) {
    return says(result, AUTH_SNIPPETS);
  }

  /** Git said the branch has no upstream, in the words E2B's SDK looks for. */
  static boolean isMissingUpstream(ExecResult result) {
    return says(result, UPSTREAM_SNIPPETS);
  }
}
