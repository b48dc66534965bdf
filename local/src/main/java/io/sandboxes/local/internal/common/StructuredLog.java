package io.sandboxes.local.internal.common;

import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;

/**
 * The server's {@code key=value} log lines, on whichever SLF4J the user's project has. SLF4J 2's
 * fluent API ({@code logger.atInfo().addKeyValue(..)}) is not in SLF4J 1.7, which many projects
 * still resolve (Testcontainers 1.x brings it, and Maven may well pick it over ours); calling it
 * there fails with {@code NoSuchMethodError}. Written like the fluent API:
 * {@code StructuredLog.atInfo(LOG).addKeyValue("event", "sandbox.created").log("sandbox created")}.
 * On SLF4J 2 it is the fluent API, so a backend that keeps key-value pairs gets them as pairs; on
 * 1.7 the pairs lead the message as {@code key=value} words, as SLF4J 2 prints them for a backend
 * without key-value support.
 */
public final class StructuredLog {
  private static final boolean FLUENT = fluentApi();

  private final Logger logger;
  private final Level level;
  private final List<Object[]> pairs = new ArrayList<>(8);

  private StructuredLog(Logger logger, Level level) {
    this.logger = logger;
    this.level = level;
  }

  /** The levels the server logs its events at. */
  private enum Level { DEBUG, INFO, WARN }

  /**
   * Begins an INFO line.
   *
   * @param logger the class's logger
   * @return the line, to add pairs to and log
   */
  public static StructuredLog atInfo(Logger logger) {
    return new StructuredLog(logger, Level.INFO);
  }

  /**
   * Begins a WARN line.
   *
   * @param logger the class's logger
   * @return the line, to add pairs to and log
   */
  public static StructuredLog atWarn(Logger logger) {
    return new StructuredLog(logger, Level.WARN);
  }

  /**
   * Begins a DEBUG line.
   *
   * @param logger the class's logger
   * @return the line, to add pairs to and log
   */
  public static StructuredLog atDebug(Logger logger) {
    return new StructuredLog(logger, Level.DEBUG);
  }

  /**
   * Adds a pair, in order.
   *
   * @param key the key
   * @param value the value, printed with {@code String.valueOf}
   * @return this line
   */
  public StructuredLog addKeyValue(String key, Object value) {
    pairs.add(new Object[] {key, value});
    return this;
  }

  /**
   * Logs the line, if its level is enabled.
   *
   * @param message the message, with SLF4J's {@code {}} placeholders for the arguments
   * @param args the arguments (a last {@link Throwable} is logged as the line's exception)
   */
  public void log(String message, Object... args) {
    if (!enabled()) {
      return;
    }
    if (FLUENT) {
      Fluent.log(logger, level, pairs, message, args);
      return;
    }
    StringBuilder line = new StringBuilder();
    for (Object[] pair : pairs) {
      line.append(pair[0]).append('=').append(pair[1]).append(' ');
    }
    line.append(message);
    switch (level) {
      case DEBUG -> logger.debug(line.toString(), args);
      case INFO -> logger.info(line.toString(), args);
      case WARN -> logger.warn(line.toString(), args);
    }
  }

  private boolean enabled() {
    return switch (level) {
      case DEBUG -> logger.isDebugEnabled();
      case INFO -> logger.isInfoEnabled();
      case WARN -> logger.isWarnEnabled();
    };
  }

  private static boolean fluentApi() {
    try {
      Logger.class.getMethod("atInfo");
      return true;
    } catch (NoSuchMethodException e) {
      return false;
    }
  }

  /** The SLF4J 2 path, in a class of its own so that SLF4J 1.7 never links it. */
  private static final class Fluent {
    private Fluent() {}

    static void log(Logger logger, Level level, List<Object[]> pairs, String message, Object... args) {
      org.slf4j.spi.LoggingEventBuilder event = switch (level) {
        case DEBUG -> logger.atDebug();
        case INFO -> logger.atInfo();
        case WARN -> logger.atWarn();
      };
      for (Object[] pair : pairs) {
        event = event.addKeyValue((String) pair[0], pair[1]);
      }
      event.log(message, args);
    }
  }
}
