package io.sandboxes.local.internal.http;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonSetter;
import com.fasterxml.jackson.annotation.Nulls;
import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.BeanProperty;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.JavaType;
import com.fasterxml.jackson.databind.JsonDeserializer;
import com.fasterxml.jackson.databind.annotation.JsonDeserialize;
import com.fasterxml.jackson.databind.deser.ContextualDeserializer;
import com.fasterxml.jackson.databind.deser.std.NumberDeserializers;
import com.fasterxml.jackson.databind.deser.std.StdDeserializer;
import com.fasterxml.jackson.databind.module.SimpleModule;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MapperFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.cfg.CoercionAction;
import com.fasterxml.jackson.databind.cfg.CoercionInputShape;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.type.LogicalType;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sandboxes.e2b.internal.Json;
import io.sandboxes.local.internal.common.RpcError;
import java.io.IOException;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.lang.reflect.RecordComponent;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.RoundingMode;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * Binds a request body (a JSON object) to a request record, as strictly as the server has always
 * read it: no scalar coercion (a text is no number, a number no text, a number no flag), a list
 * no single value, no null inside a list or map, unknown fields ignored (E2B's SDKs send fields
 * this server does not know). A number of seconds may be fractional: a {@link Long} is read as the
 * number's floor, its whole part when positive, while a negative fraction stays negative (-0.5 is
 * refused wherever -1 is; -0.0 is 0). A {@link BigInteger} must be whole. Fields read leniently say so with a {@link Lenient}
 * deserializer.
 *
 * <p>The record's components are bound in their declared order, which is the order its fields
 * are checked in: the first that cannot be bound is refused with its {@link Refusal}.
 */
final class RequestBody {
  /** The message a component is refused with when its value is not of its type. */
  @Retention(RetentionPolicy.RUNTIME)
  @Target({ElementType.RECORD_COMPONENT, ElementType.PARAMETER, ElementType.FIELD, ElementType.METHOD})
  @interface Refusal {
    /** The message for a value that is not of the component's type. */
    String value();

    /**
     * The message for an entry of a map (or an element of a list) that is not of its type, with
     * {@code %s} for the entry's key (or index); empty when {@link #value} covers entries too.
     */
    String entry() default "";
  }

  private static final ObjectMapper STRICT = JsonMapper.builder()
      .disable(MapperFeature.ALLOW_COERCION_OF_SCALARS)
      .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
      .disable(DeserializationFeature.ACCEPT_SINGLE_VALUE_AS_ARRAY)
      .disable(DeserializationFeature.UNWRAP_SINGLE_VALUE_ARRAYS)
      .enable(DeserializationFeature.ACCEPT_FLOAT_AS_INT)
      .withCoercionConfigDefaults(c -> c.setCoercion(CoercionInputShape.String, CoercionAction.Fail)
          .setCoercion(CoercionInputShape.EmptyString, CoercionAction.Fail))
      // a number or flag is no text (by default Jackson writes it as one)
      .withCoercionConfig(LogicalType.Textual, c -> c.setCoercion(CoercionInputShape.Integer, CoercionAction.Fail)
          .setCoercion(CoercionInputShape.Float, CoercionAction.Fail)
          .setCoercion(CoercionInputShape.Boolean, CoercionAction.Fail))
      .withCoercionConfig(LogicalType.Boolean, c -> c.setCoercion(CoercionInputShape.Integer, CoercionAction.Fail)
          .setCoercion(CoercionInputShape.Float, CoercionAction.Fail))
      .withCoercionConfig(BigInteger.class, c -> c.setCoercion(CoercionInputShape.Float, CoercionAction.Fail))
      // a null inside a list or map is refused, as a value of the wrong type
      .defaultSetterInfo(JsonSetter.Value.forContentNulls(Nulls.FAIL))
      .addModule(new SimpleModule("floored-longs").addDeserializer(Long.class, new FlooredLong()))
      .build();

  /** A {@link Long} as Jackson reads one, except that a fraction counts as its floor (Jackson truncates toward zero). */
  static final class FlooredLong extends StdDeserializer<Long> {
    private final NumberDeserializers.LongDeserializer whole = new NumberDeserializers.LongDeserializer(Long.class, null);

    FlooredLong() {
      super(Long.class);
    }

    @Override
    public @Nullable Long deserialize(JsonParser p, DeserializationContext ctxt) throws IOException {
      if (p.currentToken() != JsonToken.VALUE_NUMBER_FLOAT) {
        return whole.deserialize(p, ctxt);
      }
      BigDecimal floor = p.getDecimalValue().setScale(0, RoundingMode.FLOOR);
      try {
        return floor.longValueExact();
      } catch (ArithmeticException outOfRange) {
        return (Long) ctxt.handleWeirdNumberValue(Long.class, floor, "not a whole number of seconds that fits a long");
      }
    }
  }

  private RequestBody() {}

  /** Reads a control-plane body ({@link Bodies#readJson}) and binds it. */
  static <R extends Record> R read(Exchange ex, Class<R> type) throws RpcError, IOException {
    return bind(Bodies.readJson(ex), type);
  }

  /** Binds a JSON object to {@code type}, refusing the first component (in declared order) that does not fit. */
  static <R extends Record> R bind(JsonNode body, Class<R> type) throws RpcError {
    // Jackson binds in the body's order and stops at the first misfit: put the fields in the record's order
    ObjectNode ordered = Json.object();
    for (String name : JSON_NAMES.get(type)) {
      JsonNode v = body.get(name);
      if (v != null) {
        ordered.set(name, v);
      }
    }
    for (Map.Entry<String, JsonNode> e : body.properties()) {
      if (!ordered.has(e.getKey())) {
        ordered.set(e.getKey(), e.getValue());
      }
    }
    try {
      return STRICT.treeToValue(ordered, type);
    } catch (JsonMappingException e) {
      throw refusal(type, e);
    } catch (JacksonException | IllegalArgumentException e) {
      throw new RpcError("invalid_argument", "request body does not fit: " + e.getMessage());
    }
  }

  /**
   * A field bound when it is checked rather than with its record, for bodies whose fields are
   * checked between other checks (a create's template is looked up before its environment is
   * read): the value is bound by the same strict rules, and refused with the component's
   * {@link Refusal}, at the point the route asks for it.
   *
   * @param <T> the field's type
   */
  @JsonDeserialize(using = LaterReader.class)
  static final class Later<T> {
    private final JsonNode node;
    private final JavaType type;
    private final String refusal;
    private final String entryRefusal;

    Later(JsonNode node, JavaType type, String refusal, String entryRefusal) {
      this.node = node;
      this.type = type;
      this.refusal = refusal;
      this.entryRefusal = entryRefusal;
    }

    /** The value, null when the field is JSON null; refused when it is not of its type. */
    @Nullable T value() throws RpcError {
      if (node.isNull()) {
        return null;
      }
      try {
        return STRICT.treeToValue(node, type);
      } catch (JsonMappingException e) {
        throw new RpcError("invalid_argument", entryRefusal(e));
      } catch (JacksonException | IllegalArgumentException e) {
        throw new RpcError("invalid_argument", refusal);
      }
    }

    /** The entry's own refusal when an entry (named by the error's path) is what did not fit, else the field's. */
    private String entryRefusal(JsonMappingException e) {
      if (entryRefusal.isEmpty() || e.getPath().isEmpty()) {
        return refusal;
      }
      JsonMappingException.Reference at = e.getPath().get(0);
      String key = at.getFieldName() != null ? at.getFieldName() : at.getIndex() >= 0 ? Integer.toString(at.getIndex()) : null;
      return key == null ? refusal : String.format(entryRefusal, key);
    }

    /** The value of a field that may be absent (null) or JSON null: null for both. */
    static <T> @Nullable T of(@Nullable Later<T> field) throws RpcError {
      return field == null ? null : field.value();
    }
  }

  /** Keeps a {@link Later} field's value and type for when it is checked. */
  static final class LaterReader extends StdDeserializer<Later<?>> implements ContextualDeserializer {
    private final @Nullable JavaType type;
    private final String refusal;
    private final String entryRefusal;

    LaterReader() {
      this(null, "", "");
    }

    private LaterReader(@Nullable JavaType type, String refusal, String entryRefusal) {
      super(Later.class);
      this.type = type;
      this.refusal = refusal;
      this.entryRefusal = entryRefusal;
    }

    @Override
    public JsonDeserializer<?> createContextual(DeserializationContext ctxt, @Nullable BeanProperty property) {
      JavaType t = property == null ? ctxt.getContextualType() : property.getType();
      Refusal r = property == null ? null : property.getAnnotation(Refusal.class);
      return new LaterReader(t.containedTypeOrUnknown(0), r == null ? "request body does not fit" : r.value(), r == null ? "" : r.entry());
    }

    @Override
    public Later<?> deserialize(JsonParser p, DeserializationContext ctxt) throws IOException {
      JsonNode n = p.readValueAsTree();
      return new Later<>(n == null ? NullNode.getInstance() : n, java.util.Objects.requireNonNull(type), refusal, entryRefusal);
    }

    @Override
    public Later<?> getNullValue(DeserializationContext ctxt) {
      return new Later<>(NullNode.getInstance(), java.util.Objects.requireNonNull(type), refusal, entryRefusal);
    }

    @Override
    public @Nullable Object getAbsentValue(DeserializationContext ctxt) {
      return null;
    }
  }

  private static RpcError refusal(Class<?> type, JsonMappingException e) {
    if (!e.getPath().isEmpty()) {
      JsonMappingException.Reference first = e.getPath().get(0);
      for (RecordComponent c : type.getRecordComponents()) {
        Refusal r = c.getAnnotation(Refusal.class);
        if (r != null && jsonName(c).equals(first.getFieldName())) {
          return new RpcError("invalid_argument", r.value());
        }
      }
    }
    return new RpcError("invalid_argument", "request body does not fit: " + e.getOriginalMessage());
  }

  /** A record's JSON field names in its components' order, read once per record (reflection on every request cost more than the binding). */
  private static final ClassValue<List<String>> JSON_NAMES = new ClassValue<>() {
    @Override
    protected List<String> computeValue(Class<?> type) {
      return java.util.Arrays.stream(type.getRecordComponents()).map(RequestBody::jsonName).toList();
    }
  };

  private static String jsonName(RecordComponent c) {
    JsonProperty p = c.getAccessor().getAnnotation(JsonProperty.class);
    return p == null || p.value().isEmpty() ? c.getName() : p.value();
  }
}
