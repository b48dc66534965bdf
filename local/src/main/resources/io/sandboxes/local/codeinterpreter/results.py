"""Rich results for the local code interpreter's kernels: E2B's two display formats of its own.

Part of the Sandboxes local runtime (the code-interpreter-v1 template); the bridge loads it into
each kernel it starts and calls install(get_ipython()). Two IPython formatters:

* e2b/data: a pandas DataFrame as {column: [values, ...]} (timestamps as ISO 8601 text),
* e2b/chart: a matplotlib Figure as a typed chart: {type, title, elements, ...} where type is
  line, scatter, bar, pie, box_and_whisker, superchart (one chart per axes in elements) or
  unknown; the 2D ones carry x_label, y_label, x_unit, y_unit (the text in "(...)" or "[...]" of
  a label), line and scatter also x_ticks, x_tick_labels, x_scale, y_ticks, y_tick_labels, y_scale.

And PIL images are shown as E2B's kernels show them: Image.save to a path (a str) displays the
image before writing the file, and Image.show() displays it instead of starting a desktop viewer.

None of this imports pandas, matplotlib or PIL itself: an object of theirs exists only once the
user's code imported them, and PIL is patched as its modules load, so a run that uses none of
them pays nothing. A figure that cannot be read gives no chart (never an empty one). Non-finite
numbers become null: JSON has no NaN.
"""
import datetime
import decimal
import math
import re
import sys

UNIT = re.compile(r"\s\((.*?)\)|\[(.*?)\]")


def install(shell):
    """Registers both formatters on an IPython shell."""
    from IPython.core.formatters import BaseFormatter
    from traitlets import ObjectName, Unicode

    class DataFormatter(BaseFormatter):
        format_type = Unicode("e2b/data")
        print_method = ObjectName("_repr_e2b_data_")
        _return_type = (dict, str)

        def __call__(self, obj):
            pandas = sys.modules.get("pandas")
            if pandas is not None and isinstance(obj, pandas.DataFrame):
                return dataframe(obj, pandas)
            return super().__call__(obj)

    class ChartFormatter(BaseFormatter):
        format_type = Unicode("e2b/chart")
        print_method = ObjectName("_repr_e2b_chart_")
        _return_type = (dict, str)

        def __call__(self, obj):
            figure_module = sys.modules.get("matplotlib.figure")
            if figure_module is not None and isinstance(obj, figure_module.Figure):
                try:
                    return figure_chart(obj)
                except Exception:  # noqa: BLE001 - a figure we cannot read has no chart, the PNG still goes
                    return None
            return super().__call__(obj)

    formatters = shell.display_formatter.formatters
    formatters["e2b/data"] = DataFormatter(parent=shell.display_formatter)
    formatters["e2b/chart"] = ChartFormatter(parent=shell.display_formatter)
    patch_on_import("PIL.Image", pil_image)
    patch_on_import("PIL.ImageShow", pil_image_show)


class PatchOnImport:
    """A meta path finder that finds nothing itself: it has the module named name found by the
    finders after it, and calls patch(module) once that module's code has run."""

    def __init__(self, name, patch):
        self.name = name
        self.patch = patch
        self.done = False

    def find_spec(self, fullname, path=None, target=None):
        if self.done or fullname != self.name:
            return None
        self.done = True  # also keeps the search below from coming back here
        spec = None
        for finder in list(sys.meta_path):
            find = getattr(finder, "find_spec", None)
            if finder is not self and find is not None:
                spec = find(fullname, path, target)
                if spec is not None:
                    break
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            self.done = False
            return spec
        run = spec.loader.exec_module
        patch = self.patch

        def exec_module(module):
            run(module)
            try:
                patch(module)
            except Exception:  # noqa: BLE001 - a PIL we cannot patch still imports
                pass

        spec.loader.exec_module = exec_module
        return spec


def patch_on_import(name, patch):
    if name in sys.modules:
        patch(sys.modules[name])
    else:
        sys.meta_path.insert(0, PatchOnImport(name, patch))


def pil_image(module):
    """Image.save(path) displays the image first, then writes the file, as E2B's kernels do; a
    file object or a path object is only written to."""
    save = module.Image.save

    def save_and_display(self, fp, format=None, **params):
        if isinstance(fp, str):
            from IPython.display import display
            display(self)
        return save(self, fp, format, **params)

    save_and_display.__doc__ = save.__doc__
    module.Image.save = save_and_display


def pil_image_show(module):
    """PIL's desktop viewers (xdg-open, display, eog, ...: the sandbox has no screen) decline at
    once, before writing a temporary file, so Image.show() reaches PIL's IPython viewer, which
    displays the image (once: a viewer's temporary file is written with Image.save)."""
    def declined(self, image, **options):
        return 0

    viewers = [module.UnixViewer]
    while viewers:
        viewer = viewers.pop()
        if viewer is module.UnixViewer or "show" in vars(viewer):
            viewer.show = declined
        viewers.extend(viewer.__subclasses__())


def plain(value):
    """A value JSON can carry: numpy scalars as Python numbers, dates as ISO text, NaN and infinities as None."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        return value.isoformat()
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        if isinstance(value, numpy.datetime64):
            return None if numpy.isnat(value) else str(value.astype("datetime64[s]"))
        if isinstance(value, numpy.bool_):
            return bool(value)
        if isinstance(value, numpy.integer):
            return int(value)
        if isinstance(value, numpy.floating):
            value = float(value)
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    pandas = sys.modules.get("pandas")
    if pandas is not None and value is pandas.NaT:
        return None
    return str(value)


def dataframe(frame, pandas):
    return {str(column): [None if v is pandas.NaT else plain(v) for v in values]
            for column, values in frame.to_dict(orient="list").items()}


def figure_chart(figure):
    axes = [ax for ax in figure.get_axes()]
    if not axes or not any(ax.has_data() for ax in axes):
        return None
    if len(axes) == 1:
        return axes_chart(axes[0])
    suptitle = getattr(figure, "_suptitle", None)
    title = suptitle.get_text() if suptitle is not None else ""
    return {"type": "superchart", "title": title or None, "elements": [axes_chart(ax) for ax in axes]}


def axes_chart(ax):
    kind = chart_type(ax)
    chart = {"type": kind, "title": ax.get_title() or None, "elements": []}
    if kind == "pie":
        chart["elements"] = [{"label": w.get_label(), "angle": pie_angle(w), "radius": plain(w.r)} for w in ax.patches]
        return chart
    if kind == "unknown":
        return chart
    labels(ax, chart)
    if kind == "bar":
        bars(ax, chart)
    elif kind == "box_and_whisker":
        boxes(ax, chart)
    else:
        ticks(ax, chart)
        if kind == "line":
            chart["elements"] = [{"label": line_label(line), "points": points(line.get_xdata(), line.get_ydata())}
                                 for line in ax.get_lines() if not is_grid_line(line)]
        else:
            chart["elements"] = [{"label": c.get_label(), "points": [[plain(x), plain(y)] for x, y in c.get_offsets()]}
                                 for c in ax.collections]
    return chart


def chart_type(ax):
    from matplotlib.collections import PathCollection
    from matplotlib.lines import Line2D
    from matplotlib.patches import PathPatch, Rectangle, Wedge
    from matplotlib.text import Text

    drawn = ax._children if hasattr(ax, "_children") else list(ax.lines) + list(ax.collections) + list(ax.patches)
    children = [c for c in drawn if not isinstance(c, Text)]
    if all(isinstance(c, Line2D) for c in children):
        return "line"
    # E2B's rule: boxes of ax.boxplot(patch_artist=True) are PathPatches; without patch_artist
    # they are lines, and the plot a line chart
    if all(isinstance(c, (PathPatch, Line2D)) for c in children):
        return "box_and_whisker"
    children = [c for c in children if not (isinstance(c, Line2D) and is_grid_line(c))]
    if all(isinstance(c, PathCollection) for c in children):
        return "scatter"
    if all(isinstance(c, Wedge) for c in children):
        return "pie"
    if all(isinstance(c, Rectangle) for c in children):
        return "bar"
    return "unknown"


def is_grid_line(line):
    """A straight horizontal or vertical two-point line: a reference line drawn over a chart."""
    x, y = line.get_xdata(), line.get_ydata()
    return len(x) == 2 and len(y) == 2 and (x[0] == x[1] or y[0] == y[1])


def labels(ax, chart):
    for axis in ("x", "y"):
        label = getattr(ax, "get_%slabel" % axis)() or None
        match = UNIT.search(label) if label else None
        chart["%s_label" % axis] = label
        chart["%s_unit" % axis] = (match.group(1) or match.group(2)) if match else None


def tick_labels(axis):
    locations = axis.get_majorticklocs()
    try:
        return locations, [str(t) for t in axis.get_major_formatter().format_ticks(locations)]
    except Exception:  # noqa: BLE001 - a formatter that cannot format alone: the drawn labels
        return locations, [t.get_text() for t in axis.get_ticklabels()]


def ticks(ax, chart):
    for name, axis, scale in (("x", ax.xaxis, ax.get_xscale()), ("y", ax.yaxis, ax.get_yscale())):
        locations, texts = tick_labels(axis)
        dates = is_date_axis(axis)
        if dates:
            import matplotlib.dates
            values = [matplotlib.dates.num2date(t).isoformat() for t in locations]
        else:
            values = [plain(float(t)) for t in locations]
        chart["%s_ticks" % name] = values
        chart["%s_tick_labels" % name] = texts
        chart["%s_scale" % name] = "datetime" if dates else scale if scale != "linear" else (
            "categorical" if is_categorical(axis) else "linear")


def is_date_axis(axis):
    import matplotlib.dates
    converter = getattr(axis, "converter", None)
    kinds = tuple(k for k in (getattr(matplotlib.dates, n, None) for n in
                              ("DateConverter", "ConciseDateConverter", "_SwitchableDateConverter")) if k is not None)
    return converter is not None and isinstance(converter, kinds)


def is_categorical(axis):
    import matplotlib.category
    return isinstance(getattr(axis, "converter", None), matplotlib.category.StrCategoryConverter)


def line_label(line):
    label = line.get_label()
    return "Line %s" % label[6:] if label.startswith("_child") and label[6:].isdigit() else label


def points(xs, ys):
    return [[plain(x), plain(y)] for x, y in zip(xs, ys)]


def rounded(value):
    """E2B's rounding of a pie's angles and a box plot's numbers: as many significant digits as 8
    less the value's power of ten (at least one), half to even. So 323.99999141693115 is 324.000
    (6 digits), 36.0000005364418 is 36.00000 (7), 1234.5678 is 1234.6 and 0.123456789 stays: the
    float noise of matplotlib's sums goes, the figures stay as E2B gives them."""
    if not isinstance(value, decimal.Decimal):
        value = plain(value)
        if value is None or isinstance(value, bool) or not isinstance(value, (int, float)):
            return None
        value = decimal.Decimal(str(value))
    if not value.is_finite():
        return None
    context = decimal.Context(prec=max(1, 8 - value.adjusted()), rounding=decimal.ROUND_HALF_EVEN)
    return float(context.plus(value))


def pie_angle(wedge):
    """The slice's angle: the exact difference of its two float angles, rounded as E2B rounds it."""
    difference = decimal.Context(prec=28).subtract(decimal.Decimal(float(wedge.theta2)), decimal.Decimal(float(wedge.theta1)))
    return rounded(difference.copy_abs())


def boxes(ax, chart):
    """One element per box of a box plot: {label, min, first_quartile, median, third_quartile, max,
    outliers}, E2B's box_and_whisker. The boxes are the axes' PathPatches, in order, each read from
    its outline and the lines at its position: the quartiles are the outline's two sides across
    the box; the median is a notched box's waist, else the first line across the full box (a mean
    line comes after it), else the first line across it; a whisker runs along the values from a
    quartile outwards (none: the quartile); the outliers are the last set of markers at the box's
    position beyond its whiskers (so that showmeans' marker is not one). Upright boxes' categories
    are on x; for sideways ones (vert=False) the axes' labels are swapped, as for bars, so x stays
    the categories' axis. A box without a median gives no chart."""
    from matplotlib.patches import PathPatch

    def marker_only(line):
        return line.get_linestyle() in ("None", "none", "", " ")

    lines = [([rounded(x) for x in line.get_xdata()], [rounded(y) for y in line.get_ydata()], marker_only(line))
             for line in ax.get_lines()]
    sideways = None
    for patch in (p for p in ax.patches if isinstance(p, PathPatch)):
        vertices = patch.get_path().vertices
        xs = [rounded(x) for x in vertices[:, 0]]
        ys = [rounded(y) for y in vertices[:, 1]]
        if len(xs) < 4 or None in xs or None in ys:
            raise ValueError("not a box")
        if sideways is None:  # matplotlib draws a box from the first quartile's corner across its width
            sideways = xs[0] == xs[1] and ys[0] != ys[1]
        positions, values = (ys, xs) if sideways else (xs, ys)
        low, high = min(positions), max(positions)
        # the outline goes across at the first quartile, up one side (past a notch) and back across at the third
        back = next((i for i in range(2, len(positions)) if positions[i] == positions[0]), None)
        q1, q3 = (values[0], values[back]) if back is not None else (min(values), max(values))
        waist = [v for p, v in zip(positions, values) if low < p < high]
        lower = upper = None
        across = []
        points = []
        for index, (line_xs, line_ys, markers) in enumerate(lines):
            at, value = (line_ys, line_xs) if sideways else (line_xs, line_ys)
            if not at or None in at or None in value or not all(low <= p <= high for p in at):
                continue
            if markers:
                points.append(value)
            elif len(at) == 2 and at[0] == at[1]:  # along the values: a whisker from a quartile
                if lower is None and max(value) == q1:
                    lower = min(value)
                elif upper is None and min(value) == q3:
                    upper = max(value)
            elif len(at) == 2 and value[0] == value[1] and q1 <= value[0] <= q3:
                across.append((min(at) != low or max(at) != high, index, value[0]))
        if waist:
            median = waist[0]
        elif across:
            median = min(across)[2]
        else:
            raise ValueError("a box without a median line")
        lower = q1 if lower is None else lower
        upper = q3 if upper is None else upper
        outliers = [value for value in points if all(v < lower or v > upper for v in value)]
        chart["elements"].append({"label": position_label(ax.yaxis if sideways else ax.xaxis, (low + high) / 2),
                                  "min": lower, "first_quartile": q1, "median": median, "third_quartile": q3,
                                  "max": upper, "outliers": outliers[-1] if outliers else []})
    if sideways:
        chart["x_label"], chart["y_label"] = chart["y_label"], chart["x_label"]
        chart["x_unit"], chart["y_unit"] = chart["y_unit"], chart["x_unit"]


def position_label(axis, position):
    """The label of the tick at a position on an axis, else the position itself."""
    locations, texts = tick_labels(axis)
    for location, text in zip(locations, texts):
        if round(float(location), 9) == round(float(position), 9):
            return text
    return "%g" % position


def bars(ax, chart):
    from matplotlib.container import BarContainer

    horizontal = False
    for container in ax.containers:
        if not isinstance(container, BarContainer):
            continue
        group = container.get_label() or ""
        if group.startswith("_container") and group[10:].isdigit():
            group = "Group %s" % group[10:]
        rects = list(container)
        orientation = getattr(container, "orientation", None)
        if orientation is None:  # older matplotlib: equal heights mean horizontal bars
            orientation = "horizontal" if len({r.get_height() for r in rects}) == 1 and len(rects) > 1 else "vertical"
        horizontal = orientation == "horizontal"
        axis = ax.yaxis if horizontal else ax.xaxis
        locations, texts = tick_labels(axis)
        by_location = {round(float(loc), 9): text for loc, text in zip(locations, texts)}
        for rect in rects:
            center = rect.get_y() + rect.get_height() / 2 if horizontal else rect.get_x() + rect.get_width() / 2
            label = by_location.get(round(float(center), 9))
            if label is None:
                label = "%g" % center
            value = rect.get_width() if horizontal else rect.get_height()
            chart["elements"].append({"label": label, "group": group, "value": plain(float(value))})
    if horizontal:  # E2B's x is the categories' axis, its y the values'
        chart["x_label"], chart["y_label"] = chart["y_label"], chart["x_label"]
        chart["x_unit"], chart["y_unit"] = chart["y_unit"], chart["x_unit"]
