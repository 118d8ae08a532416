"""Tree distance between RRNN trees, as a function and as a loss layer."""

import keras
import numpy as np
from keras import ops
from keras.layers import Layer

from on_lstm_keras.utils import validation as check
from on_lstm_keras.rrnn.nodes import pad_to_width
from on_lstm_keras.rrnn.trees import NUM_LEAVES



def _children(trees, num_slots):
    """Left/right child of every slot, shifted by one (0 = no child).

    Args:
        trees: int32 `(B, iterations, 5)`; rows of `-1` give no children.
        num_slots: `3 + iterations`.

    Returns:
        Two int32 `(B, num_slots)`: leaves have no children (0); generated
        slot `s` has children `trees[:, s - 3, 0] + 1` and `[..., 1] + 1`.
    """
    leaves = ops.zeros_like(trees[:, 0, :NUM_LEAVES])  # (B, 3)
    left = ops.concatenate([leaves, trees[:, :, 0] + 1], axis=1)
    right = ops.concatenate([leaves, trees[:, :, 1] + 1], axis=1)
    return left, right


def _internal(num_slots, dtype):
    """`(1, num_slots, 1)`: 0 for the leaves, 1 for generated slots."""
    mask = np.ones((1, num_slots, 1), dtype="float32")
    mask[:, :NUM_LEAVES] = 0.0
    return ops.cast(ops.convert_to_tensor(mask), dtype)


def _subtree_norms(left, right, squared):
    """Σ of squared norms over the expanded subtree of every slot.

    `left`, `right` are one-hot children `(B, slots, 1 + slots)`. Returns
    `(B, 1 + slots)`: column 0 is the empty tree (0), column `s + 1` slot
    `s`. Children always precede their parent, so one pass in slot order
    suffices.
    """
    norms = [ops.zeros_like(squared[:, 0])]
    for slot in range(squared.shape[1]):
        value = squared[:, slot]
        if slot >= NUM_LEAVES:
            done = ops.stack(norms, axis=1)  # (B, 1 + slot)
            size = slot + 1
            value = value + ops.sum(
                (left[:, slot, :size] + right[:, slot, :size]) * done, axis=1
            )
        norms.append(value)
    return ops.stack(norms, axis=1)


def tree_distance(
    trees, nodes, target_trees, target_nodes, internal_only=True,
    isomorphic=True,
):
    """Tree distance TD between predicted and target trees (the paper's).

    Both trees are laid out in heap order (root at position 1, the children
    of position `p` at `2p` (left) and `2p + 1` (right)), expanding every
    generated node down to the leaves `x`, `h_{t-1}`, `0`; a node that is a
    child several times appears at each of its positions. Then

        TD = min over T' isomorphic to the target of Σ_p ‖v_p − v'_p‖²,

    over the internal positions (generated nodes) of either tree: a position
    held by an internal node in one tree only counts the squared norm of
    that node, and the leaves count nothing (`internal_only`, the paper:
    two trees whose nodes have the same values but which differ in a leaf,
    `h` for `0`, are at distance 0). The isomorphic trees of the target are
    those reached by swapping the two children of any of its nodes
    (`isomorphic`, the paper's minimum). The sum is computed by a recursion
    over pairs of slots,

        D(s, s') = ‖v_s − v'_s'‖² + min(D(l(s), l(s')) + D(r(s), r(s')),
                                         D(l(s), r(s')) + D(r(s), l(s'))),

    in `O(slots²)` per tree, without expanding the (possibly exponentially
    large) heap. With `internal_only=False` the leaves count like any node,
    and with `isomorphic=False` the children are matched in their given
    order only (both, the distance of version 0.1.0, which the authors' code
    also computes in one ordering).

    Node vectors of different widths (the x leaf of an input narrower than
    `units`) are zero-padded to a common width; the layer's nodes output
    already is.

    Args:
        trees: int `(..., iterations, 5)` merges of the predicted trees;
            rows of `-1` (masked steps) are empty trees.
        nodes: float `(..., 3 + iterations, width)` values of every slot
            (the layer's `return_nodes` output).
        target_trees: int `(..., iterations', 5)` or a static list of merges
            (e.g. `gru_tree()`, with names or indices), broadcast over the
            leading axes.
        target_nodes: float `(..., 3 + iterations', width')`.
        internal_only: Boolean (default `True`): leaves count nothing.
        isomorphic: Boolean (default `True`): the minimum over the target's
            child orders.

    Returns:
        Tensor of shape `(...)`: TD per tree (e.g. per sample and step).

    Example:

    >>> x, h, n = [1.0, 0.0], [0.0, 2.0], [1.0, 1.0]
    >>> tree = [[[0, 1, 0, 0, 0]]]
    >>> nodes = np.array([[x, h, [0.0, 0.0], n]])
    >>> other = np.array([[x, h, [0.0, 0.0], [1.0, 3.0]]])
    >>> float(tree_distance(tree, nodes, tree, other)[0])
    4.0
    """
    trees, nodes, target_trees, target_nodes = _as_tensors(
        trees, nodes, target_trees, target_nodes
    )
    lead = ops.shape(trees)[:-2]
    trees, nodes, target_trees, target_nodes = _flatten(
        trees, nodes, target_trees, target_nodes, lead
    )
    if internal_only:
        nodes = nodes * _internal(nodes.shape[1], nodes.dtype)
        target_nodes = target_nodes * _internal(
            target_nodes.shape[1], nodes.dtype
        )
    table = _distance_table(trees, nodes, target_trees, target_nodes,
                            isomorphic)
    distance = ops.einsum(
        "bi,bij,bj->b", _root(trees, nodes.dtype), table,
        _root(target_trees, nodes.dtype),
    )
    return ops.reshape(distance, lead)


def _as_tensors(trees, nodes, target_trees, target_nodes):
    """The four arguments of `tree_distance` as tensors (merges int32,
    node values float), their shapes checked."""
    if isinstance(target_trees, (list, tuple)) and target_trees and (
        len(np.shape(target_trees[0])) == 1
        and len(target_trees[0]) == 5
        and any(isinstance(v, str) for m in target_trees for v in m)
    ):
        # Names are only needed to be turned into any integers: the distance
        # uses the children alone.
        target_trees = [
            [m[0], m[1], m[2], 0, 0] for m in target_trees
        ]
    trees = ops.convert_to_tensor(trees, dtype="int32")
    target_trees = ops.convert_to_tensor(target_trees, dtype="int32")
    nodes = ops.convert_to_tensor(nodes)
    target_nodes = ops.convert_to_tensor(target_nodes)
    if "float" not in keras.backend.standardize_dtype(nodes.dtype):
        nodes = ops.cast(nodes, "float32")
    target_nodes = ops.cast(target_nodes, nodes.dtype)
    for name, t in (("trees", trees), ("target_trees", target_trees)):
        if len(t.shape) < 2 or t.shape[-1] != 5:
            raise ValueError(
                f"Argument `{name}` must have shape (..., iterations, 5), "
                f"received: shape={tuple(t.shape)}"
            )
    for name, t, v in (
        ("nodes", trees, nodes),
        ("target_nodes", target_trees, target_nodes),
    ):
        if len(v.shape) < 2 or v.shape[-2] != NUM_LEAVES + t.shape[-2]:
            raise ValueError(
                f"Argument `{name}` must have shape (..., 3 + iterations, "
                f"width) with iterations={t.shape[-2]}, received: "
                f"shape={tuple(v.shape)}"
            )
    return trees, nodes, target_trees, target_nodes


def _flatten(trees, nodes, target_trees, target_nodes, lead):
    """The four tensors with one batch axis `B` for the leading axes
    `lead` of the prediction (the target broadcast over them) and the
    node values padded to one width."""
    n_pred, n_target = trees.shape[-2], target_trees.shape[-2]
    width = max(nodes.shape[-1], target_nodes.shape[-1])
    slots_pred, slots_target = NUM_LEAVES + n_pred, NUM_LEAVES + n_target
    nodes = pad_to_width(nodes, width)
    target_nodes = pad_to_width(target_nodes, width)
    target_trees = ops.broadcast_to(
        target_trees, tuple(lead) + (n_target, 5)
    )
    target_nodes = ops.broadcast_to(
        target_nodes, tuple(lead) + (slots_target, width)
    )
    return (
        ops.reshape(trees, (-1, n_pred, 5)),
        ops.reshape(nodes, (-1, slots_pred, width)),
        ops.reshape(target_trees, (-1, n_target, 5)),
        ops.reshape(target_nodes, (-1, slots_target, width)),
    )


def _one_hot_children(trees, num_slots, dtype):
    """Children as one-hot rows over (none, slot 0, slot 1, ...):
    `(B, num_slots, 1 + num_slots)` each, left and right."""
    return tuple(
        ops.one_hot(c, 1 + num_slots, dtype=dtype)
        for c in _children(trees, num_slots)
    )


def _distance_table(trees, nodes, target_trees, target_nodes, isomorphic):
    """`D(s, s')` for every pair of predicted and target slots, `(B, 1 +
    slots_pred, 1 + slots_target)`, row and column 0 for "no node".

    The heap-order sum, by recursion over pairs of slots (no expansion):
      D(s, s') = |v_s - v'_s'|^2 + D(l(s), l(s')) + D(r(s), r(s')),
      D(s, none) = subtree norm of s,  D(none, none) = 0.
    With the children as one-hot rows, the gathers are small products,
    cheap to compile and to differentiate on every backend.
    """
    dtype = nodes.dtype
    slots_pred, slots_target = nodes.shape[1], target_nodes.shape[1]
    left, right = _one_hot_children(trees, slots_pred, dtype)
    t_left, t_right = _one_hot_children(target_trees, slots_target, dtype)
    norms = _subtree_norms(left, right, ops.sum(ops.square(nodes), -1))
    t_norms = _subtree_norms(
        t_left, t_right, ops.sum(ops.square(target_nodes), -1)
    )
    pair_distance = ops.sum(
        ops.square(
            ops.expand_dims(nodes, 2) - ops.expand_dims(target_nodes, 1)
        ),
        axis=-1,
    )  # (B, slots_pred, slots_target)
    rows = [t_norms]  # the empty predicted tree against every target slot
    for slot in range(slots_pred):
        if slot < NUM_LEAVES:
            left_row = right_row = t_norms
        else:
            done = ops.stack(rows, axis=1)  # (B, 1 + slot, 1 + slots_target)
            size = slot + 1
            left_row = ops.einsum("bk,bkj->bj", left[:, slot, :size], done)
            right_row = ops.einsum("bk,bkj->bj", right[:, slot, :size], done)
        children = ops.einsum("bsj,bj->bs", t_left, left_row) + ops.einsum(
            "bsj,bj->bs", t_right, right_row
        )
        if isomorphic and slot >= NUM_LEAVES:
            swapped = ops.einsum(
                "bsj,bj->bs", t_right, left_row
            ) + ops.einsum("bsj,bj->bs", t_left, right_row)
            children = ops.minimum(children, swapped)
        matched = pair_distance[:, slot] + children
        rows.append(
            ops.concatenate([norms[:, slot + 1 : slot + 2], matched], axis=1)
        )
    return ops.stack(rows, axis=1)


def _root(trees, dtype):
    """The root of every tree in the shifted numbering, one-hot `(B, 1 +
    slots)`: the last slot, or 0 (none) for an empty tree."""
    num_slots = NUM_LEAVES + trees.shape[1]
    return ops.one_hot(
        ops.where(trees[:, 0, 0] >= 0, num_slots, 0), 1 + num_slots,
        dtype=dtype,
    )


@keras.saving.register_keras_serializable(package="on_lstm_keras")
class RRNNTreeDistance(Layer):
    """Adds `weight × mean tree distance` to the model's losses.

    Called on `[trees, nodes, target_trees, target_nodes]` (the
    `return_trees`/`return_nodes` outputs of the trained `RRNN` and of the
    target, e.g. a frozen `RRNN.from_gru(pretrained_gru, return_trees=True,
    return_nodes=True, return_sequences=True)` on the same inputs), it
    returns the tree distance per sample and step (see `tree_distance`) and
    adds `weight` times its mean over the unmasked steps with `add_loss`
    (a masked step, a tree of `-1`, does not count).

    Args:
        weight: Non-negative float, weight of the term (the reference code
            uses 0.003).
        internal_only: Boolean (default `True`), see `tree_distance`.
        isomorphic: Boolean (default `True`), see `tree_distance`.

    Example:

    >>> import numpy as np
    >>> from on_lstm_keras.rrnn import RRNN, SearchConfig
    >>> x = np.random.random((2, 4, 3)).astype("float32")
    >>> gru = keras.layers.GRU(5, reset_after=False, return_sequences=True)
    >>> _ = gru(x)
    >>> target = RRNN.from_gru(gru, return_trees=True, return_nodes=True)
    >>> layer = RRNN(5, search_config=SearchConfig(score_units=4),
    ...              return_sequences=True, return_trees=True,
    ...              return_nodes=True)
    >>> _, trees, nodes = layer(x)
    >>> _, t_trees, t_nodes = target(x)
    >>> tuple(RRNNTreeDistance(0.003)([trees, nodes, t_trees, t_nodes]).shape)
    (2, 4)
    """

    def __init__(self, weight=0.003, internal_only=True, isomorphic=True,
                 **kwargs):
        weight = check.non_negative_float("weight", weight)
        super().__init__(**kwargs)
        self.weight = weight
        self.internal_only = bool(internal_only)
        self.isomorphic = bool(isomorphic)

    def call(self, inputs):
        if not isinstance(inputs, (list, tuple)) or len(inputs) != 4:
            raise ValueError(
                "Argument `inputs` of RRNNTreeDistance must be a list "
                "[trees, nodes, target_trees, target_nodes], received: "
                f"{type(inputs).__name__} of length "
                f"{len(inputs) if hasattr(inputs, '__len__') else '?'}"
            )
        trees, nodes, target_trees, target_nodes = inputs
        distance = tree_distance(
            trees,
            nodes,
            target_trees,
            target_nodes,
            internal_only=self.internal_only,
            isomorphic=self.isomorphic,
        )
        distance = ops.cast(distance, "float32")
        trees = ops.convert_to_tensor(trees)
        valid = ops.cast(trees[..., 0, 0] >= 0, "float32")
        term = ops.sum(distance * valid) / ops.maximum(ops.sum(valid), 1.0)
        if self.weight > 0:
            self.add_loss(self.weight * term)
        return distance

    def compute_output_shape(self, input_shape):
        return tuple(input_shape[0][:-2])

    def get_config(self):
        return {
            **super().get_config(),
            "weight": self.weight,
            "internal_only": self.internal_only,
            "isomorphic": self.isomorphic,
        }
