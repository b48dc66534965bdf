package io.sandboxes.dsl;

/**
 * The DSL's log lines go where the rest of the SDK's go: to SLF4J, and so to the application's
 * logging backend, when SLF4J is on the class path (the local runtime brings it); without it they
 * are off. Never through {@code java.util.logging} (or {@code System.Logger}, which is JUL unless
 * something replaces it): its console handler printed an INFO line on every test run, and the only
 * way to quiet it was to change the application's JUL configuration for everything.
 */
final class Log {
  private static final boolean SLF4J = present("org.slf4j.LoggerFactory");

  private Log() {}

  static void info(Class<?> where, String message) {
    if (SLF4J) {
      Slf4j.info(where, message);
    }
  }

  private static boolean present(String className) {
    try {
      Class.forName(className, false, Log.class.getClassLoader());
      return true;
    } catch (ClassNotFoundException | LinkageError absent) {
      return false;
    }
  }

  /** Loaded only when SLF4J is there: the one place that names its types. */
  private static final class Slf4j {
    static void info(Class<?> where, String message) {
      org.slf4j.LoggerFactory.getLogger(where).info(message);
    }
  }
}
