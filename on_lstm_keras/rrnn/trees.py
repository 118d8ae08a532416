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

This module is pure Python and numpy. `gru_tree` is the tree of a GRU
cell; the GRU's weights in an RRNN are `on_lstm_keras.rrnn.gru`'s; the distance between two trees is
`tree_distance` in `on_lstm_keras.rrnn.distance`.
"""

import collections
import numbers

import numpy as np

NUM_LEAVES = 3
LEAF_NAMES = ("x", "h", "0")
OPERATIONS = ("add", "multiply")
ACTIVATIONS = ("sigmoid", "tanh", "one_minus", "identity", "relu")
DEFAULT_ACTIVATIONS = ("sigmoid", "tanh", "one_minus", "identity")
POOLS = ("all", "roots")


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


def gru_tree():
    """The 9 merges that make a GRU (`reset_after=False`) cell.

    With tuples `0, 1, 2 = (W_z, U_z, b_z), (W_r, U_r, b_r), (W_h, U_h, b_h)`
    and tuple `3 = (I, I, 0)`:

    ```
    slot  merge                                  value
    3     (0, 1, 0, add, sigmoid)                z = σ(x L0 + h R0 + b0)
    4     (0, 1, 1, add, sigmoid)                r = σ(x L1 + h R1 + b1)
    5     (1, 4, 3, multiply, identity)          h ⊙ r
    6     (0, 5, 2, add, tanh)                   h̃ = tanh(x L2 + (r⊙h) R2 + b2)
    7     (2, 3, 3, add, one_minus)              1 − (0·I + z·I + 0) = 1 − z
    8     (6, 7, 3, multiply, identity)          h̃ ⊙ (1 − z)
    9     (0, 1, 0, add, sigmoid)                z again
    10    (1, 9, 3, multiply, identity)          h ⊙ z
    11    (8, 10, 3, add, identity)              h_t = (1 − z)⊙h̃ + z⊙h
    ```

    Merges 0 and 1 are `z` on tuple 0 and `r` on tuple 1, the order the
    search's symmetry break (`break_symmetry=True`) requires, so the same
    list is a tree the hard search can pick. `1 − z` merges the zero leaf
    (left, `0 · L3 = 0`) with `z` (right) by addition and the one-minus
    activation. `z` is made twice, once for each of its two parents, so
    that the list is a valid tree for both pools: with `pool="roots"` a
    generated node can be a child only once (and with `unique_roots=True`
    the second `z` is allowed because the first has been used by then).

    Returns:
        A list of 9 tuples `(i, j, k, op, act)` with `op`, `act` names.

    Example:

    >>> tree_expression(gru_tree(), identity_tuples=(3,))
    'h_t = tanh(x·L2 + (h ⊙ σ(x·L1 + h·R1 + b1))·R2 + b2) ⊙ (1 − σ(x·L0 + h·R0 + b0)) + h ⊙ σ(x·L0 + h·R0 + b0)'
    """  # noqa: E501
    return [
        (0, 1, 0, "add", "sigmoid"),
        (0, 1, 1, "add", "sigmoid"),
        (1, 4, 3, "multiply", "identity"),
        (0, 5, 2, "add", "tanh"),
        (2, 3, 3, "add", "one_minus"),
        (6, 7, 3, "multiply", "identity"),
        (0, 1, 0, "add", "sigmoid"),
        (1, 9, 3, "multiply", "identity"),
        (8, 10, 3, "add", "identity"),
    ]
