"""Pictures: an induced tree with the per-word distances drawn under it
(`plot_tree`, one bar chart per model or layer; `plot_parse` for a
`parsing.Parse`), F1 per layer and reading against the baselines
(`plot_f1_bars`), and F1 of readings against training time
(`plot_f1_curves`).

Uses matplotlib (the `[plot]` extra) without pyplot's global state.
Chinese text: the first installed CJK font matplotlib knows is used; SVG
output keeps text as text (`svg.fonttype = "none"`), so any viewer with a
CJK font shows the words even when matplotlib has none.
"""

import contextlib
import os
import warnings

from on_lstm_keras.parsing.scores import default_layer
from on_lstm_keras.utils.extras import require

__all__ = [
    "CJK_FONTS",
    "READING_COLOURS",
    "f1_bars_figure",
    "f1_curves_figure",
    "plot_f1_bars",
    "plot_f1_curves",
    "plot_parse",
    "plot_tree",
    "tree_figure",
]

CJK_FONTS = (
    "Noto Sans CJK SC", "Noto Sans SC", "Source Han Sans SC",
    "WenQuanYi Micro Hei", "WenQuanYi Zen Hei", "Microsoft YaHei", "SimHei",
    "PingFang SC", "Heiti SC", "Arial Unicode MS",
)


def _cjk_font():
    from matplotlib import font_manager

    installed = {f.name for f in font_manager.fontManager.ttflist}
    for name in CJK_FONTS:
        if name in installed:
            return name
    return None


def _layout(tree, leaves):
    """Positions: leaves at x = 0..n-1, y = 0; a node above its children."""
    nodes, edges = [], []

    def visit(node):
        if not isinstance(node, list):
            x = len(leaves)
            leaves.append(node)
            return x, 0
        kids = [visit(child) for child in node]
        x = sum(k[0] for k in kids) / len(kids)
        y = max(k[1] for k in kids) + 1
        nodes.append((x, y))
        edges.extend(((x, y), kid) for kid in kids)
        return x, y

    visit(tree)
    return nodes, edges


def _distance_panels(distances, distance_label, n_words):
    """`[(label, values)]` of `distances`: one list (labelled
    `distance_label`) or a dict of label -> one number per word."""
    if isinstance(distances, dict):
        panels = [(str(k), list(v)) for k, v in distances.items()]
    else:
        panels = [(distance_label, list(distances))]
    if not panels:
        raise ValueError("Argument `distances` must hold at least one row "
                         "of distances, received an empty dict")
    for label, values in panels:
        if len(values) != n_words:
            raise ValueError(
                "Arguments `tree` and `distances` must cover the same words, "
                f"received {n_words} words and {len(values)} distances"
                + (f" ({label})" if isinstance(distances, dict) else ""))
    return panels


def _figure_context(matplotlib):
    font = _cjk_font()
    rc = {"svg.fonttype": "none"}
    if font:
        rc["font.family"] = [font, "sans-serif"]
    stack = contextlib.ExitStack()
    stack.enter_context(matplotlib.rc_context(rc))
    stack.enter_context(warnings.catch_warnings())
    # Without a CJK font, PNG shows boxes for Chinese; SVG is still right.
    warnings.filterwarnings("ignore", message="Glyph .* missing from font")
    return stack


def _save(fig, path):
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fig.savefig(path)


def tree_figure(tree, distances, title=None, distance_label="d_f"):
    """The figure `plot_tree` saves: `tree` above one bar chart of
    distances per row of `distances` (see `plot_tree`).

    Returns:
        A matplotlib `Figure` (not attached to pyplot).
    """
    matplotlib = require("matplotlib", "plot", "plot_tree")
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    leaves = []
    nodes, edges = _layout(tree, leaves)
    panels = _distance_panels(distances, distance_label, len(leaves))
    height = max([y for _, y in nodes] or [0])
    with _figure_context(matplotlib):
        width = max(4.0, 0.9 * len(leaves) + 1)
        fig = Figure(figsize=(width, 2.2 + 0.45 * height + 1.6 * len(panels)))
        FigureCanvasAgg(fig)
        axes = fig.subplots(
            1 + len(panels), 1, sharex=True,
            gridspec_kw={"height_ratios": [max(1, height) + 1]
                         + [1.6] * len(panels)},
        )
        top = axes[0]
        for (x0, y0), (x1, y1) in edges:
            top.plot([x0, x1], [y0, y1], color="0.35", lw=1.2)
        top.scatter([x for x, _ in nodes], [y for _, y in nodes], s=12,
                    color="0.2", zorder=3)
        for x, word in enumerate(leaves):
            top.text(x, -0.15, word, ha="center", va="top", fontsize=12)
        top.set_ylim(-0.9, height + 0.4)
        top.axis("off")
        if title:
            top.set_title(title)
        xs = list(range(len(leaves)))
        colours = ("#4c72b0", "#dd8452", "#55a868", "#c44e52")
        for k, (bottom, (label, values)) in enumerate(zip(axes[1:], panels)):
            bottom.bar(xs, values, color=colours[k % len(colours)], width=0.6)
            for x, d in zip(xs, values):
                bottom.text(x, d, f"{d:.2f}", ha="center",
                            va="bottom" if d >= 0 else "top", fontsize=8)
            bottom.set_ylabel(label)
            bottom.set_xticks(xs)
            bottom.set_xticklabels([""] * len(xs))
            bottom.set_xlim(-0.6, len(leaves) - 0.4)
            low = min(0.0, min(values))
            high = max(1e-6, max(values))
            bottom.set_ylim(low * 1.25, high * 1.25)
            for side in ("top", "right"):
                bottom.spines[side].set_visible(False)
        fig.tight_layout()
    return fig


def plot_tree(tree, distances, path, title=None, distance_label="d_f"):
    """Draws `tree` with a bar chart of `distances` under its words.

    Args:
        tree: Nested-list tree (a word is a leaf).
        distances: One number per word (e.g. the master-forget distance),
            or a dict of label -> one number per word, drawn as one bar
            chart each, in order (e.g. the forward and the backward
            model's `d_f`, `{"forward d_f": ..., "backward d_f": ...}`).
        path: Output file; the format follows the extension (`.svg`,
            `.png`, `.pdf`). For Chinese without a CJK font installed,
            prefer `.svg`.
        title: Optional title.
        distance_label: Label of the bar chart's axis (one list of
            distances).

    Returns:
        `path`.

    Raises:
        MissingExtraError: (an `ImportError`) if matplotlib is not
            installed: `pip install 'on-lstm-keras[plot]'`.
    """
    matplotlib = require("matplotlib", "plot", "plot_tree")
    fig = tree_figure(tree, distances, title, distance_label)
    with _figure_context(matplotlib):
        _save(fig, path)
    return path


def plot_parse(parse, path, title=None):
    """Draws a parsed sentence's tree (`plot_tree`): its split scores under
    the words and, under them, the `d_f` of the forward and of the backward
    model at the parse's layer (the middle one for the mean over layers),
    those of the models that were read. The backward model's value at a
    word scores the boundary after it.

    Args:
        parse: A `parsing.Parse` (e.g. one of `runs.parse`).
        path: Output file (`.svg`, `.png`, `.pdf`).
        title: Default: the sentence, then the reading and the layer.

    Returns:
        `path`.

    Raises:
        ValueError: The parse has no words.
        MissingExtraError: (an `ImportError`) if matplotlib is not
            installed: `pip install 'on-lstm-keras[plot]'`.
    """
    if parse.tree is None:
        raise ValueError("Argument `parse` must have a word, received a "
                         f"parse of words={parse.words!r}")
    rows = {"split score": parse.split_scores}
    for name, layers in (("forward", parse.layer_distances),
                         ("backward", parse.backward_layer_distances)):
        if layers:
            k = (parse.layer if isinstance(parse.layer, int)
                 else default_layer(len(layers)))
            rows[f"{name} d_f (layer {k})"] = layers[k - 1]
    if title is None:
        title = (f"{' '.join(parse.words)}  (reading {parse.reading}, "
                 f"layer {parse.layer})")
    return plot_tree(parse.tree, rows, path, title=title)


BASELINE_NAMES = ("left", "right", "balanced", "random")

# One colour per reading, in the bar charts and the F1 curves.
READING_COLOURS = {"forward": "#4c72b0", "backward": "#dd8452",
                     "both": "#55a868"}


def _check_metric(metric):
    if metric not in ("sentence_f1", "corpus_f1"):
        raise ValueError("Argument `metric` must be 'sentence_f1' or "
                         f"'corpus_f1', received: metric={metric!r}")


def _baseline_lines(ax, baselines, metric):
    """One dashed horizontal line per baseline, labelled with its value."""
    styles = ("--", ":", "-.", (0, (5, 1)))
    for k, b in enumerate(baselines):
        name = b["baseline"]
        label = f"{name}-branching" if name in ("left", "right") else name
        ax.axhline(b[metric], color="0.3", lw=1, ls=styles[k % 4],
                   label=f"{label} {b[metric]:.1f}")


def f1_bars_figure(cells, baselines, half=None, tree_rule="official",
                   metric="sentence_f1", title=None):
    """The figure `plot_f1_bars` saves (see there).

    Returns:
        A matplotlib `Figure` (not attached to pyplot): one axes, a group
        of bars per layer (labelled `layer 1`, ..., `mean`), one bar per
        reading (its legend label the reading), and one dashed line
        per baseline (legend label `left-branching`, `right-branching`,
        `balanced`, `random`, with its value).
    """
    matplotlib = require("matplotlib", "plot", "plot_f1_bars")
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    _check_metric(metric)
    chosen = [c for c in cells if c["tree_rule"] == tree_rule
              and (half is None or c.get("half") == half)]
    if not chosen:
        raise ValueError(
            f"Argument `cells` holds no cell with tree_rule={tree_rule!r} and "
            f"half={half!r}")
    layers = list(dict.fromkeys(c["layer"] for c in chosen))
    readings = list(dict.fromkeys(c["reading"] for c in chosen))
    value = {(c["reading"], c["layer"]): c[metric] for c in chosen}
    lines = [b for b in baselines if half is None or b.get("half") == half]
    with _figure_context(matplotlib):
        fig = Figure(figsize=(2 + 1.6 * len(layers), 4.2))
        FigureCanvasAgg(fig)
        ax = fig.subplots()
        width = 0.8 / len(readings)
        for k, reading in enumerate(readings):
            xs = [i + (k - (len(readings) - 1) / 2) * width
                  for i in range(len(layers))]
            heights = [value.get((reading, layer), float("nan"))
                       for layer in layers]
            ax.bar(xs, heights, width=width * 0.95, label=reading,
                   color=READING_COLOURS.get(reading))
            for x, h in zip(xs, heights):
                ax.text(x, h, f"{h:.1f}", ha="center", va="bottom",
                        fontsize=7)
        _baseline_lines(ax, lines, metric)
        ax.set_xticks(range(len(layers)))
        ax.set_xticklabels([f"layer {layer}" if layer != "mean" else "mean"
                            for layer in layers])
        ax.set_ylabel(metric.replace("_f1", " F1"))
        ax.set_title(title or f"{metric.replace('_f1', ' F1')}, tree rule "
                     f"{tree_rule}" + (f", {half} half" if half else ""))
        ax.legend(fontsize=7, loc="lower right", ncol=2)
        for side in ("top", "right"):
            ax.spines[side].set_visible(False)
        fig.tight_layout()
    return fig


def plot_f1_bars(cells, baselines, path, half=None, tree_rule="official",
                 metric="sentence_f1", title=None):
    """A bar chart of F1 per layer and reading, against the
    baselines (drawn as horizontal lines).

    Args:
        cells: Dicts with `reading`, `layer`, `tree_rule`, `half` and
            the F1 figures (the `cells` of
            `runs.evaluate_readings`).
        baselines: Dicts with `baseline`, `half` and the F1 figures (its
            `baselines`).
        path: Output file (`.png`, `.svg`, `.pdf`).
        half: Draw only the cells and baselines of this half (`"dev"`,
            `"test"`); default all given.
        tree_rule: Draw the cells of this tree rule.
        metric: `"sentence_f1"` or `"corpus_f1"`.
        title: Default: the metric, rule and half.

    Returns:
        The matplotlib `Figure` that was saved to `path`.

    Raises:
        MissingExtraError: (an `ImportError`) if matplotlib is not
            installed: `pip install 'on-lstm-keras[plot]'`.
    """
    matplotlib = require("matplotlib", "plot", "plot_f1_bars")
    fig = f1_bars_figure(cells, baselines, half, tree_rule, metric, title)
    with _figure_context(matplotlib):
        _save(fig, path)
    return fig


def f1_curves_figure(rows, baselines=(), metric="sentence_f1", title=None):
    """The figure `plot_f1_curves` saves (see there).

    Returns:
        A matplotlib `Figure` (not attached to pyplot): one axes, one line
        per reading and layer (legend label `reading, layer K, rule`) through its
        points `(total_seconds / 60, metric)` in row order, and one dashed
        line per baseline (legend label as in `f1_bars_figure`). The rows of
        an LSTM (`run` `"lstm"`) are lines of their own, in grey, their
        labels starting `LSTM, `.
    """
    matplotlib = require("matplotlib", "plot", "plot_f1_curves")
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    _check_metric(metric)
    rows = list(rows)
    if not rows:
        raise ValueError("Argument `rows` must hold at least one row, "
                         "received none")
    lines = {}
    for row in rows:
        key = (row.get("run") == "lstm", row["reading"], row["layer"],
               row["tree_rule"])
        lines.setdefault(key, []).append(
            (float(row["total_seconds"]) / 60, float(row[metric])))
    with _figure_context(matplotlib):
        fig = Figure(figsize=(7.5, 4.6))
        FigureCanvasAgg(fig)
        ax = fig.subplots()
        markers = "os^vDP*X"
        for k, ((lstm, reading, layer, rule), points) in enumerate(
                lines.items()):
            xs, ys = zip(*points)
            name = "mean" if layer == "mean" else f"layer {layer}"
            ax.plot(xs, ys, marker=markers[k % len(markers)], ms=4, lw=1.2,
                    color="0.55" if lstm else READING_COLOURS.get(reading),
                    ls="-" if rule == "official" else "--",
                    label=("LSTM, " if lstm else "")
                    + f"{reading}, {name}, {rule}")
        _baseline_lines(ax, baselines, metric)
        ax.set_xlabel("training time (min)")
        ax.set_ylabel(metric.replace("_f1", " F1"))
        ax.set_title(title or f"{metric.replace('_f1', ' F1')} after each "
                     "epoch")
        ax.legend(fontsize=6, loc="center left", bbox_to_anchor=(1.01, 0.5))
        for side in ("top", "right"):
            ax.spines[side].set_visible(False)
        fig.tight_layout()
    return fig


def plot_f1_curves(rows, path, baselines=(), metric="sentence_f1",
                   title=None):
    """F1 of readings against training time: one line per reading and layer.

    Args:
        rows: Dicts with `reading`, `layer`, `tree_rule`,
            `total_seconds` (training time when the F1 was measured) and
            the F1 figures, one per reading, layer and measurement, in
            time order (e.g. the rows of `runs.read_f1_curve`).
        path: Output file (`.png`, `.svg`, `.pdf`).
        baselines: Dicts with `baseline` and the F1 figures, drawn as
            horizontal lines (the `baselines` of
            `runs.evaluate_readings`, of one half).
        metric: `"sentence_f1"` or `"corpus_f1"`.
        title: Default: the metric.

    Returns:
        The matplotlib `Figure` that was saved to `path`.

    Raises:
        MissingExtraError: (an `ImportError`) if matplotlib is not
            installed: `pip install 'on-lstm-keras[plot]'`.
    """
    matplotlib = require("matplotlib", "plot", "plot_f1_curves")
    fig = f1_curves_figure(rows, baselines, metric, title)
    with _figure_context(matplotlib):
        _save(fig, path)
    return fig
