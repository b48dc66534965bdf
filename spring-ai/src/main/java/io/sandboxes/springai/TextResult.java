package io.sandboxes.springai;

import java.lang.reflect.Type;
import org.jspecify.annotations.Nullable;
import org.springframework.ai.tool.execution.ToolCallResultConverter;

/** Hands a tool's text to the model as it is, not as a JSON string literal (Spring AI's default). */
public final class TextResult implements ToolCallResultConverter {
  /** Made by Spring AI, once per tool. */
  public TextResult() {}

  @Override
  public String convert(@Nullable Object result, @Nullable Type returnType) {
    return String.valueOf(result);
  }
}
