"""`plot_tree`: the picture of a tree and its distances."""

import sys

import pytest

from on_lstm_keras import plotting


def test_layout_places_leaves_and_nodes():
    leaves = []
    nodes, edges = plotting._layout([["a", "b"], "c"], leaves)
    assert leaves == ["a", "b", "c"]
    # (a b) sits above x = 0.5 at height 1; the root above the mean of its
    # children's x, (0.5 + 2) / 2, at height 2.
    assert nodes == [(0.5, 1), (1.25, 2)]
    assert sorted(edges) == sorted([
        ((0.5, 1), (0, 0)), ((0.5, 1), (1, 0)),
        ((1.25, 2), (0.5, 1)), ((1.25, 2), (2, 0))])


def test_plot_tree_writes_an_svg_with_the_words(tmp_path):
    pytest.importorskip("matplotlib")
    path = plotting.plot_tree([["我们", "喜欢"], "音乐"], [0.1, 0.5, 0.25],
                              str(tmp_path / "sub" / "tree.svg"), title="t")
    text = (tmp_path / "sub" / "tree.svg").read_text(encoding="utf-8")
    assert path == str(tmp_path / "sub" / "tree.svg")
    for word in ("我们", "喜欢", "音乐", "0.50", "0.25"):
        assert word in text  # svg.fonttype none keeps text as text


def test_plot_tree_checks_lengths(tmp_path):
    pytest.importorskip("matplotlib")
    with pytest.raises(ValueError, match="3 words and 2 distances"):
        plotting.plot_tree(["a", ["b", "c"]], [0.1, 0.2], str(tmp_path / "x.svg"))


def test_plot_tree_without_matplotlib_names_the_extra(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(ImportError) as caught:
        plotting.plot_tree(["a", "b"], [0.1, 0.2], str(tmp_path / "x.svg"))
    assert str(caught.value) == (
        "plot_tree needs matplotlib: pip install 'on-lstm-keras[plot]'")
    assert not (tmp_path / "x.svg").exists()


def test_plot_tree_draws_one_bar_chart_per_model(tmp_path):
    pytest.importorskip("matplotlib")
    rows = {"split score": [0.5, -1.0, 0.5], "forward d_f": [0.1, 0.6, 0.3],
            "backward d_f": [0.2, 0.4, 0.7]}
    fig = plotting.tree_figure([["我们", "喜欢"], "音乐"], rows, title="t")
    tree_axes, *bars = fig.axes
    assert [ax.get_ylabel() for ax in bars] == list(rows)
    for ax, values in zip(bars, rows.values()):
        assert [p.get_height() for p in ax.patches] == pytest.approx(values)
    assert [t.get_text() for t in tree_axes.texts] == ["我们", "喜欢", "音乐"]
    path = plotting.plot_tree([["我们", "喜欢"], "音乐"], rows,
                              str(tmp_path / "both.svg"))
    text = (tmp_path / "both.svg").read_text(encoding="utf-8")
    assert "backward d_f" in text and "0.70" in text and path.endswith("both.svg")
    with pytest.raises(ValueError, match=r"3 words and 2 distances \(x\)"):
        plotting.plot_tree(["a", ["b", "c"]], {"x": [1, 2]}, str(tmp_path / "y.svg"))


def test_plot_parse_draws_a_parse_without_a_run(tmp_path):
    pytest.importorskip("matplotlib")
    from on_lstm_keras.parsing import Parse

    parse = Parse(["我们", "喜欢", "音乐"], ["我们", ["喜欢", "音乐"]],
                  split_scores=[0.25, -1.5, 0.75],
                  layer_distances=[[0.1, 0.6, 0.3], [0.2, 0.4, 0.9]],
                  backward_layer_distances=[[0.5, 0.5, 0.5],
                                            [0.3, 0.8, 0.35]],
                  reading="both", layer="mean")
    path = str(tmp_path / "parse.svg")
    assert plotting.plot_parse(parse, path) == path
    text = (tmp_path / "parse.svg").read_text(encoding="utf-8")
    # The mean over 2 layers draws layer 1 (the middle, lower of two).
    for label in ("split score", "forward d_f (layer 1)",
                  "backward d_f (layer 1)", "reading both, layer mean",
                  "-1.50", "0.60"):
        assert label in text, label
    assert "0.80" not in text  # layer 2 of the backward model
    one = Parse(["a", "b"], ["a", "b"], [0.1, 0.7], reading="forward",
                layer=2, layer_distances=[[0.3, 0.4], [0.1, 0.7]])
    plotting.plot_parse(one, path, title="mine")
    text = (tmp_path / "parse.svg").read_text(encoding="utf-8")
    assert "forward d_f (layer 2)" in text and "mine" in text
    assert "backward" not in text
    with pytest.raises(ValueError, match="`parse` must have a word"):
        plotting.plot_parse(Parse([], None, []), path)


CELLS = [
    {"reading": d, "layer": layer, "tree_rule": rule, "half": half,
     "sentence_f1": 10 * i + j + (0.5 if half == "test" else 0),
     "corpus_f1": 1.0}
    for i, d in enumerate(("forward", "backward", "both"))
    for j, layer in enumerate((1, 2, "mean"))
    for rule in ("official", "plain") for half in ("dev", "test")
]
BASELINE_ROWS = [
    {"baseline": b, "half": half, "sentence_f1": 5.0 + k, "corpus_f1": 2.0}
    for k, b in enumerate(("left", "right", "balanced", "random"))
    for half in ("dev", "test")
]


def test_f1_bars_hold_a_bar_per_layer_and_reading_and_the_baselines(tmp_path):
    pytest.importorskip("matplotlib")
    fig = plotting.f1_bars_figure(CELLS, BASELINE_ROWS, half="dev")
    (ax,) = fig.axes
    assert [t.get_text() for t in ax.get_xticklabels()] == [
        "layer 1", "layer 2", "mean"]
    handles, labels = ax.get_legend_handles_labels()
    assert labels == ["left-branching 5.0", "right-branching 6.0",
                      "balanced 7.0", "random 8.0",
                      "forward", "backward", "both"]
    # Bars, reading by reading, layer by layer: 10 * reading + layer.
    heights = [p.get_height() for p in ax.patches]
    assert heights == [0, 1, 2, 10, 11, 12, 20, 21, 22]
    assert sorted(line.get_ydata()[0] for line in ax.lines) == [5, 6, 7, 8]
    fig = plotting.plot_f1_bars(CELLS, BASELINE_ROWS, str(tmp_path / "f1.png"),
                                half="test", tree_rule="plain")
    assert (tmp_path / "f1.png").stat().st_size > 0
    assert [p.get_height() for p in fig.axes[0].patches][:3] == [0.5, 1.5, 2.5]
    with pytest.raises(ValueError, match="tree_rule='nope'"):
        plotting.f1_bars_figure(CELLS, BASELINE_ROWS, tree_rule="nope")
