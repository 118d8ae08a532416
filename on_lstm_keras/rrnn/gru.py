"""GRU as a special case of RRNN: its weights.

With `trees.gru_tree`, the list of merges that computes a GRU
(`reset_after=False`) cell, `rrnn_from_gru` builds the `RRNN` that equals a given
`keras.layers.GRU` (it is `RRNN.from_gru`); `prefer_tree` sets a searching
cell's merge prior so that the hard search picks a given tree.
"""

import keras
import numpy as np
from keras import ops

from on_lstm_keras.rrnn.config import TreeConfig
from on_lstm_keras.rrnn.candidates import candidate_index
from on_lstm_keras.rrnn.trees import NUM_LEAVES
from on_lstm_keras.rrnn.trees import gru_tree
from on_lstm_keras.rrnn.trees import normalize_tree


def rrnn_from_gru(cls, gru, tree_config=None, **kwargs):
    """Builds `cls` (`RRNN` or a subclass) equal to a built GRU.

    The body of `RRNN.from_gru`, which documents the arguments.
    """
    _check_gru(gru)
    if tree_config is None:
        tree_config = TreeConfig(selection="forced", tree=gru_tree())
    if tree_config.tuples < 4:
        raise ValueError(
            "Argument `tuples` must be at least 4 for the GRU tree, "
            f"received: tuples={tree_config.tuples}"
        )
    kwargs.setdefault("return_sequences", gru.return_sequences)
    kwargs.setdefault("return_state", gru.return_state)
    kwargs.setdefault("go_backwards", gru.go_backwards)
    kwargs.setdefault("dtype", gru.dtype_policy)
    layer = cls(gru.units, tree_config=tree_config, **kwargs)
    layer.build((None, None, gru.cell.kernel.shape[0]))
    _copy_gru_weights(layer.cell, gru)
    cell = layer.cell
    if (
        cell.selection != "forced"
        and cell.merge_prior
        and cell.iterations == len(gru_tree())
    ):
        prefer_tree(cell, gru_tree())
    return layer


def _check_gru(gru):
    """Raises a `ValueError` unless `gru` is a built GRU that the GRU tree
    computes."""
    if not isinstance(gru, keras.layers.GRU):
        raise ValueError(
            "Argument `gru` must be a keras.layers.GRU, "
            f"received: gru={gru!r}"
        )
    if not gru.built:
        raise ValueError(
            "Argument `gru` must be built (call it once or build it), "
            f"received an unbuilt layer: gru={gru.name!r}"
        )
    if gru.reset_after:
        raise ValueError(
            "Argument `gru` must have reset_after=False (the reset gate "
            "applied before the recurrent matmul), received: "
            "reset_after=True"
        )
    for name, expected in (
        ("activation", "tanh"),
        ("recurrent_activation", "sigmoid"),
    ):
        got = keras.activations.serialize(getattr(gru, name))
        got = got if isinstance(got, str) else got.get("config", got)
        if got != expected:
            raise ValueError(
                f"Argument `gru` must use {name}={expected!r}, "
                f"received: {name}={got!r}"
            )


def _copy_gru_weights(cell, gru):
    """The GRU's weights into tuples 0-2 of the built `cell`, `(I, I, 0)`
    into tuple 3."""
    kernel = ops.convert_to_numpy(gru.cell.kernel)
    recurrent = ops.convert_to_numpy(gru.cell.recurrent_kernel)
    units = gru.units
    if cell.tie_input_kernel:
        gru_blocks = [("left_kernel", kernel)]
    else:
        gru_blocks = [("kernel", kernel), ("left_kernel", None)]
    gru_blocks.append(("right_kernel", recurrent))
    for name, gru_value in gru_blocks:
        variable = getattr(cell, name)
        value = ops.convert_to_numpy(variable).copy()
        if gru_value is not None:
            value[:, : 3 * units] = gru_value
        value[:, 3 * units : 4 * units] = np.eye(value.shape[0], units)
        variable.assign(value)
    bias = ops.convert_to_numpy(cell.bias).copy()
    if gru.use_bias:
        bias[: 3 * units] = ops.convert_to_numpy(gru.cell.bias)
    else:
        bias[: 3 * units] = 0.0
    bias[3 * units : 4 * units] = 0.0
    cell.bias.assign(bias)


def prefer_tree(cell, tree, strength=1.0):
    """Sets a searching cell's merge prior so that it picks `tree`.

    The score kernel is set to zero (every `α(c)` is then 0) and the merge
    prior to `strength` on the tree's candidates and 0 elsewhere, so the
    hard search picks `tree` at every step, as long as each of its merges
    is allowed (the `bounded` guard holds for the GRU tree while
    `|h| < 1`). Training moves both away from this start.

    Args:
        cell: A built `RRNNCell` with `merge_prior=True` and a searching
            `selection`.
        tree: `cell.iterations` merges (names or indices), obeying the
            cell's `break_symmetry` and `unique_roots`. For
            `variant="rrnn_gru"` only the tuples `k` of the tree are read
            (the skeleton is fixed).
        strength: Positive float, the prior on the tree's candidates.

    Raises:
        ValueError: if the cell has no merge prior or the tree does not
            fit it.
    """
    if not cell.merge_prior or cell.selection == "forced":
        raise ValueError(
            "Argument `cell` must search with a merge prior "
            "(merge_prior=True and selection 'hard' or 'soft'), received: "
            f"merge_prior={cell.merge_prior}, selection={cell.selection!r}"
        )
    tree = normalize_tree(
        tree,
        iterations=cell.iterations,
        tuples=cell.tuples,
        operations=cell.operations,
        activations=cell.activations,
        pool=cell.pool,
    )
    if cell.variant == "rrnn_gru":
        offsets, total = cell.merge_prior_offsets()
        prior = np.zeros((total,), dtype="float32")
        for n, merge in enumerate(tree):
            if cell.num_candidates(n):
                prior[offsets[n] + merge[2]] = strength
        cell.merge_prior_weight.assign(prior)
        cell.score_kernel.assign(
            np.zeros(cell.score_kernel.shape, "float32")
        )
        return
    if cell.break_symmetry:
        for n, merge in enumerate(tree[: min(2, cell.tuples)]):
            if merge[2] != n:
                raise ValueError(
                    f"Argument `tree` has merge {n} on tuple {merge[2]}; "
                    f"with break_symmetry=True it must use tuple {n}"
                )
    offsets, total = cell.merge_prior_offsets()
    prior = np.zeros((total,), dtype="float32")
    for n, merge in enumerate(tree):
        prior[
            offsets[n]
            + candidate_index(
                merge,
                NUM_LEAVES + n,
                cell.tuples,
                len(cell.operations),
                len(cell.activations),
            )
        ] = strength
    cell.merge_prior_weight.assign(prior)
    cell.score_kernel.assign(np.zeros(cell.score_kernel.shape, "float32"))
