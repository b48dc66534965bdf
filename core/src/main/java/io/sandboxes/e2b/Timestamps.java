package io.sandboxes.e2b;

import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import org.jspecify.annotations.Nullable;

/** UTC ISO-8601 with exactly three fractional digits, as the provider contract reports times. */
final class Timestamps {
  private static final DateTimeFormatter ISO_MILLIS = DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSS'Z'").withZone(ZoneOffset.UTC);

  private Timestamps() {}

  static String isoMillis(Instant instant) {
    return ISO_MILLIS.format(instant);
  }

  /** @return the time a server wrote, or null when absent or unreadable */
  static @Nullable Instant instant(@Nullable String value) {
    if (value == null || value.isBlank()) {
      return null;
    }
    try {
      return OffsetDateTime.parse(value).toInstant();
    } catch (DateTimeParseException e) {
      try {
        return Instant.parse(value);
      } catch (DateTimeParseException again) {
        return null;
      }
    }
  }
}
