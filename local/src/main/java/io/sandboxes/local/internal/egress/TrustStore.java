package io.sandboxes.local.internal.egress;

/**
 * Where a sandbox's trust store is, and the script that adds the gateway's certificates to it: the
 * image's own bundle is kept aside the first time, and the system bundle written as it plus ours,
 * so writing again (a restarted server's new CA) replaces ours rather than piling them up. Ours
 * also go where Debian's {@code update-ca-certificates} looks, so a rebuilt bundle keeps them.
 * Run in the sandbox as root; the sandbox owns these files and may change them, which only
 * changes what it trusts.
 */
public final class TrustStore {
  /** The system bundle OpenSSL (curl, Python) reads on Debian and Alpine alike. */
  public static final String SYSTEM_BUNDLE = "/etc/ssl/certs/ca-certificates.crt";
  /** The gateway's certificates alone (where {@code update-ca-certificates} keeps them). */
  public static final String OWN_BUNDLE = "/usr/local/share/ca-certificates/sandboxes-egress.crt";
  private static final String KEPT = "/usr/local/share/sandboxes/image-ca-certificates.crt";

  /** The script: {@code $1} is the PEM text. */
  public static final String INSTALL = """
      set -e
      umask 022
      mkdir -p /usr/local/share/ca-certificates /usr/local/share/sandboxes /etc/ssl/certs
      printf '%s' "$1" > %OWN%.tmp && mv %OWN%.tmp %OWN%
      if [ ! -f %KEPT% ]; then
        if [ -f %SYSTEM% ]; then cp %SYSTEM% %KEPT%; else : > %KEPT%; fi
      fi
      cat %KEPT% %OWN% > %SYSTEM%.tmp && mv %SYSTEM%.tmp %SYSTEM%
      """.replace("%OWN%", OWN_BUNDLE).replace("%KEPT%", KEPT).replace("%SYSTEM%", SYSTEM_BUNDLE);

  private TrustStore() {}
}
