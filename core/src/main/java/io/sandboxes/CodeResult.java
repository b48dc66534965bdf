package io.sandboxes;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * One result of a code execution: the value of its last expression (the main result) or
 * something it displayed, such as a chart. Each representation the kernel gave is present; the
 * others are {@code null}.
 *
 * @param mainResult whether this is the value of the execution's last expression (else a display)
 * @param text the plain-text representation
 * @param html HTML
 * @param markdown Markdown
 * @param svg an SVG image's XML
 * @param png a PNG image's bytes
 * @param jpeg a JPEG image's bytes
 * @param pdf a PDF document's bytes
 * @param latex LaTeX
 * @param json a JSON representation, as JSON text
 * @param javascript JavaScript
 * @param data structured data (E2B's {@code data}): a pandas DataFrame as each column's name
 *     mapped to its values, in column order; values are {@link String}, {@link Boolean},
 *     {@link Long}, {@link Double}, {@code null} (a missing or non-finite value), or a
 *     {@link List} or {@link Map} of these; timestamps are ISO 8601 text. Unmodifiable; {@code null}
 *     when the result is not such data
 * @param chart the chart read from a displayed figure (E2B's {@code chart}), or {@code null}
 * @param extra any other representation, by MIME type, as JSON text
 * @since 0.1
 */
public record CodeResult(
    boolean mainResult,
    @Nullable String text,
    @Nullable String html,
    @Nullable String markdown,
    @Nullable String svg,
    byte @Nullable [] png,
    byte @Nullable [] jpeg,
    byte @Nullable [] pdf,
    @Nullable String latex,
    @Nullable String json,
    @Nullable String javascript,
    @Nullable Map<String, @Nullable Object> data,
    @Nullable CodeChart chart,
    Map<String, String> extra) {

  /** Copies the extra representations and the data (which may hold nulls). */
  public CodeResult {
    extra = Map.copyOf(extra);
    data = data == null ? null : java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(data));
  }

  /**
   * An image a result holds.
   *
   * @param mimeType {@code image/png}, {@code image/jpeg} or {@code image/svg+xml}
   * @param bytes the image file's bytes
   */
  public record Image(String mimeType, byte[] bytes) {}

  /**
   * Returns the images this result holds (PNG, JPEG, SVG), in that order; empty when none.
   *
   * @return the images this result holds (PNG, JPEG, SVG), in that order; empty when none
   */
  public List<Image> images() {
    List<Image> out = new ArrayList<>();
    if (png != null) {
      out.add(new Image("image/png", png));
    }
    if (jpeg != null) {
      out.add(new Image("image/jpeg", jpeg));
    }
    if (svg != null) {
      out.add(new Image("image/svg+xml", svg.getBytes(java.nio.charset.StandardCharsets.UTF_8)));
    }
    return out;
  }

  /**
   * Returns the representations present, by E2B's names ({@code text}, {@code png}, ...) and extra MIME types.
   *
   * @return the representations present, by E2B's names ({@code text}, {@code png}, ...) and extra MIME types
   */
  public List<String> formats() {
    List<String> out = new ArrayList<>();
    String[] names = {"text", "html", "markdown", "svg", "png", "jpeg", "pdf", "latex", "json", "javascript", "data", "chart"};
    Object[] values = {text, html, markdown, svg, png, jpeg, pdf, latex, json, javascript, data, chart};
    for (int i = 0; i < names.length; i++) {
      if (values[i] != null) {
        out.add(names[i]);
      }
    }
    out.addAll(extra.keySet().stream().sorted().toList());
    return out;
  }

  @Override
  public String toString() {
    return "CodeResult[" + (mainResult ? "main, " : "") + "formats=" + formats() + (text == null ? "" : ", text=" + text) + "]";
  }
}
