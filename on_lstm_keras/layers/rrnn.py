"""RRNN: recurrent layer whose cell builds its own computation tree.

Qian, Kennedy and Klabjan, "Dynamic Cell Structure via Recursive-Recurrent
Neural Networks" (2019). At every time step the cell starts from the leaves
`x_t`, `h_{t-1}` and `0`, makes `N̄` nodes by greedy merges chosen with a
learned score, and the last node is `h_t`. GRU is a special case
(`RRNN.from_gru` builds the one that equals a given `keras.layers.GRU`);
the paper's LSTM case needs a second state (its appendix B), which this
layer does not carry.

The tree tools (`gru_tree`, `tree_expression`, `most_common_trees`,
`tree_distance`) live in `on_lstm_keras.layers.rrnn_trees` and are
re-exported here.
"""

import keras
import numpy as np
from keras import constraints
from keras import initializers
from keras import ops
from keras import regularizers
from keras import tree as nest
from keras.layers import Layer
from keras.layers import RNN
# The backend-agnostic recurrence that `keras.layers.RNN` itself runs on.
from keras.src.backend import rnn as backend_rnn

from on_lstm_keras import _validation as check
from on_lstm_keras.layers._rnn_extras import cell_property as _cell_property
from on_lstm_keras.layers._rnn_extras import check_sequence_rank
from on_lstm_keras.layers._rnn_extras import insert_extra_masks
from on_lstm_keras.layers._rnn_extras import insert_extras
from on_lstm_keras.layers.rrnn_trees import ACTIVATIONS
from on_lstm_keras.layers.rrnn_trees import DEFAULT_ACTIVATIONS
from on_lstm_keras.layers.rrnn_trees import NUM_LEAVES
from on_lstm_keras.layers.rrnn_trees import OPERATIONS
from on_lstm_keras.layers.rrnn_trees import POOLS
from on_lstm_keras.layers.rrnn_trees import gru_tree
from on_lstm_keras.layers.rrnn_trees import most_common_trees
from on_lstm_keras.layers.rrnn_trees import normalize_tree
from on_lstm_keras.layers.rrnn_trees import tree_distance
from on_lstm_keras.layers.rrnn_trees import tree_expression
from on_lstm_keras.layers.rrnn_trees import tree_to_names

__all__ = [
    "RRNN",
    "RRNNCell",
    "RRNNTreeDistance",
    "gru_tree",
    "most_common_trees",
    "tree_distance",
    "tree_expression",
]

SELECTIONS = ("hard", "soft", "forced")

_UNARY = {
    "sigmoid": ops.sigmoid,
    "tanh": ops.tanh,
    "one_minus": lambda v: 1.0 - v,
    "identity": lambda v: v,
    "relu": ops.relu,
}
_BINARY = {
    "add": lambda a, b: a + b,
    "multiply": lambda a, b: a * b,
}


def _names(argument, value, allowed):
    if isinstance(value, str) or not hasattr(value, "__iter__"):
        raise ValueError(
            f"Argument `{argument}` must be a list of names from "
            f"{allowed}, received: {argument}={value!r}"
        )
    value = tuple(value)
    if not value:
        raise ValueError(
            f"Argument `{argument}` must name at least one entry, "
            f"received: {argument}={value!r}"
        )
    for name in value:
        check.choice(argument, name, allowed)
    if len(set(value)) != len(value):
        raise ValueError(
            f"Argument `{argument}` must not repeat a name, "
            f"received: {argument}={value!r}"
        )
    return value


def _with_identity_block(initializer, tuples, rows, units, use_identity):
    """Initializer of `(rows, tuples * units)` whose last block is `I`."""
    if not use_identity:
        return initializer

    def init(shape, dtype=None):
        values = initializer(shape, dtype=dtype)
        eye = ops.cast(ops.eye(rows, units), values.dtype)
        return ops.concatenate([values[:, : (tuples - 1) * units], eye], 1)

    return init


def _pair_tables(iterations):
    """Static `(i, j)` children of every candidate pair, per iteration."""
    tables = []
    for n in range(iterations):
        slots = NUM_LEAVES + n
        pairs = [(i, j) for i in range(slots) for j in range(i + 1, slots)]
        left = np.array([p[0] for p in pairs], dtype="int32")
        right = np.array([p[1] for p in pairs], dtype="int32")
        generated = (left >= NUM_LEAVES).astype("int32") + (
            right >= NUM_LEAVES
        ).astype("int32")
        tables.append((left, right, generated))
    return tables


@keras.saving.register_keras_serializable(package="on_lstm_keras")
class RRNNCell(Layer):
    """Cell class for the `RRNN` layer: one step builds one computation tree.

    The cell holds `K = tuples` parameter tuples `(L_k, R_k, b_k)`, a set of
    binary operations `o` (`add`, `multiply`), a set of activations `u`
    (`sigmoid`, `tanh`, `one_minus` = `1 − v`, `identity`, optionally `relu`)
    and a score `α(c)` (an MLP with `score_units` ReLU units, or linear when
    `score_units=0`). At step `t`, starting from the leaves

        slot 0: x_t,   slot 1: h_{t-1},   slot 2: 0,

    it makes `N̄ = iterations` nodes; merge `n` builds every candidate

        c = u(o(c_i · L_k, c_j · R_k) + b_k)

    for the pairs `i < j` of its pool, all tuples `k`, operations and
    activations, picks one by `α` and puts it in slot `3 + n`. The last node
    is `h_t` (and the state).

    Pools (`pool`):
        `"all"` (the paper's Algorithm 1): every slot made so far, leaves and
        generated nodes, can be a child, any number of times.
        `"roots"` (the reference code): the leaves are always available, a
        generated node only until it has been used as a child; candidates
        that would leave more than one root after the last merge are
        excluded, so the merges always form a single tree rooted at `h_t`.

    Selection (`selection`):
        `"hard"` (the paper): the candidate with the highest score; the
        gradient is straight-through the softmax mixture, i.e. the forward
        value is `c* + (Σ softmax(α)·c − stop_gradient(Σ softmax(α)·c))`,
        so the score MLP and every candidate receive gradients.
        `"soft"` (the reference code): the softmax(α) mixture of all
        candidates is the node value; the argmax only records the tree (and,
        with `pool="roots"`, which nodes are used up).
        `"forced"`: a fixed tree `tree` (a list of merges, see
        `rrnn_trees`), e.g. `gru_tree()`; no candidates and no scores.

    Weights. The input `x_t` has `input_dim` features and every other node
    `units`, so the edges out of `x_t` have their own matrices:
    `kernel` `(input_dim, K * units)` holds `[L_0 | ... | L_{K-1}]` for `x`
    (slot 0 is always the left child, as `i < j`); `left_kernel` and
    `right_kernel`, `(units, K * units)` each, hold `L_k` and `R_k` for
    `h_{t-1}` and the generated nodes; `bias` `(K * units,)` holds the
    `b_k`. With `tie_input_kernel=True` (the paper and the reference code,
    which use one `L_k` per tuple; needs `input_dim == units`) `x` uses
    `left_kernel` and there is no `kernel`. With `identity_init=True` the
    last tuple starts as `(I, I, 0)` (tuple 3 for `K = 4`, as in the
    reference code). The score has `score_hidden_kernel` `(units, H)`,
    `score_hidden_bias` `(H,)` and `score_kernel` `(H, 1)` (or `(units, 1)`
    when `H = 0`; a score bias would not change any choice); in forced mode
    there is no score and no score weight.

    Cost: with the `"all"` pool, merge `n` scores `(3+n)(2+n)/2 · K · |o| ·
    |u|` candidates (1760 at `n = 8` with the defaults), each of width
    `units`, per sample and step.

    Args:
        units: Positive integer, size of `h` and of every generated node.
        iterations: Positive integer `N̄`, merges per step (9 for GRU).
        tuples: Positive integer `K`, number of `(L, R, b)` tuples.
        score_units: Non-negative integer, hidden ReLU units of the score
            MLP (the reference code uses 64); 0 for a linear score.
        selection: `"hard"` (default), `"soft"` or `"forced"`.
        pool: `"all"` (default) or `"roots"`.
        tree: The forced tree (required with, and only with,
            `selection="forced"`): `iterations` merges `(i, j, k, op, act)`.
        operations: Binary operations to choose from, names in
            `("add", "multiply")`. Default: both.
        activations: Activations to choose from, names in `("sigmoid",
            "tanh", "one_minus", "identity", "relu")`. Default: the first
            four (the paper's set; the reference code also has `relu`).
        margin: Positive float `M` of the margin term
            `Σ_n max(0, M − (α_1 − α_2)) / M` (top two scores of merge `n`).
        bounded: Boolean (default `True`). A guard found in an early
            version of the reference code: a candidate with an unbounded
            activation (`identity`, `one_minus`, `relu`) is allowed only
            where every entry of its pre-activation `o(·,·) + b` lies in
            (−1, 1), so every generated node stays in [−1, 2]. Without it,
            an untrained score readily picks multiplication and identity
            chains whose values overflow within a few steps. The GRU tree
            passes the guard whenever `|h_0| < 1` (its identity and
            one-minus nodes are products and convex sums of values in
            (−1, 1)). Not applied in forced mode.
        identity_init: Boolean (default `True`), start the last tuple as
            `(I, I, 0)`.
        tie_input_kernel: Boolean (default `False`), `x` shares `L_k` with
            the other nodes (see above).
        kernel_initializer: Initializer for `kernel`. Default:
            `"glorot_uniform"`.
        recurrent_initializer: Initializer for `left_kernel` and
            `right_kernel`. Default: `"orthogonal"`.
        bias_initializer: Initializer for `bias`. Default: `"zeros"`.
        score_initializer: Initializer for the score kernels. Default:
            `"glorot_uniform"`.
        kernel_regularizer: Regularizer applied to `kernel`.
        recurrent_regularizer: Regularizer applied to `left_kernel` and
            `right_kernel`.
        bias_regularizer: Regularizer applied to `bias`.
        score_regularizer: Regularizer applied to the score kernels.
        kernel_constraint: Constraint applied to `kernel`.
        recurrent_constraint: Constraint applied to `left_kernel` and
            `right_kernel`.
        bias_constraint: Constraint applied to `bias`.

    Call arguments:
        inputs: A 2D tensor `(batch, features)`.
        states: A list with one 2D tensor `h`, `(batch, units)`.
        training: Unused (no dropout); accepted for `keras.layers.RNN`.

    Example:

    >>> import numpy as np
    >>> rnn = keras.layers.RNN(RRNNCell(8, iterations=3, score_units=4))
    >>> tuple(rnn(np.random.random((2, 5, 6)).astype("float32")).shape)
    (2, 8)
    """

    def __init__(
        self,
        units,
        iterations=9,
        tuples=4,
        score_units=16,
        selection="hard",
        pool="all",
        tree=None,
        operations=OPERATIONS,
        activations=DEFAULT_ACTIVATIONS,
        margin=1.0,
        bounded=True,
        identity_init=True,
        tie_input_kernel=False,
        kernel_initializer="glorot_uniform",
        recurrent_initializer="orthogonal",
        bias_initializer="zeros",
        score_initializer="glorot_uniform",
        kernel_regularizer=None,
        recurrent_regularizer=None,
        bias_regularizer=None,
        score_regularizer=None,
        kernel_constraint=None,
        recurrent_constraint=None,
        bias_constraint=None,
        **kwargs,
    ):
        units = check.positive_int("units", units)
        iterations = check.positive_int("iterations", iterations)
        tuples = check.positive_int("tuples", tuples)
        score_units = check.non_negative_int("score_units", score_units)
        selection = check.choice("selection", selection, SELECTIONS)
        pool = check.choice("pool", pool, POOLS)
        operations = _names("operations", operations, OPERATIONS)
        activations = _names("activations", activations, ACTIVATIONS)
        if (
            isinstance(margin, bool)
            or not isinstance(margin, (int, float))
            or not margin > 0
        ):
            raise ValueError(
                "Argument `margin` must be a positive float, "
                f"received: margin={margin!r}"
            )
        if selection == "forced":
            if tree is None:
                raise ValueError(
                    "Argument `tree` is required when selection='forced', "
                    "received: tree=None (e.g. pass tree=gru_tree())"
                )
            tree = normalize_tree(
                tree,
                iterations=iterations,
                tuples=tuples,
                operations=operations,
                activations=activations,
                pool=pool,
            )
        elif tree is not None:
            raise ValueError(
                "Argument `tree` is only used with selection='forced', "
                f"received: tree={tree!r} with selection={selection!r}"
            )
        super().__init__(**kwargs)
        self.units = units
        self.iterations = iterations
        self.tuples = tuples
        self.score_units = score_units
        self.selection = selection
        self.pool = pool
        self.tree = tree
        self.operations = operations
        self.activations = activations
        self.margin = float(margin)
        self.bounded = bool(bounded)
        self.identity_init = bool(identity_init)
        self.tie_input_kernel = bool(tie_input_kernel)

        self.kernel_initializer = initializers.get(kernel_initializer)
        self.recurrent_initializer = initializers.get(recurrent_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.score_initializer = initializers.get(score_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.recurrent_regularizer = regularizers.get(recurrent_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.score_regularizer = regularizers.get(score_regularizer)
        self.kernel_constraint = constraints.get(kernel_constraint)
        self.recurrent_constraint = constraints.get(recurrent_constraint)
        self.bias_constraint = constraints.get(bias_constraint)

        self.state_size = self.units
        self.output_size = self.units
        self.input_dim = None
        self._pairs = _pair_tables(iterations)

    # -- sizes ------------------------------------------------------------

    @property
    def num_slots(self):
        """Number of node slots: 3 leaves plus `iterations` generated."""
        return NUM_LEAVES + self.iterations

    @property
    def node_width(self):
        """Width of the nodes output: `max(input_dim, units)`."""
        return max(self.input_dim or 0, self.units)

    def num_candidates(self, n):
        """Number of candidates merge `n` scores (0 in forced mode)."""
        if self.selection == "forced":
            return 0
        return (
            len(self._pairs[n][0])
            * self.tuples
            * len(self.operations)
            * len(self.activations)
        )

    # -- weights ----------------------------------------------------------

    def build(self, input_shape):
        input_dim = input_shape[-1]
        if input_dim is None:
            raise ValueError(
                "Argument `inputs` of RRNNCell must have a known last "
                f"dimension, received: shape={tuple(input_shape)}"
            )
        if self.tie_input_kernel and input_dim != self.units:
            raise ValueError(
                "Argument `tie_input_kernel=True` needs inputs with "
                f"`units` features, received: input_dim={input_dim}, "
                f"units={self.units}"
            )
        self.input_dim = int(input_dim)
        K, units = self.tuples, self.units
        if self.tie_input_kernel:
            self.kernel = None
        else:
            self.kernel = self.add_weight(
                shape=(input_dim, K * units),
                name="kernel",
                initializer=_with_identity_block(
                    self.kernel_initializer,
                    K,
                    input_dim,
                    units,
                    self.identity_init,
                ),
                regularizer=self.kernel_regularizer,
                constraint=self.kernel_constraint,
            )
        recurrent_init = _with_identity_block(
            self.recurrent_initializer, K, units, units, self.identity_init
        )
        self.left_kernel = self.add_weight(
            shape=(units, K * units),
            name="left_kernel",
            initializer=recurrent_init,
            regularizer=self.recurrent_regularizer,
            constraint=self.recurrent_constraint,
        )
        self.right_kernel = self.add_weight(
            shape=(units, K * units),
            name="right_kernel",
            initializer=recurrent_init,
            regularizer=self.recurrent_regularizer,
            constraint=self.recurrent_constraint,
        )
        if self.identity_init:
            base_bias = self.bias_initializer

            def bias_init(shape, dtype=None):
                values = base_bias(shape, dtype=dtype)
                zeros = ops.zeros((units,), dtype=values.dtype)
                return ops.concatenate([values[: (K - 1) * units], zeros])

        else:
            bias_init = self.bias_initializer
        self.bias = self.add_weight(
            shape=(K * units,),
            name="bias",
            initializer=bias_init,
            regularizer=self.bias_regularizer,
            constraint=self.bias_constraint,
        )
        self.score_hidden_kernel = None
        self.score_hidden_bias = None
        self.score_kernel = None
        if self.selection == "forced":  # no candidates, nothing to score
            self.built = True
            return
        if self.score_units:
            self.score_hidden_kernel = self.add_weight(
                shape=(units, self.score_units),
                name="score_hidden_kernel",
                initializer=self.score_initializer,
                regularizer=self.score_regularizer,
            )
            self.score_hidden_bias = self.add_weight(
                shape=(self.score_units,),
                name="score_hidden_bias",
                initializer="zeros",
            )
            score_in = self.score_units
        else:
            score_in = units
        self.score_kernel = self.add_weight(
            shape=(score_in, 1),
            name="score_kernel",
            initializer=self.score_initializer,
            regularizer=self.score_regularizer,
        )
        self.built = True

    # -- the computation --------------------------------------------------

    def input_projection(self, inputs):
        """`x · [L_0 | ... | L_{K-1}]` for one step or a whole sequence."""
        kernel = self.left_kernel if self.tie_input_kernel else self.kernel
        return ops.matmul(inputs, kernel)

    def node_kernel(self):
        """`[left_kernel | right_kernel]`, `(units, 2 * K * units)`."""
        return ops.concatenate([self.left_kernel, self.right_kernel], axis=1)

    def score(self, candidates):
        """`α(c)` for candidates `(..., units)`; returns `(...)`."""
        hidden = candidates
        if self.score_units:
            hidden = ops.relu(
                ops.matmul(hidden, self.score_hidden_kernel)
                + self.score_hidden_bias
            )
        return ops.squeeze(ops.matmul(hidden, self.score_kernel), axis=-1)

    def _project(self, value, node_kernel, batch):
        K, units = self.tuples, self.units
        both = ops.reshape(
            ops.matmul(value, node_kernel), (batch, 2, K, units)
        )
        return both[:, 0], both[:, 1]

    def tree_step(self, x_proj, h_tm1, node_kernel, x=None):
        """Builds one tree per sample.

        Args:
            x_proj: `(batch, K * units)`, `input_projection(x_t)`.
            h_tm1: `(batch, units)`, the previous state.
            node_kernel: `node_kernel()`.
            x: Optional `(batch, input_dim)`, the input itself; when given,
                the node values are returned.

        Returns:
            A dict: `"h"` `(batch, units)`; `"trees"` int32
            `(batch, iterations, 5)`; `"margin"` `(batch,)` the margin term
            (0 in forced mode); and, if `x` is given, `"nodes"`
            `(batch, 3 + iterations, node_width)`.
        """
        K, units = self.tuples, self.units
        batch = ops.shape(h_tm1)[0]
        dtype = h_tm1.dtype
        bias = ops.reshape(self.bias, (K, units))
        zeros = ops.zeros_like(ops.reshape(x_proj, (batch, K, units)))
        left = [ops.reshape(x_proj, (batch, K, units))]
        right = [zeros]  # slot 0 is never a right child
        h_left, h_right = self._project(h_tm1, node_kernel, batch)
        left += [h_left, zeros]
        right += [h_right, zeros]
        values = []
        choices = []
        margin = ops.zeros((batch,), dtype=dtype)
        alive = None
        if self.pool == "roots" and self.selection != "forced":
            alive = ops.concatenate(
                [
                    ops.ones((batch, NUM_LEAVES), dtype=dtype),
                    ops.zeros((batch, self.iterations), dtype=dtype),
                ],
                axis=1,
            )
        for n in range(self.iterations):
            if self.selection == "forced":
                i, j, k, o, a = self.tree[n]
                pre = _BINARY[self.operations[o]](
                    left[i][:, k], right[j][:, k]
                ) + bias[k]
                value = _UNARY[self.activations[a]](pre)
            else:
                value, choice, merge_margin, alive = self._search(
                    n, left, right, bias, alive
                )
                choices.append(choice)
                margin = margin + merge_margin
            values.append(value)
            if n + 1 < self.iterations:
                new_left, new_right = self._project(value, node_kernel, batch)
                left.append(new_left)
                right.append(new_right)
        if self.selection == "forced":
            trees = ops.broadcast_to(
                ops.convert_to_tensor(np.array(self.tree, dtype="int32")),
                (batch, self.iterations, 5),
            )
        else:
            trees = ops.stack(choices, axis=1)
        result = {"h": values[-1], "trees": trees, "margin": margin}
        if x is not None:
            width = self.node_width

            def pad(v):
                extra = width - v.shape[-1]
                if extra:
                    v = ops.pad(v, [[0, 0], [0, extra]])
                return v

            leaves = [
                pad(ops.cast(x, dtype)),
                pad(h_tm1),
                ops.zeros((batch, width), dtype=dtype),
            ]
            result["nodes"] = ops.stack(
                leaves + [pad(v) for v in values], axis=1
            )
        return result

    def _search(self, n, left, right, bias, alive):
        """Merge `n` by score: returns `(value, choice, margin, alive)`."""
        K, units = self.tuples, self.units
        n_ops, n_acts = len(self.operations), len(self.activations)
        pair_left, pair_right, pair_generated = self._pairs[n]
        n_pairs = len(pair_left)
        batch = ops.shape(left[0])[0]
        slots = NUM_LEAVES + n
        a = ops.take(ops.stack(left, axis=1), pair_left, axis=1)
        b = ops.take(ops.stack(right, axis=1), pair_right, axis=1)
        # (batch, pairs, K, ops, units)
        pre = ops.stack(
            [_BINARY[name](a, b) for name in self.operations], axis=3
        ) + ops.reshape(bias, (1, 1, K, 1, units))
        # (batch, pairs, K, ops, acts, units) -> (batch, C, units)
        candidates = ops.stack(
            [_UNARY[name](pre) for name in self.activations], axis=4
        )
        per_pair = K * n_ops * n_acts
        candidates = ops.reshape(candidates, (batch, n_pairs * per_pair, units))
        scores = self.score(candidates)
        valid = None
        if self.bounded:
            # The reference code's guard: an unbounded activation (identity,
            # one-minus, relu) only where |pre-activation| < 1 throughout.
            small = ops.cast(
                ops.max(ops.abs(pre), axis=-1) < 1.0, scores.dtype
            )  # (batch, pairs, K, ops)
            squashing = np.array(
                [name in ("sigmoid", "tanh") for name in self.activations],
                dtype="float32",
            )
            allowed = ops.maximum(
                ops.expand_dims(small, -1),
                ops.cast(ops.convert_to_tensor(squashing), scores.dtype),
            )  # (batch, pairs, K, ops, acts)
            valid = ops.reshape(allowed, (batch, n_pairs * per_pair))
        if alive is not None:
            live = alive[:, :slots]
            pair_valid = ops.take(live, pair_left, axis=1) * ops.take(
                live, pair_right, axis=1
            )
            roots = ops.sum(alive[:, NUM_LEAVES:slots], axis=1)
            remaining = self.iterations - n
            needed = roots - remaining + 1.0
            enough = ops.cast(
                ops.convert_to_tensor(pair_generated.astype("float32"))[
                    None, :
                ]
                >= ops.expand_dims(needed, 1),
                pair_valid.dtype,
            )
            pair_valid = ops.repeat(pair_valid * enough, per_pair, axis=1)
            valid = pair_valid if valid is None else valid * pair_valid
        if valid is not None:
            floor = -3.0e4 if scores.dtype == "float16" else -1.0e9
            scores = ops.where(valid > 0, scores, floor)
        index = ops.argmax(scores, axis=-1)
        probs = ops.softmax(scores, axis=-1)
        if self.selection == "hard":
            # Forward: the one-hot of the argmax (p − p is exactly 0);
            # backward: the gradient of the softmax mixture.
            weights = ops.one_hot(
                index, ops.shape(scores)[1], dtype=probs.dtype
            )
            weights = weights + (probs - ops.stop_gradient(probs))
        else:
            weights = probs
        value = ops.einsum("bc,bcu->bu", weights, candidates)
        # The two best scores (a max, then a max without the argmax).
        first = ops.max(scores, axis=-1)
        without_first = ops.where(
            ops.one_hot(index, ops.shape(scores)[1], dtype="bool"),
            ops.min(scores, axis=-1, keepdims=True),
            scores,
        )
        second = ops.max(without_first, axis=-1)
        margin = ops.relu(self.margin - (first - second)) / self.margin
        index = ops.cast(index, "int32")
        act = index % n_acts
        rest = index // n_acts
        op = rest % n_ops
        rest = rest // n_ops
        k = rest % K
        pair = rest // K
        i = ops.take(ops.convert_to_tensor(pair_left), pair)
        j = ops.take(ops.convert_to_tensor(pair_right), pair)
        choice = ops.stack([i, j, k, op, act], axis=-1)
        if alive is not None:
            generated = np.zeros((self.num_slots,), dtype="float32")
            generated[NUM_LEAVES:] = 1.0
            generated = ops.cast(ops.convert_to_tensor(generated), alive.dtype)
            used = (
                ops.one_hot(i, self.num_slots, dtype=alive.dtype)
                + ops.one_hot(j, self.num_slots, dtype=alive.dtype)
            ) * generated
            new = np.zeros((self.num_slots,), dtype="float32")
            new[slots] = 1.0
            alive = alive * (1.0 - used) + ops.cast(
                ops.convert_to_tensor(new), alive.dtype
            )
        return value, choice, margin, alive

    def call(self, inputs, states, training=False):
        h_tm1 = states[0] if nest.is_nested(states) else states
        result = self.tree_step(
            self.input_projection(inputs), h_tm1, self.node_kernel()
        )
        h = result["h"]
        new_state = [h] if nest.is_nested(states) else h
        return h, new_state

    def get_initial_state(self, batch_size=None):
        return [ops.zeros((batch_size, self.units), dtype=self.compute_dtype)]

    def get_config(self):
        config = {
            "units": self.units,
            "iterations": self.iterations,
            "tuples": self.tuples,
            "score_units": self.score_units,
            "selection": self.selection,
            "pool": self.pool,
            "tree": (
                None
                if self.tree is None
                else tree_to_names(
                    self.tree, self.operations, self.activations
                )
            ),
            "operations": list(self.operations),
            "activations": list(self.activations),
            "margin": self.margin,
            "bounded": self.bounded,
            "identity_init": self.identity_init,
            "tie_input_kernel": self.tie_input_kernel,
            "kernel_initializer": initializers.serialize(
                self.kernel_initializer
            ),
            "recurrent_initializer": initializers.serialize(
                self.recurrent_initializer
            ),
            "bias_initializer": initializers.serialize(self.bias_initializer),
            "score_initializer": initializers.serialize(
                self.score_initializer
            ),
            "kernel_regularizer": regularizers.serialize(
                self.kernel_regularizer
            ),
            "recurrent_regularizer": regularizers.serialize(
                self.recurrent_regularizer
            ),
            "bias_regularizer": regularizers.serialize(self.bias_regularizer),
            "score_regularizer": regularizers.serialize(
                self.score_regularizer
            ),
            "kernel_constraint": constraints.serialize(self.kernel_constraint),
            "recurrent_constraint": constraints.serialize(
                self.recurrent_constraint
            ),
            "bias_constraint": constraints.serialize(self.bias_constraint),
        }
        base_config = super().get_config()
        return {**base_config, **config}


_CELL_ARGS = (
    "units",
    "iterations",
    "tuples",
    "score_units",
    "selection",
    "pool",
    "tree",
    "operations",
    "activations",
    "margin",
    "bounded",
    "identity_init",
    "tie_input_kernel",
    "kernel_initializer",
    "recurrent_initializer",
    "bias_initializer",
    "score_initializer",
    "kernel_regularizer",
    "recurrent_regularizer",
    "bias_regularizer",
    "score_regularizer",
    "kernel_constraint",
    "recurrent_constraint",
    "bias_constraint",
)


@keras.saving.register_keras_serializable(package="on_lstm_keras")
class RRNN(RNN):
    """Recursive-recurrent layer with a dynamic cell structure (RRNN).

    Qian, Kennedy and Klabjan (2019). At each step the cell builds a binary
    computation tree over the leaves `x_t`, `h_{t-1}`, `0` by `iterations`
    greedy merges `u(o(c_i·L_k, c_j·R_k) + b_k)` chosen by a learned score;
    the last node is `h_t`. See `RRNNCell` for the candidates, the pools,
    the selection modes and the weight layout, and `rrnn_trees` for how
    trees are written.

    Everything is vectorised with `keras.ops`: the input edges
    `x·[L_0|...|L_{K-1}]` of all steps are one matmul before the recurrence;
    inside a step the merges are unrolled, each new node is projected by all
    tuples in one matmul, and the candidates of a merge are gathered with
    static pair tables.

    GRU as a special case: `RRNN.from_gru(gru)` copies a built
    `keras.layers.GRU(reset_after=False)` into tuples 0-2, sets tuple 3 to
    `(I, I, 0)` and forces `gru_tree()`; its output equals the GRU's.

    Training terms (the paper's loss, weights 1, 0.1, 1e-8, 0.003 in the
    reference code): the task loss; the margin term, added by this layer
    with `add_loss` when `margin_weight > 0` (mean over samples and unmasked
    steps of `Σ_n max(0, M − (α_1 − α_2)) / M`; not in forced mode); an L2
    penalty through the regularizer arguments; the tree distance to the
    GRU tree, with `RRNNTreeDistance` (or `tree_distance`) on this layer's
    `return_trees`/`return_nodes` outputs and those of a frozen
    `RRNN.from_gru(pretrained_gru, return_trees=True, return_nodes=True)`.

    Args:
        units: Positive integer, dimensionality of the output space.
        iterations: Merges per step `N̄` (default 9, as for GRU).
        tuples: Number `K` of `(L, R, b)` tuples (default 4).
        score_units: Hidden units of the score MLP (default 16; the
            reference code uses 64); 0 for a linear score.
        selection: `"hard"` (default), `"soft"` or `"forced"`.
        pool: `"all"` (default, the paper) or `"roots"` (the code).
        tree: The forced tree, with `selection="forced"` only.
        operations: Binary operations, default `("add", "multiply")`.
        activations: Activations, default `("sigmoid", "tanh",
            "one_minus", "identity")`; `"relu"` may be added.
        margin: `M` of the margin term (default 1.0).
        bounded: Only allow identity, one-minus and relu candidates whose
            pre-activation lies in (−1, 1) (default `True`; see `RRNNCell`).
        margin_weight: Non-negative float (default 0): weight of the margin
            term this layer adds with `add_loss`.
        identity_init: Start the last tuple as `(I, I, 0)` (default `True`).
        tie_input_kernel: `x` shares `L_k` with the other nodes (default
            `False`; needs `input_dim == units`).
        kernel_initializer, recurrent_initializer, bias_initializer,
        score_initializer: Initializers (see `RRNNCell`).
        kernel_regularizer, recurrent_regularizer, bias_regularizer,
        score_regularizer: Regularizers (see `RRNNCell`).
        activity_regularizer: Regularizer applied to the output.
        kernel_constraint, recurrent_constraint, bias_constraint:
            Constraints (see `RRNNCell`).
        return_sequences: Boolean (default `False`), return the whole
            output sequence or only the last output.
        return_state: Boolean (default `False`), also return the last state.
        return_trees: Boolean (default `False`), also return the chosen
            trees: int32 `(batch, timesteps, iterations, 5)`, rows
            `(i, j, k, op, act)` (`op`, `act` index `operations`,
            `activations`); `-1` at masked steps. Read them with
            `tree_expression` / `most_common_trees` (or the layer's methods
            of the same names).
        return_nodes: Boolean (default `False`), also return every slot's
            value: `(batch, timesteps, 3 + iterations, max(input_dim,
            units))`, leaves first, zero-padded; 0 at masked steps. This is
            what `tree_distance` needs.
        go_backwards: Boolean (default `False`), process the sequence
            backwards and return the reversed sequence.
        stateful: Boolean (default `False`), reuse the last state of each
            sample as its initial state in the next batch.
        unroll: Boolean (default `False`), unroll the time loop.

    Call arguments:
        inputs: A 3D tensor `(batch, timesteps, features)`.
        mask: Boolean tensor `(batch, timesteps)`; `False` marks padding.
            A padded step keeps the state; its output is the carried state
            (0 with `zero_output_for_mask=True`), its tree `-1`, its nodes
            0, and it adds nothing to the margin term.
        training: Python boolean (no dropout; kept for the RNN API).
        initial_state: Optional list `[h]`.

    Returns:
        `output`, then `trees` if `return_trees`, then `nodes` if
        `return_nodes`, then `h` if `return_state`.

    Example:

    >>> import numpy as np
    >>> from on_lstm_keras.layers.rrnn import RRNN
    >>> x = np.random.random((2, 5, 6)).astype("float32")
    >>> layer = RRNN(8, iterations=4, score_units=4, return_trees=True)
    >>> output, trees = layer(x)
    >>> tuple(output.shape), tuple(trees.shape)
    ((2, 8), (2, 5, 4, 5))
    >>> layer.tree_expression(trees[0, 0]).startswith("h_t = ")
    True
    >>> gru = keras.layers.GRU(8, reset_after=False)
    >>> y = gru(x)
    >>> same = RRNN.from_gru(gru)
    >>> bool(np.allclose(same(x), y, atol=1e-5))
    True
    """

    def __init__(
        self,
        units,
        iterations=9,
        tuples=4,
        score_units=16,
        selection="hard",
        pool="all",
        tree=None,
        operations=OPERATIONS,
        activations=DEFAULT_ACTIVATIONS,
        margin=1.0,
        margin_weight=0.0,
        bounded=True,
        identity_init=True,
        tie_input_kernel=False,
        kernel_initializer="glorot_uniform",
        recurrent_initializer="orthogonal",
        bias_initializer="zeros",
        score_initializer="glorot_uniform",
        kernel_regularizer=None,
        recurrent_regularizer=None,
        bias_regularizer=None,
        score_regularizer=None,
        activity_regularizer=None,
        kernel_constraint=None,
        recurrent_constraint=None,
        bias_constraint=None,
        return_sequences=False,
        return_state=False,
        return_trees=False,
        return_nodes=False,
        go_backwards=False,
        stateful=False,
        unroll=False,
        **kwargs,
    ):
        if (
            isinstance(margin_weight, bool)
            or not isinstance(margin_weight, (int, float))
            or margin_weight < 0
        ):
            raise ValueError(
                "Argument `margin_weight` must be a non-negative float, "
                f"received: margin_weight={margin_weight!r}"
            )
        cell = RRNNCell(
            units,
            iterations=iterations,
            tuples=tuples,
            score_units=score_units,
            selection=selection,
            pool=pool,
            tree=tree,
            operations=operations,
            activations=activations,
            margin=margin,
            bounded=bounded,
            identity_init=identity_init,
            tie_input_kernel=tie_input_kernel,
            kernel_initializer=kernel_initializer,
            recurrent_initializer=recurrent_initializer,
            bias_initializer=bias_initializer,
            score_initializer=score_initializer,
            kernel_regularizer=kernel_regularizer,
            recurrent_regularizer=recurrent_regularizer,
            bias_regularizer=bias_regularizer,
            score_regularizer=score_regularizer,
            kernel_constraint=kernel_constraint,
            recurrent_constraint=recurrent_constraint,
            bias_constraint=bias_constraint,
            dtype=kwargs.get("dtype", None),
            trainable=kwargs.get("trainable", True),
            name="rrnn_cell",
        )
        super().__init__(
            cell,
            return_sequences=return_sequences,
            return_state=return_state,
            go_backwards=go_backwards,
            stateful=stateful,
            unroll=unroll,
            activity_regularizer=activity_regularizer,
            **kwargs,
        )
        self.margin_weight = float(margin_weight)
        self.return_trees = bool(return_trees)
        self.return_nodes = bool(return_nodes)
        self._step_extras = None

    # -- GRU as a special case -------------------------------------------

    @classmethod
    def from_gru(cls, gru, selection="forced", **kwargs):
        """An RRNN equal to a built `keras.layers.GRU(reset_after=False)`.

        The GRU's kernel `[W_z | W_r | W_h]`, recurrent kernel
        `[U_z | U_r | U_h]` and bias `[b_z | b_r | b_h]` become tuples
        `0, 1, 2` (`kernel` and `right_kernel` blocks 0-2, `bias`); tuple 3
        is set to `(I, I, 0)`; with the forced `gru_tree()` the layer
        computes exactly the GRU. `left_kernel` blocks 0-2 are not used by
        the GRU tree: they keep their initial values (or, with
        `tie_input_kernel=True`, they are the GRU kernel). The GRU's
        `return_sequences`, `return_state` and `go_backwards` are kept.

        With `selection="hard"` or `"soft"` the same weights start a free
        tree search (the natural warm start); `tree` is then not used.

        Args:
            gru: A built `keras.layers.GRU` with `reset_after=False`,
                `activation="tanh"`, `recurrent_activation="sigmoid"`.
            selection: `"forced"` (default), `"hard"` or `"soft"`.
            **kwargs: Other `RRNN` arguments (`iterations` must stay 9 and
                `tuples` at least 4 for the GRU tree; `operations` and
                `activations` must hold the names the GRU tree uses).

        Returns:
            A built `RRNN`.
        """
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
        tuples = kwargs.get("tuples", 4)
        if isinstance(tuples, int) and tuples < 4:
            raise ValueError(
                "Argument `tuples` must be at least 4 for the GRU tree, "
                f"received: tuples={tuples}"
            )
        kwargs.setdefault("return_sequences", gru.return_sequences)
        kwargs.setdefault("return_state", gru.return_state)
        kwargs.setdefault("go_backwards", gru.go_backwards)
        kwargs.setdefault("dtype", gru.dtype_policy)
        if selection == "forced":
            kwargs.setdefault("tree", gru_tree())
        layer = cls(gru.units, selection=selection, **kwargs)
        kernel = ops.convert_to_numpy(gru.cell.kernel)
        recurrent = ops.convert_to_numpy(gru.cell.recurrent_kernel)
        input_dim, units = kernel.shape[0], gru.units
        layer.build((None, None, input_dim))
        cell = layer.cell
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
        return layer

    # -- the recurrence ---------------------------------------------------

    @property
    def _needs_extras(self):
        return (
            self.return_trees
            or self.return_nodes
            or self._adds_margin_loss
        )

    @property
    def _adds_margin_loss(self):
        return self.margin_weight > 0 and self.cell.selection != "forced"

    def build(self, sequences_shape, initial_state_shape=None):
        check_sequence_rank("RRNN", sequences_shape)
        super().build(sequences_shape, initial_state_shape)

    def _extra_shapes(self, sequences_shape):
        batch, steps = sequences_shape[0], sequences_shape[1]
        cell = self.cell
        shapes = []
        if self.return_trees:
            shapes.append((batch, steps, cell.iterations, 5))
        if self.return_nodes:
            width = max(sequences_shape[-1], cell.units)
            shapes.append((batch, steps, cell.num_slots, width))
        return shapes

    def compute_output_shape(self, sequences_shape, initial_state_shape=None):
        shapes = super().compute_output_shape(
            sequences_shape, initial_state_shape
        )
        return insert_extras(
            shapes, self._extra_shapes(sequences_shape), self.return_state
        )

    def compute_output_spec(
        self, sequences, initial_state=None, mask=None, training=False
    ):
        spec = super().compute_output_spec(
            sequences, initial_state=initial_state, mask=mask, training=training
        )
        if not self.return_trees:
            return spec
        spec = list(spec)
        spec[1] = keras.KerasTensor(spec[1].shape, dtype="int32")
        return tuple(spec)

    def compute_mask(self, inputs, mask):
        output_mask = super().compute_mask(inputs, mask)
        extras = len(self._extra_shapes(inputs.shape))
        if not extras:
            return output_mask
        sequence_mask = nest.flatten(mask)[0] if mask is not None else None
        return insert_extra_masks(
            output_mask, sequence_mask, extras, self.return_state
        )

    def inner_loop(self, sequences, initial_state, mask, training=False):
        if nest.is_nested(mask):
            mask = mask[0]
        cell = self.cell
        units, iterations = cell.units, cell.iterations
        x_proj = cell.input_projection(sequences)
        node_kernel = cell.node_kernel()
        with_nodes = self.return_nodes
        extras = self._needs_extras
        zero_masked = self.zero_output_for_mask
        proj_size = x_proj.shape[-1]
        # The step mask travels with the inputs (so `go_backwards` reverses
        # it too) and is applied here rather than by the backend loop, whose
        # handling assumes the output is as wide as the first state.
        parts = [x_proj]
        if with_nodes:
            parts.append(ops.cast(sequences, x_proj.dtype))
        if mask is not None:
            parts.append(ops.cast(ops.expand_dims(mask, -1), x_proj.dtype))
        step_inputs = ops.concatenate(parts, axis=-1) if len(parts) > 1 else (
            x_proj
        )

        def step(inputs, states):
            h_tm1 = states[0]
            x = None
            if with_nodes:
                x = inputs[:, proj_size : proj_size + sequences.shape[-1]]
            result = cell.tree_step(
                inputs[:, :proj_size], h_tm1, node_kernel, x=x
            )
            h = result["h"]
            output = h
            trees = ops.cast(result["trees"], h.dtype)
            margin = result["margin"]
            nodes = result.get("nodes")
            if mask is not None:
                keep = inputs[:, -1:] > 0.5  # (batch, 1)
                h = ops.where(keep, h, h_tm1)
                output = (
                    ops.where(keep, output, ops.zeros_like(output))
                    if zero_masked
                    else h
                )
                margin = ops.where(keep[:, 0], margin, 0.0)
                trees = ops.where(keep[:, :, None], trees, -1.0)
                if with_nodes:
                    nodes = ops.where(keep[:, :, None], nodes, 0.0)
            if extras:
                batch = ops.shape(h)[0]
                packed = [
                    output,
                    ops.expand_dims(margin, -1),
                    ops.reshape(trees, (batch, -1)),
                ]
                if with_nodes:
                    packed.append(ops.reshape(nodes, (batch, -1)))
                output = ops.concatenate(packed, axis=-1)
            return output, [h]

        last_output, outputs, states = backend_rnn(
            step,
            step_inputs,
            list(initial_state),
            go_backwards=self.go_backwards,
            mask=None,
            unroll=self.unroll,
            input_length=sequences.shape[1],
            return_all_outputs=self.return_sequences or extras,
        )
        if extras:
            batch = ops.shape(outputs)[0]
            steps = ops.shape(outputs)[1]
            margin = outputs[..., units]
            trees = ops.reshape(
                outputs[..., units + 1 : units + 1 + 5 * iterations],
                (batch, steps, iterations, 5),
            )
            trees = ops.cast(ops.round(trees), "int32")
            nodes = None
            if with_nodes:
                nodes = ops.reshape(
                    outputs[..., units + 1 + 5 * iterations :],
                    (batch, steps, cell.num_slots, cell.node_width),
                )
            # Handed to `call`, which runs this method and returns them.
            self._step_extras = (margin, trees, nodes, mask)
            outputs = outputs[..., :units]
            last_output = last_output[..., :units]
        return last_output, outputs, states

    def call(self, sequences, initial_state=None, mask=None, training=False):
        check_sequence_rank("RRNN", sequences.shape)
        result = super().call(
            sequences, mask=mask, training=training, initial_state=initial_state
        )
        if not self._needs_extras:
            return result
        margin, trees, nodes, step_mask = self._step_extras
        self._step_extras = None
        if self._adds_margin_loss:
            margin = ops.cast(margin, "float32")
            if step_mask is None:
                term = ops.mean(margin)
            else:
                count = ops.sum(ops.cast(step_mask, "float32"))
                term = ops.sum(margin) / ops.maximum(count, 1.0)
            self.add_loss(self.margin_weight * term)
        extras = []
        if self.return_trees:
            extras.append(trees)
        if self.return_nodes:
            extras.append(ops.cast(nodes, self.compute_dtype))
        return insert_extras(result, extras, self.return_state)

    # -- reading trees ----------------------------------------------------

    def tree_expression(self, tree, identity_tuples=(), steps=False):
        """`tree_expression` with this layer's operations and activations.

        Args:
            tree: `(iterations, 5)` integers, one tree of the trees output.
            identity_tuples: Tuples to write as `(I, I, 0)`. Default: none,
                every tuple is written with its matrices. Pass
                `(layer.tuples - 1,)` for shorter expressions while the last
                tuple is still the identity (at initialization with
                `identity_init`, or in a frozen `RRNN.from_gru`).
            steps: One line per node instead of one expression.
        """
        return tree_expression(
            ops.convert_to_numpy(tree),
            operations=self.cell.operations,
            activations=self.cell.activations,
            identity_tuples=identity_tuples,
            steps=steps,
        )

    def most_common_trees(self, trees, mask=None, top=5, identity_tuples=()):
        """`most_common_trees` with this layer's names.

        See `tree_expression` (the method) for `identity_tuples`.
        """
        return most_common_trees(
            ops.convert_to_numpy(trees),
            mask=mask,
            top=top,
            operations=self.cell.operations,
            activations=self.cell.activations,
            identity_tuples=identity_tuples,
        )

    # -- config -----------------------------------------------------------

    units = _cell_property("units")
    iterations = _cell_property("iterations")
    tuples = _cell_property("tuples")
    score_units = _cell_property("score_units")
    selection = _cell_property("selection")
    pool = _cell_property("pool")
    tree = _cell_property("tree")
    operations = _cell_property("operations")
    activations = _cell_property("activations")
    margin = _cell_property("margin")

    def get_config(self):
        cell_config = self.cell.get_config()
        config = {key: cell_config[key] for key in _CELL_ARGS}
        config["activity_regularizer"] = regularizers.serialize(
            self.activity_regularizer
        )
        config["margin_weight"] = self.margin_weight
        config["return_trees"] = self.return_trees
        config["return_nodes"] = self.return_nodes
        base_config = super().get_config()
        del base_config["cell"]
        return {**base_config, **config}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


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

    Example:

    >>> import numpy as np
    >>> x = np.random.random((2, 4, 3)).astype("float32")
    >>> gru = keras.layers.GRU(5, reset_after=False, return_sequences=True)
    >>> _ = gru(x)
    >>> target = RRNN.from_gru(gru, return_trees=True, return_nodes=True)
    >>> layer = RRNN(5, score_units=4, return_sequences=True,
    ...              return_trees=True, return_nodes=True)
    >>> _, trees, nodes = layer(x)
    >>> _, t_trees, t_nodes = target(x)
    >>> tuple(RRNNTreeDistance(0.003)([trees, nodes, t_trees, t_nodes]).shape)
    (2, 4)
    """

    def __init__(self, weight=0.003, **kwargs):
        if (
            isinstance(weight, bool)
            or not isinstance(weight, (int, float))
            or weight < 0
        ):
            raise ValueError(
                "Argument `weight` must be a non-negative float, "
                f"received: weight={weight!r}"
            )
        super().__init__(**kwargs)
        self.weight = float(weight)

    def call(self, inputs):
        if not isinstance(inputs, (list, tuple)) or len(inputs) != 4:
            raise ValueError(
                "Argument `inputs` of RRNNTreeDistance must be a list "
                "[trees, nodes, target_trees, target_nodes], received: "
                f"{type(inputs).__name__} of length "
                f"{len(inputs) if hasattr(inputs, '__len__') else '?'}"
            )
        trees, nodes, target_trees, target_nodes = inputs
        distance = tree_distance(trees, nodes, target_trees, target_nodes)
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
        return {**super().get_config(), "weight": self.weight}
