package io.sandboxes.e2b.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.sandboxes.CodeChart;
import io.sandboxes.CodeResult;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * E2B's {@code chart} and {@code data} result fields as the Java SDK reads them, in the shapes
 * E2B's cloud sends (the local template's are tested end to end in the local module).
 */
class CodeResultParsingTest {

  private static CodeResult parse(String json) throws Exception {
    return CodeInterpreter.result(Json.parse(json.getBytes(StandardCharsets.UTF_8)));
  }

  @Test
  @DisplayName("a box-and-whisker chart from E2B's cloud comes typed; elements of a shape its type lacks are left to the JSON")
  void boxAndWhisker() throws Exception {
    CodeResult r = parse("""
        {"type":"result","is_main_result":false,"png":"iVBORw0K","chart":{"type":"box_and_whisker","title":"Spread",
         "x_label":"Class","y_label":"Score (pt)","x_unit":null,"y_unit":"pt","elements":[
          {"label":"A","min":1,"first_quartile":2,"median":3,"third_quartile":4,"max":5,"outliers":[9.5]},
          {"label":"broken"}]}}
        """);
    CodeChart chart = r.chart();
    assertThat(chart.type()).isEqualTo(CodeChart.Type.BOX_AND_WHISKER);
    assertThat(chart.title()).isEqualTo("Spread");
    assertThat(chart.xUnit()).isNull();
    assertThat(chart.yUnit()).isEqualTo("pt");
    assertThat(chart.elements()).containsExactly(new CodeChart.Box("A", 1, 2, 3, 4, 5, List.of(9.5)));
    assertThat(chart.json()).contains("\"broken\"");
    assertThat(r.extra()).isEmpty();
    assertThat(r.formats()).containsExactly("png", "chart");
  }

  @Test
  @DisplayName("bars, series with numbers, text and null coordinates, and a superchart's charts come typed")
  void barsSeriesSuperchart() throws Exception {
    CodeChart chart = parse("""
        {"type":"result","chart":{"type":"superchart","title":"Both","elements":[
          {"type":"bar","title":null,"x_label":"Shop","y_label":"Sold","elements":[{"label":"a","group":"2024","value":4.5}]},
          {"type":"line","elements":[{"label":"Line 0","points":[[1,2.5],["2024-01-02T00:00:00",null]]}],"x_scale":"datetime"}]}}
        """).chart();
    assertThat(chart.type()).isEqualTo(CodeChart.Type.SUPERCHART);
    assertThat(chart.title()).isEqualTo("Both");
    assertThat(chart.elements()).hasSize(2);
    CodeChart bars = ((CodeChart.Subchart) chart.elements().get(0)).chart();
    assertThat(bars.type()).isEqualTo(CodeChart.Type.BAR);
    assertThat(bars.title()).isNull();
    assertThat(bars.xLabel()).isEqualTo("Shop");
    assertThat(bars.elements()).containsExactly(new CodeChart.Bar("a", "2024", 4.5));
    CodeChart line = ((CodeChart.Subchart) chart.elements().get(1)).chart();
    assertThat(line.elements()).containsExactly(new CodeChart.Series("Line 0",
        List.of(new CodeChart.Point(1.0, 2.5), new CodeChart.Point("2024-01-02T00:00:00", null))));
    assertThat(line.json()).contains("\"x_scale\":\"datetime\"");
  }

  @Test
  @DisplayName("a chart type not known yet is UNKNOWN with no elements; an empty chart object is no chart")
  void unknownAndEmpty() throws Exception {
    CodeChart chart = parse("{\"type\":\"result\",\"chart\":{\"type\":\"heatmap\",\"elements\":[{\"x\":1}]}}").chart();
    assertThat(chart.type()).isEqualTo(CodeChart.Type.UNKNOWN);
    assertThat(chart.elements()).isEmpty();
    assertThat(parse("{\"type\":\"result\",\"chart\":{}}").chart()).isNull();
    assertThat(parse("{\"type\":\"result\",\"text\":\"2\"}").chart()).isNull();
  }

  @Test
  @DisplayName("data keeps its column order and nulls, numbers as Long or Double, nested values as lists and maps")
  void data() throws Exception {
    CodeResult r = parse("""
        {"type":"result","is_main_result":true,"text":"  a","data":{"z":[1,null,2.5],"a":["x",true,[1,{"k":"v"}]]}}
        """);
    assertThat(r.data().keySet()).containsExactly("z", "a");
    assertThat(r.data().get("z")).isEqualTo(Arrays.asList(1L, null, 2.5));
    assertThat(r.data().get("a")).isEqualTo(List.of("x", true, List.of(1L, Map.of("k", "v"))));
    assertThat(r.formats()).containsExactly("text", "data");
    assertThat(r.extra()).isEmpty();
  }
}
