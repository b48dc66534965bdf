package io.sandboxes;

import java.util.List;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/**
 * A chart the code interpreter read from a figure the code displayed (E2B's {@code chart}
 * result, from a matplotlib figure): its type, title, axis labels and its elements, typed by
 * kind. The figure itself comes in the same {@link CodeResult} as a PNG.
 *
 * <p>A line or scatter chart holds {@link Series}, a bar chart {@link Bar}s, a pie chart
 * {@link Slice}s, a box-and-whisker chart {@link Box}es, and a {@link Type#SUPERCHART} (a figure
 * of several axes) one {@link Subchart} per axes. Everything else the interpreter sent (ticks,
 * scales) is in {@link #json()}.
 *
 * @param type the kind of chart; {@link Type#UNKNOWN} for a figure of mixed or unrecognised artists
 * @param title the title, or {@code null}
 * @param xLabel the x axis's label, or {@code null} (for bar charts, the categories' axis)
 * @param yLabel the y axis's label, or {@code null} (for bar charts, the values' axis)
 * @param xUnit the unit in the x label's {@code (...)} or {@code [...]}, or {@code null}
 * @param yUnit the unit in the y label's {@code (...)} or {@code [...]}, or {@code null}
 * @param elements the chart's elements, in the figure's order
 * @param json the chart as the interpreter sent it, as JSON text
 * @since 0.1
 */
public record CodeChart(Type type, @Nullable String title, @Nullable String xLabel, @Nullable String yLabel,
    @Nullable String xUnit, @Nullable String yUnit, List<Element> elements, String json) {

  /** Copies the elements. */
  public CodeChart {
    elements = List.copyOf(elements);
  }

  /** The kinds of chart, by E2B's names. */
  public enum Type {
    /** Lines; elements are {@link Series}. */
    LINE,
    /** Points; elements are {@link Series}. */
    SCATTER,
    /** Bars; elements are {@link Bar}s. */
    BAR,
    /** A pie; elements are {@link Slice}s. */
    PIE,
    /** Boxes and whiskers; elements are {@link Box}es. */
    BOX_AND_WHISKER,
    /** A figure of several charts; elements are {@link Subchart}s. */
    SUPERCHART,
    /** Anything else: no elements. */
    UNKNOWN;

    /**
     * Returns the type E2B names so ({@code line}, {@code box_and_whisker}, ...), or {@link #UNKNOWN}.
     *
     * @param name E2B's name of a chart type
     * @return the type E2B names so, or {@link #UNKNOWN}
     */
    public static Type of(@Nullable String name) {
      if (name != null) {
        for (Type t : values()) {
          if (t.name().equals(name.toUpperCase(Locale.ROOT))) {
            return t;
          }
        }
      }
      return UNKNOWN;
    }
  }

  /** One element of a chart: a {@link Series}, {@link Bar}, {@link Slice}, {@link Box} or {@link Subchart}. */
  public sealed interface Element permits Series, Bar, Slice, Box, Subchart {}

  /**
   * One chart of a {@link Type#SUPERCHART}: one axes of the figure.
   *
   * @param chart the axes' chart
   */
  public record Subchart(CodeChart chart) implements Element {}

  /**
   * One line of a line chart, or one set of points of a scatter chart.
   *
   * @param label the legend's label ({@code Line 0} ... when the code gave none)
   * @param points the points, in order
   */
  public record Series(String label, List<Point> points) implements Element {
    /** Copies the points. */
    public Series {
      points = List.copyOf(points);
    }
  }

  /**
   * A point: each coordinate a {@link Double}, or a {@link String} (a category, or a date as
   * ISO 8601 text), or {@code null} (not a finite number).
   *
   * @param x the x coordinate
   * @param y the y coordinate
   */
  public record Point(@Nullable Object x, @Nullable Object y) {}

  /**
   * One bar.
   *
   * @param label its category (the tick label under it)
   * @param group its series ({@code Group 0} ... when the code gave no label)
   * @param value its length
   */
  public record Bar(String label, String group, double value) implements Element {}

  /**
   * One slice of a pie.
   *
   * @param label its label
   * @param angle its angle, in degrees
   * @param radius its radius
   */
  public record Slice(String label, double angle, double radius) implements Element {}

  /**
   * One box of a box-and-whisker chart.
   *
   * @param label its category
   * @param min the lower whisker
   * @param firstQuartile the box's lower edge
   * @param median the median
   * @param thirdQuartile the box's upper edge
   * @param max the upper whisker
   * @param outliers the points beyond the whiskers
   */
  public record Box(String label, double min, double firstQuartile, double median, double thirdQuartile, double max,
      List<Double> outliers) implements Element {
    /** Copies the outliers. */
    public Box {
      outliers = List.copyOf(outliers);
    }
  }
}
