package io.sandboxes.template;

import java.time.Duration;
import java.util.Objects;

/**
 * A ready check for a template's sandboxes, as E2B's {@code ReadyCmd} and its {@code waitFor...}
 * helpers: a shell command that exits 0 once a sandbox is ready. A create answers only after it
 * has. Give one to {@link Template#setStartCmd(String, ReadyCmd)} or {@link Template#setReadyCmd(ReadyCmd)}.
 *
 * {@snippet :
 * Template t = Template.fromTemplate("base")
 *     .setStartCmd("python3 -m http.server 8000", ReadyCmd.waitForPort(8000));
 * }
 *
 * @param command the shell command, not blank
 * @since 0.1
 */
public record ReadyCmd(String command) {

  /** Validates the command. */
  public ReadyCmd {
    Objects.requireNonNull(command, "command");
    if (command.isBlank()) {
      throw new IllegalArgumentException("command must not be blank");
    }
  }

  /**
   * Ready once something listens on a port, TCP or UDP, as E2B's {@code waitForPort}: with
   * {@code ss} where the image has it (E2B's check), else from the kernel's socket tables in
   * {@code /proc/net}, so an image without {@code ss} is not left waiting for ever.
   *
   * @param port 1 to 65535
   * @return the check
   */
  public static ReadyCmd waitForPort(int port) {
    if (port < 1 || port > 65535) {
      throw new IllegalArgumentException("port must be 1 to 65535, got " + port);
    }
    String hex = String.format("%04X", port);
    // /proc/net/{tcp,udp}[6]: field 2 is local address:port in hex, field 4 the state (0A: TCP LISTEN, 07: UDP unconnected)
    return new ReadyCmd("if command -v ss >/dev/null 2>&1; then [ -n \"$(ss -Htuln sport = :" + port + ")\" ]; else"
        + " cat /proc/net/tcp /proc/net/tcp6 /proc/net/udp /proc/net/udp6 2>/dev/null"
        + " | awk '{ n = split($2, a, \":\") } n == 2 && a[2] == \"" + hex + "\" && ($4 == \"0A\" || $4 == \"07\") { f = 1 }"
        + " END { exit !f }'; fi");
  }

  /**
   * Ready once a URL answers with a status code, as E2B's {@code waitForURL} (with {@code curl}).
   *
   * @param url the URL, e.g. {@code http://localhost:3000/health}
   * @param statusCode the status it must answer, 100 to 599
   * @return the check
   */
  public static ReadyCmd waitForUrl(String url, int statusCode) {
    requireText(url, "url");
    if (statusCode < 100 || statusCode > 599) {
      throw new IllegalArgumentException("statusCode must be 100 to 599, got " + statusCode);
    }
    return new ReadyCmd("[ \"$(curl -s -o /dev/null -w '%{http_code}' " + Checks.shellQuote(url) + ")\" = \"" + statusCode + "\" ]");
  }

  /**
   * Ready once a URL answers 200.
   *
   * @param url the URL
   * @return the check
   * @see #waitForUrl(String, int)
   */
  public static ReadyCmd waitForUrl(String url) {
    return waitForUrl(url, 200);
  }

  /**
   * Ready once a process of that name runs, as E2B's {@code waitForProcess} (with {@code pgrep}).
   *
   * @param processName the process name {@code pgrep} matches
   * @return the check
   */
  public static ReadyCmd waitForProcess(String processName) {
    return new ReadyCmd("pgrep " + Checks.shellQuote(requireText(processName, "processName")) + " > /dev/null");
  }

  /**
   * Ready once a regular file exists, as E2B's {@code waitForFile}.
   *
   * @param path the file's path
   * @return the check
   */
  public static ReadyCmd waitForFile(String path) {
    return new ReadyCmd("[ -f " + Checks.shellQuote(requireText(path, "path")) + " ]");
  }

  /**
   * Ready after a fixed time, as E2B's {@code waitForTimeout}: whole seconds, at least one.
   *
   * @param wait how long; below a second waits a second, and fractions of a second are dropped
   * @return the check
   */
  public static ReadyCmd waitForTimeout(Duration wait) {
    Objects.requireNonNull(wait, "wait");
    if (wait.isNegative()) {
      throw new IllegalArgumentException("wait must not be negative, got " + wait);
    }
    return new ReadyCmd("sleep " + Math.max(1, wait.toSeconds()));
  }

  private static String requireText(String value, String name) {
    Objects.requireNonNull(value, name);
    if (value.isBlank()) {
      throw new IllegalArgumentException(name + " must not be blank");
    }
    return value;
  }
}
