package io.sandboxes.e2b.internal;

import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.WeakHashMap;
import org.jspecify.annotations.Nullable;

/**
 * The secrets the client holds (the API key of every control-plane client, the access token of
 * every sandbox daemon handle) and their removal from text the SDK shows: whatever a server
 * sends back is put into exceptions, and a server that echoes a key or token must not make the
 * SDK print it. {@link io.sandboxes.SandboxException} redacts its message and its causes through
 * this class when it is created.
 *
 * <p>Secrets are held weakly by the object that uses them, so a provider or sandbox handle that
 * is gone takes its secret with it. A secret shorter than {@link #MIN_LENGTH} characters is not
 * redacted: it is no secret worth the name, and replacing it would garble ordinary words.
 */
public final class Secrets {
  /** Shorter values are not taken for secrets. */
  public static final int MIN_LENGTH = 8;
  /** What a secret is replaced with. */
  public static final String MASK = "[redacted]";

  private static final Map<Object, String> HELD = Collections.synchronizedMap(new WeakHashMap<>());

  private Secrets() {}

  /** Records a secret used by {@code holder}, for as long as the holder is reachable. */
  public static void hold(Object holder, @Nullable String secret) {
    if (secret != null && secret.length() >= MIN_LENGTH) {
      HELD.put(holder, secret);
    }
  }

  private static List<String> held() {
    synchronized (HELD) {
      return new ArrayList<>(HELD.values());
    }
  }

  /** @return {@code text} with every held secret replaced by {@link #MASK}; null stays null */
  public static @Nullable String redact(@Nullable String text) {
    if (text == null || text.isEmpty()) {
      return text;
    }
    String out = text;
    for (String secret : held()) {
      if (out.contains(secret)) {
        out = out.replace(secret, MASK);
      }
    }
    return out;
  }

  /**
   * A cause fit to be carried by an SDK exception: itself when nothing in it (messages of it, its
   * causes and suppressed exceptions) shows a held secret; otherwise a copy of the chain whose
   * messages are redacted, each link keeping its original class name, text and stack trace.
   */
  public static @Nullable Throwable redact(@Nullable Throwable cause) {
    if (cause == null || !shows(cause, held(), Collections.newSetFromMap(new IdentityHashMap<>()))) {
      return cause;
    }
    return copy(cause, Collections.newSetFromMap(new IdentityHashMap<>()));
  }

  private static boolean shows(Throwable t, List<String> secrets, Set<Throwable> seen) {
    if (!seen.add(t)) {
      return false;
    }
    String text = t.toString();
    for (String s : secrets) {
      if (text.contains(s)) {
        return true;
      }
    }
    for (Throwable s : t.getSuppressed()) {
      if (shows(s, secrets, seen)) {
        return true;
      }
    }
    return t.getCause() != null && shows(t.getCause(), secrets, seen);
  }

  private static Throwable copy(Throwable t, Set<Throwable> seen) {
    if (!seen.add(t)) {
      return new Redacted(t.getClass().getName(), "(a cycle in the cause chain)", null);
    }
    Throwable cause = t.getCause() == null ? null : copy(t.getCause(), seen);
    Redacted r = new Redacted(t.getClass().getName(), redact(t.getMessage()), cause);
    r.setStackTrace(t.getStackTrace());
    for (Throwable s : t.getSuppressed()) {
      r.addSuppressed(copy(s, seen));
    }
    return r;
  }

  /** Stands in for a cause whose text showed a secret: same class name and trace, redacted text. */
  public static final class Redacted extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final String originalClass;

    Redacted(String originalClass, @Nullable String message, @Nullable Throwable cause) {
      super(message, cause);
      this.originalClass = originalClass;
    }

    /** @return the class of the exception this stands in for */
    public String originalClass() {
      return originalClass;
    }

    @Override
    public String toString() {
      String m = getLocalizedMessage();
      return originalClass + " (redacted)" + (m == null ? "" : ": " + m);
    }
  }
}
