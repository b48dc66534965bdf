package io.sandboxes.local.internal.http;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.annotation.JsonDeserialize;
import com.fasterxml.jackson.databind.deser.std.StdDeserializer;
import io.sandboxes.e2b.internal.Json;
import io.sandboxes.local.internal.common.RpcError;
import io.sandboxes.local.internal.http.RequestBody.Refusal;
import java.io.IOException;
import java.util.Base64;
import org.jspecify.annotations.Nullable;

/**
 * The request messages of envd's process calls after {@code Start} (Connect, SendInput,
 * SendSignal, CloseStdin, Update), with the field names Connect's JSON gives them. A null field
 * is an absent one, as Connect's JSON reads it; texts are read leniently, as they always were.
 */
final class ProcessBodies {
  /** The refusal of a selector whose pid is no whole number. */
  static final String PID = "'process.pid' must be a whole number";

  private ProcessBodies() {}

  /** {@code ProcessSelector}: a pid (a whole number, or its text), else a tag (any value's text). */
  record Selector(@JsonDeserialize(using = WholeNumber.class) @Nullable Integer pid,
      @JsonDeserialize(using = Lenient.Text.class) @Nullable String tag) {}

  /** {@code ConnectRequest} and {@code CloseStdinRequest}: the process. A selector that is no object selects nothing. */
  record SelectBody(@Refusal(PID) @JsonDeserialize(using = Lenient.Part.class) @Nullable Selector process) {}

  /** {@code SendInputRequest}: the process and its input. */
  record SendInputBody(@Refusal(PID) @JsonDeserialize(using = Lenient.Part.class) @Nullable Selector process,
      @JsonDeserialize(using = Lenient.Part.class) @Nullable Input input) {

    /** The input's base64 text: its pty's when it has one, else its stdin's, else none. */
    String base64() {
      Input in = input;
      if (in == null) {
        return "";
      }
      return in.pty() != null ? in.pty() : in.stdin() != null ? in.stdin() : "";
    }

    /** The field {@link #base64()} was read from, as a refusal names it. */
    String base64Field() {
      return input != null && input.pty() != null ? "input.pty" : "input.stdin";
    }

    /**
     * The input's bytes: its text as base64, else as base64url (Connect's JSON accepts both).
     *
     * @throws RpcError {@code invalid_argument} naming the field, for text that is neither
     */
    byte[] bytes() throws RpcError {
      String b64 = base64();
      try {
        return Base64.getDecoder().decode(b64);
      } catch (IllegalArgumentException e) {
        try {
          return Base64.getUrlDecoder().decode(b64);
        } catch (IllegalArgumentException notUrl) {
          throw new RpcError("invalid_argument", "'" + base64Field() + "' must be base64");
        }
      }
    }
  }

  /** {@code ProcessInput}: bytes for stdin or for a PTY, as base64 text (any value read as its text). */
  record Input(@JsonDeserialize(using = Lenient.Text.class) @Nullable String stdin,
      @JsonDeserialize(using = Lenient.Text.class) @Nullable String pty) {}

  /** {@code SendSignalRequest}: the process and the signal. */
  record SendSignalBody(@Refusal(PID) @JsonDeserialize(using = Lenient.Part.class) @Nullable Selector process,
      @Nullable Signal signal) {}

  /**
   * A {@code Signal} as Connect's JSON writes the enum, by name ({@code "SIGNAL_SIGKILL"}) or by
   * number (a number's whole part, a text as written); kept with the value as it was written, which
   * a refusal shows.
   */
  @JsonDeserialize(using = SignalReader.class)
  record Signal(String key, String written) {
    /** No signal given. */
    static final Signal NONE = new Signal("", "");
  }

  /** {@code UpdateRequest}: the process and its PTY's new size, read as {@code Start}'s is. */
  record UpdateBody(@Refusal(PID) @JsonDeserialize(using = Lenient.Part.class) @Nullable Selector process,
      @JsonDeserialize(using = Lenient.Part.class) ProcessRpcs.StartBody.@Nullable Pty pty) {}

  /** Reads a {@link Signal}; a null one is written as {@code null}. */
  static final class SignalReader extends StdDeserializer<Signal> {
    SignalReader() {
      super(Signal.class);
    }

    @Override
    public Signal deserialize(JsonParser p, DeserializationContext ctxt) throws IOException {
      JsonNode n = p.readValueAsTree();
      if (n == null) {
        return Signal.NONE;
      }
      return new Signal(n.isNumber() ? Integer.toString(n.asInt()) : n.asText(""), n.toString());
    }

    @Override
    public Signal getNullValue(DeserializationContext ctxt) {
      return new Signal("", "null");
    }

    @Override
    public @Nullable Object getAbsentValue(DeserializationContext ctxt) {
      return null;
    }
  }

  /**
   * A 32-bit integer as Connect's JSON writes one: a number with no fraction, or its decimal text;
   * anything else does not fit.
   */
  static final class WholeNumber extends StdDeserializer<Integer> {
    WholeNumber() {
      super(Integer.class);
    }

    @Override
    public Integer deserialize(JsonParser p, DeserializationContext ctxt) throws IOException {
      Integer v = Json.exactInt(p.readValueAsTree());
      return v != null ? v : (Integer) ctxt.handleUnexpectedToken(Integer.class, p);
    }
  }
}
