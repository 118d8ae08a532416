"""`RRNNCell`: the cell of the RRNN layer, its weights and its config."""

import keras
from keras import constraints
from keras import initializers
from keras import ops
from keras import regularizers
from keras import tree as nest
from keras.layers import Layer

from on_lstm_keras.utils import validation as check
from on_lstm_keras.rrnn.identity import fix_identity_block
from on_lstm_keras.rrnn.identity import with_identity_block
from on_lstm_keras.rrnn.identity import with_zero_block
from on_lstm_keras.rrnn.search import TreeSearch
from on_lstm_keras.rrnn.search import pair_tables
from on_lstm_keras.rrnn.trees import ACTIVATIONS
from on_lstm_keras.rrnn.trees import DEFAULT_ACTIVATIONS
from on_lstm_keras.rrnn.trees import NUM_LEAVES
from on_lstm_keras.rrnn.trees import OPERATIONS
from on_lstm_keras.rrnn.trees import POOLS
from on_lstm_keras.rrnn.trees import normalize_tree
from on_lstm_keras.rrnn.trees import tree_to_names

SELECTIONS = ("hard", "soft", "forced")
VARIANTS = ("rrnn", "rrnn_gru")
CANDIDATE_NORMS = (None, "score", "value")


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


@keras.saving.register_keras_serializable(package="on_lstm_keras")
class RRNNCell(TreeSearch, Layer):
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
        `on_lstm_keras.rrnn.trees`), e.g. `gru_tree()`; no candidates and
        no scores.

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
    when `H = 0`; a score bias would not change any choice) and, with
    `merge_prior`, `merge_prior` `(Σ_n C_n,)`, one entry per merge and
    candidate; in forced mode there is no score and no score weight.

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
        fixed_identity: Boolean (default `False`): keep the last tuple at
            `(I, I, 0)` through training, whatever its weights become (the
            cell computes with the identity in place of the weights' last
            blocks, so those blocks get no gradient and regularizers or
            optimizers that move them change nothing). Needs
            `identity_init=True`. A trainable identity tuple is moved by
            Adam's first step by the learning rate in every entry at once:
            at 0.0086 the state of `examples/rrnn_chars.py`'s RRNN-GRU
            (100 units) went from `|h| ≤ 0.13` to 5.5 in that one step.
        tie_input_kernel: Boolean (default `False`), `x` shares `L_k` with
            the other nodes (see above).
        break_symmetry: Boolean (default `True`): merge 0 may only use
            tuple 0 and merge 1 only tuple 1 (the authors' code). Without
            it, two merges of the leaves alone have the same candidates
            and a value-only score picks the same one twice.
        unique_roots: Boolean (default `True`): a candidate that would
            remake a generated node that has not been used as a child yet
            is excluded (with `pool="all"` the earlier winner otherwise
            stays the best candidate of every later merge).
        read_inputs: Boolean (default `False`): with `pool="roots"`, the
            search keeps only trees whose root reads both `x_t` and
            `h_{t-1}` (a merge is allowed only if the merges left can still
            bring in the leaves missing from the tree), and excludes the
            products with the zero leaf (constants, which read neither
            child). Without it, the search may pick a tree that ignores
            the input (a model of character frequencies) or the past; the
            GRU tree reads both.
        merge_prior: Boolean (default `True`): a learned score per merge
            and candidate (weight `merge_prior`, zeros at the start) is
            added to `α(c)`, so that the position of a merge in the tree,
            not only the candidate's value, can decide. With the two
            options above, every tree (merges 0 and 1 on tuples 0 and 1,
            no duplicate of an unused node) is then reachable by the hard
            search.
        variant: `"rrnn"` (default, the full search) or `"rrnn_gru"` (the
            paper's RRNN-GRU, the authors' planB code): the GRU tree's
            skeleton (`gru_tree()`: its children, operations and
            activations) with the gates `z`, `r` (merges 0, 1, 6) on tuples
            0, 1, 0 and, at every other merge, one candidate per tuple
            `k`, chosen by the score (`selection="hard"`) or mixed by its
            softmax (`"soft"`, as the authors' code). `iterations` must be
            9; `pool`, `bounded`, `break_symmetry` and `unique_roots` do
            not apply.
        candidate_norm: `None` (default), `"score"` or `"value"`: normalise
            every candidate over the batch, per feature, to zero mean and
            unit variance (a BatchNorm without weights or running
            statistics, as the authors' code) before the score sees it
            (`"score"`), or for both the score and the node value
            (`"value"`, what the authors' code does). Either makes a
            sample's tree depend on the rest of its batch, at inference
            too.
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
        fixed_identity=False,
        tie_input_kernel=False,
        break_symmetry=True,
        unique_roots=True,
        merge_prior=True,
        read_inputs=False,
        variant="rrnn",
        candidate_norm=None,
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
        margin = check.positive_float("margin", margin)
        variant = check.choice("variant", variant, VARIANTS)
        candidate_norm = check.choice(
            "candidate_norm", candidate_norm, CANDIDATE_NORMS
        )
        if fixed_identity and not identity_init:
            raise ValueError(
                "Argument `fixed_identity=True` keeps the last tuple at its "
                "identity start and needs identity_init=True, received: "
                "identity_init=False"
            )
        skeleton = None
        if variant == "rrnn_gru":
            if selection == "forced":
                raise ValueError(
                    "Argument `variant='rrnn_gru'` searches the tuples of "
                    "the GRU tree and needs selection='hard' or 'soft', "
                    "received: selection='forced' (for the plain GRU tree "
                    "use variant='rrnn', selection='forced', tree=gru_tree())"
                )
            if iterations != 9:
                raise ValueError(
                    "Argument `iterations` must be 9 (the GRU tree's merges) "
                    "with variant='rrnn_gru', received: "
                    f"iterations={iterations}"
                )
            if tuples < 2:
                raise ValueError(
                    "Argument `tuples` must be at least 2 (z and r use tuples "
                    "0 and 1) with variant='rrnn_gru', received: "
                    f"tuples={tuples}"
                )
            from on_lstm_keras.rrnn.gru import gru_tree

            # Only the gates' tuples (0, 1) are read from the skeleton.
            skeleton = normalize_tree(
                gru_tree(),
                tuples=max(tuples, 4),
                operations=operations,
                activations=activations,
                argument="activations/operations (the GRU tree)",
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
        self.fixed_identity = bool(fixed_identity)
        self.tie_input_kernel = bool(tie_input_kernel)
        self.break_symmetry = bool(break_symmetry)
        self.unique_roots = bool(unique_roots)
        self.merge_prior = bool(merge_prior)
        self.read_inputs = bool(read_inputs)
        self.variant = variant
        self.candidate_norm = candidate_norm
        self._skeleton = skeleton
        # One forced tree per time step while `training.replaying` replays
        # per-step trees (the layer then unrolls its loop); else `None`.
        self.step_trees = None

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
        self._pairs = pair_tables(iterations)
        self._prior_offsets = self.merge_prior_offsets()[0]

    # -- sizes ------------------------------------------------------------

    @property
    def num_slots(self):
        """Number of node slots: 3 leaves plus `iterations` generated."""
        return NUM_LEAVES + self.iterations

    @property
    def node_width(self):
        """Width of the nodes output: `max(input_dim, units)`."""
        return max(self.input_dim or 0, self.units)


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
                initializer=with_identity_block(
                    self.kernel_initializer,
                    K,
                    input_dim,
                    units,
                    self.identity_init,
                ),
                regularizer=self.kernel_regularizer,
                constraint=self.kernel_constraint,
            )
        recurrent_init = with_identity_block(
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
        bias_init = with_zero_block(
            self.bias_initializer, K, units, self.identity_init
        )
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
        self.merge_prior_weight = None
        if self.merge_prior:
            self.merge_prior_weight = self.add_weight(
                shape=(self.merge_prior_offsets()[1],),
                name="merge_prior",
                initializer="zeros",
                regularizer=self.score_regularizer,
            )
        self.built = True

    # -- the computation --------------------------------------------------

    def _with_fixed_identity(self, weight):
        """`weight` with its identity block fixed when `fixed_identity`
        (see `identity.fix_identity_block`); else `weight` itself."""
        if not self.fixed_identity:
            return weight
        return fix_identity_block(weight, self.tuples, self.units)

    def input_projection(self, inputs):
        """`x · [L_0 | ... | L_{K-1}]` for one step or a whole sequence."""
        kernel = self.left_kernel if self.tie_input_kernel else self.kernel
        kernel = self._with_fixed_identity(kernel)
        return ops.matmul(inputs, kernel)

    def node_kernel(self):
        """`[left_kernel | right_kernel]`, `(units, 2 * K * units)`."""
        return ops.concatenate(
            [
                self._with_fixed_identity(self.left_kernel),
                self._with_fixed_identity(self.right_kernel),
            ],
            axis=1,
        )

    def node_bias(self):
        """`bias` `(K * units,)`, the last block zeros when
        `fixed_identity`."""
        return self._with_fixed_identity(self.bias)

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
            "fixed_identity": self.fixed_identity,
            "tie_input_kernel": self.tie_input_kernel,
            "break_symmetry": self.break_symmetry,
            "unique_roots": self.unique_roots,
            "merge_prior": self.merge_prior,
            "read_inputs": self.read_inputs,
            "variant": self.variant,
            "candidate_norm": self.candidate_norm,
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
