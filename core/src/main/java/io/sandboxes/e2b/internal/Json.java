package io.sandboxes.e2b.internal;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.LinkedHashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The one configured Jackson mapper of the project, and small helpers for reading wire JSON.
 * Unknown fields are ignored and absent values are left out, as E2B's own clients do. Internal:
 * no Jackson type appears in a public signature.
 */
public final class Json {
  public static final ObjectMapper MAPPER = new ObjectMapper()
      .configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false)
      .setSerializationInclusion(JsonInclude.Include.NON_NULL);

  private Json() {}

  public static ObjectNode object() {
    return MAPPER.createObjectNode();
  }

  public static ArrayNode array() {
    return MAPPER.createArrayNode();
  }

  public static byte[] bytes(JsonNode node) {
    try {
      return MAPPER.writeValueAsBytes(node);
    } catch (JsonProcessingException e) {
      throw new UncheckedIOException(e);
    }
  }

  public static String string(JsonNode node) {
    try {
      return MAPPER.writeValueAsString(node);
    } catch (JsonProcessingException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Parses JSON, throwing {@link IOException} for anything that is not JSON. */
  public static JsonNode parse(byte[] body) throws IOException {
    if (body.length == 0) {
      return MAPPER.createObjectNode();
    }
    return MAPPER.readTree(body);
  }

  public static @Nullable String text(JsonNode node, String field) {
    JsonNode v = node.get(field);
    return v == null || v.isNull() ? null : v.asText();
  }

  public static String requireText(JsonNode node, String field) {
    String v = text(node, field);
    if (v == null) {
      throw new IllegalArgumentException("field '" + field + "' is missing in " + abbreviate(node));
    }
    return v;
  }

  /**
   * The field as an int, read strictly.
   *
   * @return the value; {@code fallback} when the field is absent or null
   * @throws IllegalArgumentException when the field is there but is not an int (see {@link #exactInt})
   */
  public static int intValue(JsonNode node, String field, int fallback) {
    JsonNode v = node.get(field);
    if (v == null || v.isNull()) {
      return fallback;
    }
    Integer i = exactInt(v);
    if (i == null) {
      throw new IllegalArgumentException("field '" + field + "' is not an int: " + abbreviate(v));
    }
    return i;
  }

  /**
   * The field as a long, read strictly.
   *
   * @return the value; {@code fallback} when the field is absent or null
   * @throws IllegalArgumentException when the field is there but is not a long (see {@link #exactLong})
   */
  public static long longValue(JsonNode node, String field, long fallback) {
    JsonNode v = node.get(field);
    if (v == null || v.isNull()) {
      return fallback;
    }
    Long l = exactLong(v);
    if (l == null) {
      throw new IllegalArgumentException("field '" + field + "' is not a long: " + abbreviate(v));
    }
    return l;
  }

  /**
   * A JSON value as an int when it is exactly one: a number with no fraction within int range, or
   * a string of decimal digits within it (proto3's JSON mapping allows both). Anything else
   * (objects, arrays, booleans, fractions, values out of range, padded strings) is null: Jackson's
   * {@code asInt()} would read those as 0 or silently wrap them.
   *
   * @return the int, or null when {@code v} is null or not an int
   */
  public static @Nullable Integer exactInt(@Nullable JsonNode v) {
    Long l = exactLong(v);
    return l == null || l < Integer.MIN_VALUE || l > Integer.MAX_VALUE ? null : (int) (long) l;
  }

  /**
   * A JSON value as a long when it is exactly one; the rules of {@link #exactInt}, in long range.
   *
   * @return the long, or null when {@code v} is null or not a long
   */
  public static @Nullable Long exactLong(@Nullable JsonNode v) {
    if (v == null) {
      return null;
    }
    if (v.isNumber()) {
      return v.canConvertToExactIntegral() && v.canConvertToLong() ? v.longValue() : null;
    }
    if (v.isTextual()) {
      String t = v.asText();
      if (!t.matches("-?[0-9]{1,19}")) {
        return null;
      }
      try {
        return Long.parseLong(t);
      } catch (NumberFormatException outOfRange) {
        return null;
      }
    }
    return null;
  }

  public static Map<String, String> stringMap(@Nullable JsonNode node) {
    Map<String, String> out = new LinkedHashMap<>();
    if (node != null && node.isObject()) {
      node.properties().forEach(e -> out.put(e.getKey(), e.getValue().asText()));
    }
    return out;
  }

  public static ObjectNode toObject(Map<String, String> map) {
    ObjectNode node = object();
    map.forEach(node::put);
    return node;
  }

  public static Instant instant(JsonNode node, String field) {
    String v = requireText(node, field);
    try {
      return OffsetDateTime.parse(v).toInstant();
    } catch (DateTimeParseException e) {
      return Instant.parse(v);
    }
  }

  /**
   * Text of a value for a message: secrets the client holds are redacted before the text is cut
   * to 200 characters (so no secret is cut short and left showing), and the value of any
   * {@code envdAccessToken} field of a JSON value is masked (a token the client was just handed).
   */
  public static String abbreviate(@Nullable Object value) {
    String s = Secrets.redact(String.valueOf(value instanceof JsonNode node ? maskTokens(node) : value));
    return s.length() > 200 ? s.substring(0, 200) + "…" : s;
  }

  private static JsonNode maskTokens(JsonNode node) {
    if (!node.isContainerNode()) {
      return node;
    }
    JsonNode copy = node.deepCopy();
    mask(copy);
    return copy;
  }

  private static void mask(JsonNode node) {
    if (node instanceof ObjectNode o) {
      o.properties().forEach(e -> {
        if (e.getKey().equals("envdAccessToken") && e.getValue().isTextual()) {
          e.setValue(MAPPER.getNodeFactory().textNode(Secrets.MASK));
        } else {
          mask(e.getValue());
        }
      });
    } else if (node instanceof ArrayNode a) {
      a.forEach(Json::mask);
    }
  }
}
