"""The README's quickstart runs as it is written, and gives what it says."""

import re

import numpy as np

from tests.conftest import REPO_ROOT


def quickstart():
    """The first Python block under the README's "Quickstart" heading."""
    text = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## Quickstart"):]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_quickstart_is_short():
    assert len(quickstart().strip().splitlines()) <= 15


def test_quickstart_runs():
    namespace = {}
    exec(compile(quickstart(), "README.md quickstart", "exec"), namespace)
    outputs, distances = namespace["outputs"], namespace["distances"]
    assert tuple(outputs.shape) == (2, 5, 64)
    assert tuple(distances.shape) == (2, 5, 2)
    d_f = np.asarray(distances[0, :, 0])
    # The official rule splits the root at the first largest d_f: the
    # words before it form the left part; at the first word, that word
    # alone is the left part.
    tree, words = namespace["tree"], "a b c d e".split()
    assert _leaves(tree) == words
    top = int(np.argmax(d_f))
    assert _leaves(tree[0]) == (words[:top] if top else words[:1])
    # The Sequential model built with `model.add(ONLSTM(units, chunk_size))`.
    model = namespace["model"]
    onlstm = model.layers[1]
    assert (onlstm.units, onlstm.chunk_size) == (64, 8)
    probabilities = model(np.ones((2, 7), "int32"))
    assert tuple(probabilities.shape) == (2, 2)
    # Bidirectional: the output of both directions, then each one's
    # distances, in the input's time order.
    output, d_forward, d_backward = (namespace[k] for k in (
        "output", "d_forward", "d_backward"))
    assert tuple(output.shape) == (2, 128)
    assert tuple(d_forward.shape) == tuple(d_backward.shape) == (2, 5, 2)
    assert np.all((np.asarray(d_forward) >= 0) & (np.asarray(d_forward) <= 1))


def _leaves(tree):
    if isinstance(tree, str):
        return [tree]
    return [w for child in tree for w in _leaves(child)]
