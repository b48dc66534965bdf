package io.sandboxes.local.internal.common;

/**
 * IPv4 addresses in dotted decimal, read as numbers by hand so that no text a sandbox supplies is
 * ever looked up as a name: the egress policy and the host firewall both read addresses this way.
 */
public final class Ipv4 {
  private Ipv4() {}

  /**
   * An IPv4 address in dotted decimal as a number.
   *
   * @param ip the text, e.g. {@code 10.0.0.1}
   * @return the address, or -1 when {@code ip} is not four decimal numbers of 0 to 255
   */
  public static long parse(String ip) {
    String[] parts = ip.split("\\.", -1);
    if (parts.length != 4) {
      return -1;
    }
    long v = 0;
    for (String part : parts) {
      if (part.isEmpty() || part.length() > 3 || !part.chars().allMatch(Character::isDigit)) {
        return -1;
      }
      int n = Integer.parseInt(part);
      if (n > 255) {
        return -1;
      }
      v = (v << 8) | n;
    }
    return v;
  }
}
