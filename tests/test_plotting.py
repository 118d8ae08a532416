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
