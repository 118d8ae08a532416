"""A picture of an induced tree with the per-word distances drawn under it.

Uses matplotlib (the `[plot]` extra) without pyplot's global state.
Chinese text: the first installed CJK font matplotlib knows is used; SVG
output keeps text as text (`svg.fonttype = "none"`), so any viewer with a
CJK font shows the words even when matplotlib has none.
"""

import os

from on_lstm_keras._extras import require

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


def plot_tree(tree, distances, path, title=None, distance_label="d_f"):
    """Draws `tree` with a bar chart of `distances` under its words.

    Args:
        tree: Nested-list tree (a word is a leaf).
        distances: One number per word (e.g. the master-forget distance).
        path: Output file; the format follows the extension (`.svg`,
            `.png`, `.pdf`). For Chinese without a CJK font installed,
            prefer `.svg`.
        title: Optional title.
        distance_label: Label of the bar chart's axis.

    Returns:
        `path`.

    Raises:
        MissingExtraError: (an `ImportError`) if matplotlib is not
            installed: `pip install 'on-lstm-keras[plot]'`.
    """
    import warnings

    matplotlib = require("matplotlib", "plot", "plot_tree")
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    leaves = []
    nodes, edges = _layout(tree, leaves)
    if len(distances) != len(leaves):
        raise ValueError(
            "Arguments `tree` and `distances` must cover the same words, "
            f"received {len(leaves)} words and {len(distances)} distances"
        )
    height = max([y for _, y in nodes] or [0])
    font = _cjk_font()
    rc = {"svg.fonttype": "none"}
    if font:
        rc["font.family"] = [font, "sans-serif"]
    with matplotlib.rc_context(rc), warnings.catch_warnings():
        # Without a CJK font, PNG shows boxes for Chinese; SVG is still right.
        warnings.filterwarnings("ignore", message="Glyph .* missing from font")
        width = max(4.0, 0.9 * len(leaves) + 1)
        fig = Figure(figsize=(width, 2.2 + 0.45 * height + 1.6))
        FigureCanvasAgg(fig)
        top, bottom = fig.subplots(
            2, 1, sharex=True,
            gridspec_kw={"height_ratios": [max(1, height) + 1, 1.6]},
        )
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
        bottom.bar(xs, distances, color="#4c72b0", width=0.6)
        for x, d in zip(xs, distances):
            bottom.text(x, d, f"{d:.2f}", ha="center", va="bottom", fontsize=8)
        bottom.set_ylabel(distance_label)
        bottom.set_xticks(xs)
        bottom.set_xticklabels([""] * len(xs))
        bottom.set_xlim(-0.6, len(leaves) - 0.4)
        bottom.set_ylim(0, max(1e-6, max(distances)) * 1.25)
        for side in ("top", "right"):
            bottom.spines[side].set_visible(False)
        fig.tight_layout()
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        fig.savefig(path)
    return path
