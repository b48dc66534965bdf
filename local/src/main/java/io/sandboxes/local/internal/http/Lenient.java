package io.sandboxes.local.internal.http;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.BeanProperty;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.JavaType;
import com.fasterxml.jackson.databind.JsonDeserializer;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.annotation.JsonDeserialize;
import com.fasterxml.jackson.databind.deser.ContextualDeserializer;
import com.fasterxml.jackson.databind.deser.std.StdDeserializer;
import io.sandboxes.e2b.internal.Json;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The fields the server has always read leniently, as Jackson deserializers: any JSON value is
 * accepted and read as a text, a flag or a whole number by the rules of Jackson's own
 * {@code JsonNode.asText}, {@code asBoolean} and {@code asInt}. A request record declares such a
 * field with one of these on its component; every other field is bound strictly by
 * {@link RequestBody}.
 */
final class Lenient {
  private Lenient() {}

  /** A flag read as {@code asBoolean} reads it: true, false, or neither (then the field's default applies). */
  @JsonDeserialize(using = FlagReader.class)
  enum Flag {
    TRUE, FALSE, NEITHER;

    /** This flag, or {@code fallback} where the value says neither. */
    boolean or(boolean fallback) {
      return this == NEITHER ? fallback : this == TRUE;
    }

    /** An absent flag's value: {@code fallback}. */
    static boolean or(@Nullable Flag flag, boolean fallback) {
      return flag == null ? fallback : flag.or(fallback);
    }

    static Flag of(JsonNode node) {
      boolean a = node.asBoolean(false);
      return a != node.asBoolean(true) ? NEITHER : a ? TRUE : FALSE;
    }
  }

  /** Any value as its text: a number or boolean as written, an object or a list as empty, null as absent. */
  static final class Text extends StdDeserializer<String> {
    Text() {
      super(String.class);
    }

    @Override
    public String deserialize(JsonParser p, DeserializationContext ctxt) throws IOException {
      return p.readValueAsTree() instanceof JsonNode n ? n.asText() : "";
    }
  }

  /** Any value as a flag; a JSON null is {@link Flag#NEITHER}, an absent field Java's null. */
  static final class FlagReader extends StdDeserializer<Flag> {
    FlagReader() {
      super(Flag.class);
    }

    @Override
    public Flag deserialize(JsonParser p, DeserializationContext ctxt) throws IOException {
      return p.readValueAsTree() instanceof JsonNode n ? Flag.of(n) : Flag.NEITHER;
    }

    @Override
    public Flag getNullValue(DeserializationContext ctxt) {
      return Flag.NEITHER;
    }

    /** An absent field stays absent (Jackson would otherwise give a record's missing component the null value). */
    @Override
    public @Nullable Object getAbsentValue(DeserializationContext ctxt) {
      return null;
    }
  }

  /** Any value as a whole number by {@code asInt}'s rules; null where it has none (the field's default applies). */
  static final class Int extends StdDeserializer<Integer> {
    Int() {
      super(Integer.class);
    }

    @Override
    public @Nullable Integer deserialize(JsonParser p, DeserializationContext ctxt) throws IOException {
      if (!(p.readValueAsTree() instanceof JsonNode n)) {
        return null;
      }
      int a = n.asInt(0);
      return a == n.asInt(1) ? a : null;
    }
  }

  /** Any value as a list of texts: a list's (or an object's) values each as its text, anything else none. */
  static final class Texts extends StdDeserializer<List<String>> {
    Texts() {
      super(List.class);
    }

    @Override
    public List<String> deserialize(JsonParser p, DeserializationContext ctxt) throws IOException {
      List<String> out = new ArrayList<>();
      if (p.readValueAsTree() instanceof JsonNode n) {
        n.forEach(v -> out.add(v.asText()));
      }
      return out;
    }

    @Override
    public List<String> getNullValue(DeserializationContext ctxt) {
      return new ArrayList<>();
    }
  }

  /** Any value as a map of texts: an object's values each as its text, anything else empty. */
  static final class TextMap extends StdDeserializer<Map<String, String>> {
    TextMap() {
      super(Map.class);
    }

    @Override
    public Map<String, String> deserialize(JsonParser p, DeserializationContext ctxt) throws IOException {
      return p.readValueAsTree() instanceof JsonNode n ? Json.stringMap(n) : new LinkedHashMap<>();
    }

    @Override
    public Map<String, String> getNullValue(DeserializationContext ctxt) {
      return new LinkedHashMap<>();
    }
  }

  /**
   * A map's value as E2B's create sends its maps (envVars, metadata): any scalar as its text (a
   * number as Jackson writes it), a list, an object or null refused.
   */
  @JsonDeserialize(using = ScalarReader.class)
  record Scalar(String text) {
    /** A map of scalars as a map of their texts, in its order; empty for none. */
    static Map<String, String> texts(@Nullable Map<String, Scalar> map) {
      Map<String, String> out = new LinkedHashMap<>();
      if (map != null) {
        map.forEach((k, v) -> out.put(k, v.text()));
      }
      return out;
    }
  }

  /** Reads a {@link Scalar}. */
  static final class ScalarReader extends StdDeserializer<Scalar> {
    ScalarReader() {
      super(Scalar.class);
    }

    @Override
    public Scalar deserialize(JsonParser p, DeserializationContext ctxt) throws IOException {
      JsonNode n = p.readValueAsTree();
      if (n == null || !n.isValueNode() || n.isNull()) {
        return (Scalar) ctxt.handleUnexpectedToken(Scalar.class, p);
      }
      return new Scalar(n.asText());
    }
  }

  /**
   * A list (anything else refused) whose entries are each read as their text, as
   * {@code asText("")} reads them: a number or flag as written, null, a list or an object as
   * empty. For lists whose entries are checked by pattern after reading (a network's allow and
   * deny lists), so that an entry of the wrong type is refused by that check, naming it.
   */
  @JsonDeserialize(using = TextEntriesReader.class)
  record TextEntries(List<String> values) {}

  /** Reads {@link TextEntries}. */
  static final class TextEntriesReader extends StdDeserializer<TextEntries> {
    TextEntriesReader() {
      super(TextEntries.class);
    }

    @Override
    public TextEntries deserialize(JsonParser p, DeserializationContext ctxt) throws IOException {
      JsonNode n = p.readValueAsTree();
      if (n == null || !n.isArray()) {
        return (TextEntries) ctxt.handleUnexpectedToken(TextEntries.class, p);
      }
      List<String> out = new ArrayList<>();
      n.forEach(v -> out.add(v.asText("")));
      return new TextEntries(out);
    }
  }

  /**
   * A list (anything else does not fit) whose entries are each read as a record, an entry that is
   * no object as one with no fields: for lists whose entries were always looked up by path.
   *
   * @param <T> the entries' record type
   */
  @JsonDeserialize(using = PartsReader.class)
  record Parts<T>(List<T> values) {}

  /** Reads {@link Parts}, its entries' type from where it is bound. */
  static final class PartsReader extends StdDeserializer<Parts<?>> implements ContextualDeserializer {
    private final @Nullable JavaType entry;

    PartsReader() {
      this(null);
    }

    private PartsReader(@Nullable JavaType entry) {
      super(Parts.class);
      this.entry = entry;
    }

    @Override
    public JsonDeserializer<?> createContextual(DeserializationContext ctxt, @Nullable BeanProperty property) {
      JavaType t = property == null ? ctxt.getContextualType() : property.getType();
      return new PartsReader(t == null ? null : t.containedTypeOrUnknown(0));
    }

    @Override
    public Parts<?> deserialize(JsonParser p, DeserializationContext ctxt) throws IOException {
      JsonNode n = p.readValueAsTree();
      JavaType t = entry;
      if (n == null || !n.isArray() || t == null) {
        return (Parts<?>) ctxt.handleUnexpectedToken(Parts.class, p);
      }
      List<Object> out = new ArrayList<>();
      for (JsonNode e : n) {
        out.add(ctxt.readTreeAsValue(e.isObject() ? e : Json.object(), t));
      }
      return new Parts<>(out);
    }
  }

  /**
   * A nested record read from an object, or from nothing when the value is no object (its fields
   * are then all absent): for bodies whose nested parts were always looked up by path.
   */
  static final class Part extends StdDeserializer<Object> implements ContextualDeserializer {
    private final @Nullable JavaType type;

    Part() {
      this(null);
    }

    private Part(@Nullable JavaType type) {
      super(Object.class);
      this.type = type;
    }

    @Override
    public JsonDeserializer<?> createContextual(DeserializationContext ctxt, @Nullable BeanProperty property) {
      return new Part(property == null ? ctxt.getContextualType() : property.getType());
    }

    @Override
    public @Nullable Object deserialize(JsonParser p, DeserializationContext ctxt) throws IOException {
      JavaType t = type;
      if (t == null) {
        return null;
      }
      JsonNode n = p.readValueAsTree();
      return ctxt.readTreeAsValue(n != null && n.isObject() ? n : Json.object(), t);
    }
  }
}
