"""The computation trees of `RRNN`: their description, reading and distance.

A tree is the list of the `N̄` merges one RRNN cell makes at one time step.
Nodes are numbered by *slot*: the three leaves first, then the generated
nodes in the order they are made::

    slot 0: x_t         (the input)
    slot 1: h_{t-1}     (the previous state)
    slot 2: 0           (the zero vector)
    slot 3 + n: the node made by merge n  (n = 0 .. N̄ - 1)

Merge `n` is a 5-tuple `(i, j, k, op, act)` with `i < j < 3 + n`: the new
node is `act(op(c_i · L_k, c_j · R_k) + b_k)`. `op` and `act` are names
(`"add"`, `"multiply"`; `"sigmoid"`, `"tanh"`, `"one_minus"`, `"identity"`,
`"relu"`) in a static description, and indices into the layer's
`operations` and `activations` lists in the integer tensors the layer
returns. The last node, slot `3 + N̄ - 1`, is `h_t`. A row of `-1` marks
a padded (masked) step: an empty tree.

This module is pure Python and numpy, except `tree_distance`, which is
written with `keras.ops` so it can be part of a training loss.
"""

import collections
import numbers

import keras
import numpy as np
from keras import ops

NUM_LEAVES = 3
LEAF_NAMES = ("x", "h", "0")
OPERATIONS = ("add", "multiply")
ACTIVATIONS = ("sigmoid", "tanh", "one_minus", "identity", "relu")
DEFAULT_ACTIVATIONS = ("sigmoid", "tanh", "one_minus", "identity")
POOLS = ("all", "roots")


def gru_tree():
    """The 9 merges that make a GRU (`reset_after=False`) cell.

    With tuples `0, 1, 2 = (W_z, U_z, b_z), (W_r, U_r, b_r), (W_h, U_h, b_h)`
    and tuple `3 = (I, I, 0)`:

    ```
    slot  merge                                  value
    3     (0, 1, 1, add, sigmoid)                r = σ(x L1 + h R1 + b1)
    4     (1, 3, 3, multiply, identity)          h ⊙ r
    5     (0, 4, 2, add, tanh)                   h̃ = tanh(x L2 + (r⊙h) R2 + b2)
    6     (0, 1, 0, add, sigmoid)                z = σ(x L0 + h R0 + b0)
    7     (2, 6, 3, add, one_minus)              1 − (0·I + z·I + 0) = 1 − z
    8     (5, 7, 3, multiply, identity)          h̃ ⊙ (1 − z)
    9     (0, 1, 0, add, sigmoid)                z again
    10    (1, 9, 3, multiply, identity)          h ⊙ z
    11    (8, 10, 3, add, identity)              h_t = (1 − z)⊙h̃ + z⊙h
    ```

    `1 − z` merges the zero leaf (left, `0 · L3 = 0`) with `z` (right) by
    addition and the one-minus activation. `z` is made twice, once for each
    of its two parents, so that the list is a valid tree for both pools:
    with `pool="roots"` a generated node can be a child only once.

    Returns:
        A list of 9 tuples `(i, j, k, op, act)` with `op`, `act` names.

    Example:

    >>> tree_expression(gru_tree(), identity_tuples=(3,))
    'h_t = tanh(x·L2 + (h ⊙ σ(x·L1 + h·R1 + b1))·R2 + b2) ⊙ (1 − σ(x·L0 + h·R0 + b0)) + h ⊙ σ(x·L0 + h·R0 + b0)'
    """  # noqa: E501
    return [
        (0, 1, 1, "add", "sigmoid"),
        (1, 3, 3, "multiply", "identity"),
        (0, 4, 2, "add", "tanh"),
        (0, 1, 0, "add", "sigmoid"),
        (2, 6, 3, "add", "one_minus"),
        (5, 7, 3, "multiply", "identity"),
        (0, 1, 0, "add", "sigmoid"),
        (1, 9, 3, "multiply", "identity"),
        (8, 10, 3, "add", "identity"),
    ]


def _name_index(argument, value, names, position):
    if isinstance(value, str):
        if value not in names:
            allowed = ", ".join(repr(n) for n in names)
            raise ValueError(
                f"Argument `{argument}` has merge {position} with an unknown "
                f"name {value!r}; allowed: {allowed}"
            )
        return names.index(value)
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Integral)
        or not 0 <= value < len(names)
    ):
        raise ValueError(
            f"Argument `{argument}` has merge {position} with an invalid "
            f"entry {value!r}; expected a name in {tuple(names)} or an index "
            f"in [0, {len(names)})"
        )
    return int(value)


def normalize_tree(
    tree,
    iterations=None,
    tuples=4,
    operations=OPERATIONS,
    activations=DEFAULT_ACTIVATIONS,
    pool="all",
    argument="tree",
):
    """Checks a static tree and returns it as a tuple of integer 5-tuples.

    Args:
        tree: A sequence of merges `(i, j, k, op, act)`; `op` and `act` are
            names or indices into `operations` and `activations`.
        iterations: If given, the number of merges the tree must have.
        tuples: Number of parameter tuples; `k` must be in `[0, tuples)`.
        operations: The binary operations `op` refers to.
        activations: The activations `act` refers to.
        pool: `"all"` (a generated node may be a child many times) or
            `"roots"` (each generated node is a child at most once, and all
            but the last one are used: the merges form one tree).
        argument: The argument name used in error messages.

    Returns:
        A tuple of `(i, j, k, op_index, act_index)` integer tuples.

    Raises:
        ValueError: naming `argument`, the merge and the offending value.

    Example:

    >>> normalize_tree([(0, 1, 0, "add", "tanh")])
    ((0, 1, 0, 0, 1),)
    """
    if isinstance(tree, (str, bytes)) or not hasattr(tree, "__len__"):
        raise ValueError(
            f"Argument `{argument}` must be a list of merges "
            f"(i, j, k, op, act), received: {argument}={tree!r}"
        )
    if len(tree) == 0:
        raise ValueError(
            f"Argument `{argument}` must hold at least one merge, "
            f"received: {argument}={tree!r}"
        )
    if iterations is not None and len(tree) != iterations:
        raise ValueError(
            f"Argument `{argument}` must hold exactly `iterations` merges, "
            f"received {len(tree)} merges for iterations={iterations}"
        )
    result = []
    uses = collections.Counter()
    for n, merge in enumerate(tree):
        if isinstance(merge, (str, bytes)) or len(merge) != 5:
            raise ValueError(
                f"Argument `{argument}` has merge {n} = {merge!r}; each merge "
                "must be a 5-tuple (i, j, k, op, act)"
            )
        i, j, k, op, act = merge
        slots = NUM_LEAVES + n
        for name, value in (("i", i), ("j", j), ("k", k)):
            if isinstance(value, bool) or not isinstance(
                value, numbers.Integral
            ):
                raise ValueError(
                    f"Argument `{argument}` has merge {n} with {name}="
                    f"{value!r}; it must be an integer"
                )
        if not 0 <= i < j < slots:
            raise ValueError(
                f"Argument `{argument}` has merge {n} with children "
                f"(i, j)=({i}, {j}); they must satisfy 0 <= i < j < {slots} "
                f"(merge {n} can use slots 0..{slots - 1})"
            )
        if not 0 <= k < tuples:
            raise ValueError(
                f"Argument `{argument}` has merge {n} with tuple k={k}; it "
                f"must be in [0, {tuples}) (tuples={tuples})"
            )
        op_index = _name_index(argument, op, tuple(operations), n)
        act_index = _name_index(argument, act, tuple(activations), n)
        for child in (i, j):
            if child >= NUM_LEAVES:
                uses[child] += 1
        result.append((int(i), int(j), int(k), op_index, act_index))
    if pool == "roots":
        last = NUM_LEAVES + len(tree) - 1
        for slot in range(NUM_LEAVES, last):
            if uses[slot] != 1:
                raise ValueError(
                    f"Argument `{argument}` is not a valid tree for "
                    f"pool='roots': generated node {slot} is a child "
                    f"{uses[slot]} times (it must be a child exactly once)"
                )
    return tuple(result)


def tree_to_names(tree, operations=OPERATIONS, activations=DEFAULT_ACTIVATIONS):
    """A tree of indices as a JSON-friendly list `[i, j, k, op, act]`."""
    return [
        [int(i), int(j), int(k), operations[o], activations[a]]
        for i, j, k, o, a in tree
    ]


# -- reading a tree -----------------------------------------------------------

_ATOM, _PRODUCT, _SUM = 0, 1, 2


def _paren(text, precedence, limit):
    return f"({text})" if precedence > limit else text


def _render_merge(left, right, k, op, act, identity):
    """Renders one merge from its children's `(text, precedence)`."""
    terms = []

    def edge(child, matrix):
        if child is None:  # the zero leaf: 0 · M = 0
            return None
        text, prec = child
        if identity:
            return child
        return f"{_paren(text, prec, _ATOM)}·{matrix}{k}", _PRODUCT

    a, b = edge(left, "L"), edge(right, "R")
    if op == "add":
        terms.extend(t for t in (a, b) if t is not None)
    elif op == "multiply":
        if a is not None and b is not None:
            terms.append(
                (
                    f"{_paren(a[0], a[1], _PRODUCT)} ⊙ "
                    f"{_paren(b[0], b[1], _PRODUCT)}",
                    _PRODUCT,
                )
            )
    else:
        raise ValueError(f"Unknown operation {op!r}")
    if not identity:
        terms.append((f"b{k}", _ATOM))
    if not terms:
        inner = ("0", _ATOM)
    elif len(terms) == 1:
        inner = terms[0]
    else:
        inner = (" + ".join(t[0] for t in terms), _SUM)
    text, prec = inner
    if act == "identity":
        return inner
    if act == "one_minus":
        return f"1 − {_paren(text, prec, _PRODUCT)}", _SUM
    function = {"sigmoid": "σ", "tanh": "tanh", "relu": "relu"}.get(act)
    if function is None:
        raise ValueError(f"Unknown activation {act!r}")
    return f"{function}({text})", _ATOM


def _as_rows(tree):
    rows = np.asarray(tree, dtype=object)
    if rows.ndim != 2 or rows.shape[1] != 5:
        raise ValueError(
            "Argument `tree` must have shape (iterations, 5), received: "
            f"shape={rows.shape}"
        )
    return [tuple(r) for r in rows.tolist()]


def tree_expression(
    tree,
    operations=OPERATIONS,
    activations=DEFAULT_ACTIVATIONS,
    identity_tuples=(),
    steps=False,
):
    """Turns one tree (the merges of one sample at one step) into text.

    Leaves read `x`, `h` (for `h_{t-1}`) and `0`. A merge with tuple `k`
    reads `act(c_i·Lk + c_j·Rk + bk)` for addition and
    `act(c_i·Lk ⊙ c_j·Rk + bk)` for multiplication; terms with the zero leaf
    are dropped (`0·L = 0`). Tuples listed in `identity_tuples` are read as
    `(I, I, 0)` (e.g. tuple 3 at initialization or after `RRNN.from_gru`),
    so `x ⊙ h` instead of `x·L3 ⊙ h·R3 + b3`. Only the nodes the output
    `h_t` depends on appear: merges off its tree are ignored.

    Args:
        tree: Array-like `(iterations, 5)`: rows `(i, j, k, op, act)`, with
            `op`/`act` as indices into `operations`/`activations` (as the
            layer returns them) or as names. A row of `-1` (a masked step)
            gives `"(padding)"`.
        operations: Names of the layer's binary operations.
        activations: Names of the layer's activations.
        identity_tuples: Tuple indices to read as `(I, I, 0)`.
        steps: If `True`, one line per node (`n3 = σ(x·L1 + h·R1 + b1)`,
            ..., `h_t = n8 + n10`) instead of one nested expression.

    Returns:
        A string, `"h_t = ..."`.

    Example:

    >>> tree_expression([(0, 1, 0, "add", "tanh"), (1, 3, 1, "multiply",
    ...                  "identity")], identity_tuples=(1,))
    'h_t = h ⊙ tanh(x·L0 + h·R0 + b0)'
    >>> print(tree_expression([(0, 1, 0, 0, 0), (2, 3, 1, 0, 2)],
    ...                       identity_tuples=(1,), steps=True))
    n3 = σ(x·L0 + h·R0 + b0)
    h_t = 1 − n3
    """
    rows = _as_rows(tree)
    if all(int(v) == -1 for v in rows[0] if not isinstance(v, str)):
        return "(padding)"
    identity_tuples = set(int(k) for k in identity_tuples)
    root = NUM_LEAVES + len(rows) - 1
    needed = set()
    stack = [root]
    while stack:
        slot = stack.pop()
        if slot < NUM_LEAVES or slot in needed:
            continue
        needed.add(slot)
        i, j = rows[slot - NUM_LEAVES][:2]
        stack.extend((int(i), int(j)))
    values = {0: ("x", _ATOM), 1: ("h", _ATOM), 2: None}
    lines = []
    for n, (i, j, k, o, a) in enumerate(rows):
        slot = NUM_LEAVES + n
        if slot not in needed:
            continue
        op = o if isinstance(o, str) else operations[int(o)]
        act = a if isinstance(a, str) else activations[int(a)]
        k = int(k)
        text = _render_merge(
            values[int(i)], values[int(j)], k, op, act, k in identity_tuples
        )
        if steps:
            name = "h_t" if slot == root else f"n{slot}"
            lines.append(f"{name} = {text[0]}")
            values[slot] = (name, _ATOM)
        else:
            values[slot] = text
    if steps:
        return "\n".join(lines)
    return f"h_t = {values[root][0]}"


def most_common_trees(
    trees,
    mask=None,
    top=5,
    operations=OPERATIONS,
    activations=DEFAULT_ACTIVATIONS,
    identity_tuples=(),
):
    """Counts the trees in a batch by the expression they compute.

    Two merge lists that differ only in merges off the output's tree give
    the same expression and count as one tree.

    Args:
        trees: Integer array `(..., iterations, 5)`, e.g. the layer's trees
            output `(batch, timesteps, iterations, 5)`.
        mask: Optional boolean array of shape `trees.shape[:-2]`; `False`
            entries are skipped. Rows of `-1` (masked steps) are always
            skipped.
        top: How many trees to return (`None`: all).
        operations, activations, identity_tuples: As in `tree_expression`.

    Returns:
        A list of `(expression, count, fraction)`, most frequent first;
        `fraction` is the share of the counted trees.

    Example:

    >>> t = np.array([[[0, 1, 0, 0, 1]], [[0, 1, 0, 0, 1]], [[0, 1, 1, 0, 0]]])
    >>> most_common_trees(t, top=1)
    [('h_t = tanh(x·L0 + h·R0 + b0)', 2, 0.6666666666666666)]
    """
    trees = np.asarray(trees)
    if trees.ndim < 2 or trees.shape[-1] != 5:
        raise ValueError(
            "Argument `trees` must have shape (..., iterations, 5), "
            f"received: shape={trees.shape}"
        )
    flat = trees.reshape((-1,) + trees.shape[-2:])
    keep = flat[:, 0, 0] >= 0
    if mask is not None:
        keep &= np.asarray(mask, dtype=bool).reshape(-1)
    flat = flat[keep]
    if len(flat) == 0:
        return []
    unique, counts = np.unique(flat, axis=0, return_counts=True)
    by_expression = collections.Counter()
    for tree, count in zip(unique, counts):
        text = tree_expression(
            tree,
            operations=operations,
            activations=activations,
            identity_tuples=identity_tuples,
        )
        by_expression[text] += int(count)
    total = sum(by_expression.values())
    return [
        (text, count, count / total)
        for text, count in by_expression.most_common(top)
    ]


# -- tree distance ------------------------------------------------------------


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


def tree_distance(trees, nodes, target_trees, target_nodes):
    """Tree distance TD between predicted and target trees.

    Both trees are laid out in heap order (root at position 1, the children
    of position `p` at `2p` (left) and `2p + 1` (right)), expanding every
    generated node down to the leaves `x`, `h_{t-1}`, `0`; a node that is a
    child several times appears at each of its positions. Then

        TD = Σ_p ‖v_p − v'_p‖²,

    over the positions held by either tree, where a position held by only
    one tree counts the squared norm of its node (the other's value is 0).
    Children order is taken as given: the paper's minimum over isomorphic
    target trees is not taken (the reference code also compares one
    ordering). The sum is computed by a recursion over pairs of slots,
    `D(s, s') = ‖v_s − v'_s'‖² + D(l(s), l(s')) + D(r(s), r(s'))`, in
    `O(slots²)` per tree, without expanding the (possibly exponentially
    large) heap.

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
    lead = ops.shape(trees)[:-2]
    n_pred, n_target = trees.shape[-2], target_trees.shape[-2]
    width = max(nodes.shape[-1], target_nodes.shape[-1])

    def pad(v):
        extra = width - v.shape[-1]
        if extra == 0:
            return v
        padding = [[0, 0]] * (len(v.shape) - 1) + [[0, extra]]
        return ops.pad(v, padding)

    slots_pred, slots_target = NUM_LEAVES + n_pred, NUM_LEAVES + n_target
    nodes = pad(nodes)
    target_nodes = pad(target_nodes)
    # Broadcast the target over the leading axes of the prediction.
    target_trees = ops.broadcast_to(
        target_trees, tuple(lead) + (n_target, 5)
    )
    target_nodes = ops.broadcast_to(
        target_nodes, tuple(lead) + (slots_target, width)
    )
    trees = ops.reshape(trees, (-1, n_pred, 5))
    target_trees = ops.reshape(target_trees, (-1, n_target, 5))
    nodes = ops.reshape(nodes, (-1, slots_pred, width))
    target_nodes = ops.reshape(target_nodes, (-1, slots_target, width))

    # The heap-order sum, by recursion over pairs of slots (no expansion):
    #   D(s, s') = |v_s - v'_s'|^2 + D(l(s), l(s')) + D(r(s), r(s')),
    #   D(s, none) = subtree norm of s,  D(none, none) = 0.
    # Children as one-hot rows over (none, slot 0, slot 1, ...): the
    # gathers below are then small products, cheap to compile and to
    # differentiate on every backend.
    dtype = nodes.dtype
    left, right = (
        ops.one_hot(c, 1 + slots_pred, dtype=dtype)
        for c in _children(trees, slots_pred)
    )
    t_left, t_right = (
        ops.one_hot(c, 1 + slots_target, dtype=dtype)
        for c in _children(target_trees, slots_target)
    )
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
        matched = (
            pair_distance[:, slot]
            + ops.einsum("bsj,bj->bs", t_left, left_row)
            + ops.einsum("bsj,bj->bs", t_right, right_row)
        )
        rows.append(
            ops.concatenate([norms[:, slot + 1 : slot + 2], matched], axis=1)
        )
    table = ops.stack(rows, axis=1)  # (B, 1 + slots_pred, 1 + slots_target)
    # Roots (in the shifted numbering): the last slot, or 0 (none) for an
    # empty tree.
    root = ops.one_hot(
        ops.where(trees[:, 0, 0] >= 0, slots_pred, 0), 1 + slots_pred,
        dtype=dtype,
    )
    t_root = ops.one_hot(
        ops.where(target_trees[:, 0, 0] >= 0, slots_target, 0),
        1 + slots_target,
        dtype=dtype,
    )
    distance = ops.einsum("bi,bij,bj->b", root, table, t_root)
    return ops.reshape(distance, lead)
