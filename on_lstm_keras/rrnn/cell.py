"""`RRNNCell`: the cell of the RRNN layer, its weights and its config."""

import dataclasses

import keras
from keras import constraints
from keras import initializers
from keras import ops
from keras import regularizers
from keras import tree as nest
from keras.layers import Layer

from on_lstm_keras.utils import validation as check
from on_lstm_keras.rrnn.candidates import pair_tables
from on_lstm_keras.rrnn.config import SearchConfig
from on_lstm_keras.rrnn.config import TreeConfig
from on_lstm_keras.rrnn.config import TupleConfig
from on_lstm_keras.rrnn.config import config_arg
from on_lstm_keras.rrnn.config import configs_from_flat
from on_lstm_keras.rrnn.identity import fix_identity_block
from on_lstm_keras.rrnn.identity import with_identity_block
from on_lstm_keras.rrnn.identity import with_zero_block
from on_lstm_keras.rrnn.search import TreeSearch
from on_lstm_keras.rrnn.trees import NUM_LEAVES
from on_lstm_keras.rrnn.trees import tree_to_names


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

    Size: with the `"all"` pool, merge `n` scores `(3+n)(2+n)/2 · K · |o| ·
    |u|` candidates (1760 at `n = 8` with the defaults), each of width
    `units`, per sample and step.

    Search options (`SearchConfig`):
        `bounded` (default on): a guard found in an early version of the
        reference code: a candidate with an unbounded activation
        (`identity`, `one_minus`, `relu`) is allowed only where every entry
        of its pre-activation `o(·,·) + b` lies in (−1, 1), so every
        generated node stays in [−1, 2]. Without it, an untrained score
        readily picks multiplication and identity chains whose values
        overflow within a few steps. The GRU tree passes the guard whenever
        `|h_0| < 1` (its identity and one-minus nodes are products and
        convex sums of values in (−1, 1)).
        `break_symmetry` (default on): merge 0 may only use tuple 0 and
        merge 1 only tuple 1 (the authors' code). Without it, two merges of
        the leaves alone have the same candidates and a value-only score
        picks the same one twice.
        `unique_roots` (default on): a candidate that would remake a
        generated node that has not been used as a child yet is excluded
        (with `pool="all"` the earlier winner otherwise stays the best
        candidate of every later merge).
        `merge_prior` (default on): a learned score per merge and candidate
        (weight `merge_prior`, zeros at the start) is added to `α(c)`, so
        that the position of a merge in the tree, not only the candidate's
        value, can decide. With the two options above, every tree (merges
        0 and 1 on tuples 0 and 1, no duplicate of an unused node) is then
        reachable by the hard search.
        `read_inputs` (default off): with `pool="roots"`, the search keeps
        only trees whose root reads both `x_t` and `h_{t-1}` (a merge is
        allowed only if the merges left can still bring in the leaves
        missing from the tree), and excludes the products with the zero
        leaf (constants, which read neither child). Without it, the search
        may pick a tree that ignores the input (a model of character
        frequencies) or the past; the GRU tree reads both.
        `candidate_norm`: `"score"` or `"value"` normalise every candidate
        over the batch, per feature, to zero mean and unit variance (a
        BatchNorm without weights or running statistics, as the authors'
        code) before the score sees it (`"score"`), or for both the score
        and the node value (`"value"`, what the authors' code does). Either
        makes a sample's tree depend on the rest of its batch, at
        inference too.

    RRNN-GRU (`TreeConfig(variant="rrnn_gru")`, the authors' planB code):
    the GRU tree's skeleton (`gru_tree()`: its children, operations and
    activations) with the gates `z`, `r` (merges 0, 1, 6) on tuples 0, 1,
    0 and, at every other merge, one candidate per tuple `k`, chosen by the
    score (`selection="hard"`) or mixed by its softmax (`"soft"`, as the
    authors' code). `pool`, `bounded`, `break_symmetry` and `unique_roots`
    do not apply.

    A fixed identity tuple (`TupleConfig(fixed_identity=True)`): the cell
    computes with `(I, I, 0)` in place of the weights' last blocks, so
    those blocks get no gradient and regularizers or optimizers that move
    them change nothing. A trainable identity tuple is moved by Adam's
    first step by the learning rate in every entry at once, which can
    throw the state far from its range in one step.

    Args:
        units: Positive integer, size of `h` and of every generated node.
        tree_config: A `TreeConfig` (default: `TreeConfig()`): iterations,
            tuples, operations, activations, selection, pool, the forced
            tree and the variant.
        search_config: A `SearchConfig` (default: `SearchConfig()`): the
            score MLP's size, the margin and the search options above.
        tuple_config: A `TupleConfig` (default: `TupleConfig()`): the
            identity start of the last tuple, whether it stays fixed, and
            whether `x` shares `L_k`.
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
    >>> cell = RRNNCell(8, TreeConfig(iterations=3),
    ...                 SearchConfig(score_units=4))
    >>> rnn = keras.layers.RNN(cell)
    >>> tuple(rnn(np.random.random((2, 5, 6)).astype("float32")).shape)
    (2, 8)
    """

    def __init__(
        self,
        units,
        tree_config=None,
        search_config=None,
        tuple_config=None,
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
        tree_config = config_arg("tree_config", tree_config, TreeConfig)
        search_config = config_arg("search_config", search_config,
                                   SearchConfig)
        tuple_config = config_arg("tuple_config", tuple_config, TupleConfig)
        super().__init__(**kwargs)
        self.units = units
        # The fields of the three configs, as attributes: the search reads
        # them, and `replaying` sets `selection` and `tree` for a while.
        for config in (tree_config, search_config, tuple_config):
            for field in dataclasses.fields(config):
                setattr(self, field.name, getattr(config, field.name))
        self._skeleton = (
            tree_config.skeleton() if self.variant == "rrnn_gru" else None
        )
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
        self._pairs = pair_tables(self.iterations)
        self._prior_offsets = self.merge_prior_offsets()[0]

    # -- configs ----------------------------------------------------------

    def _config_of(self, cls):
        return cls(**{f.name: getattr(self, f.name)
                      for f in dataclasses.fields(cls)})

    @property
    def tree_config(self):
        """The cell's `TreeConfig` (with the replayed tree while
        `replaying`)."""
        return self._config_of(TreeConfig)

    @property
    def search_config(self):
        """The cell's `SearchConfig`."""
        return self._config_of(SearchConfig)

    @property
    def tuple_config(self):
        """The cell's `TupleConfig`."""
        return self._config_of(TupleConfig)

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
        self._build_tuple_weights(input_dim)
        self.score_hidden_kernel = None
        self.score_hidden_bias = None
        self.score_kernel = None
        self.merge_prior_weight = None
        if self.selection != "forced":  # forced: nothing to score
            self._build_score_weights()
        self.built = True

    def _build_tuple_weights(self, input_dim):
        """`kernel` (unless tied), `left_kernel`, `right_kernel`, `bias`."""
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

    def _build_score_weights(self):
        """The score MLP's weights and the merge prior."""
        units = self.units
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
        if self.merge_prior:
            self.merge_prior_weight = self.add_weight(
                shape=(self.merge_prior_offsets()[1],),
                name="merge_prior",
                initializer="zeros",
                regularizer=self.score_regularizer,
            )

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
        """The config, one key per field of the three configs (`tree` as
        names) beside the initializers, regularizers and constraints."""
        config = {"units": self.units}
        for cls in (TreeConfig, SearchConfig, TupleConfig):
            config.update(dataclasses.asdict(self._config_of(cls)))
        config["operations"] = list(self.operations)
        config["activations"] = list(self.activations)
        if self.tree is not None:
            config["tree"] = tree_to_names(
                self.tree, self.operations, self.activations
            )
        for name in ("kernel", "recurrent", "bias", "score"):
            config[f"{name}_initializer"] = initializers.serialize(
                getattr(self, f"{name}_initializer")
            )
            config[f"{name}_regularizer"] = regularizers.serialize(
                getattr(self, f"{name}_regularizer")
            )
        for name in ("kernel", "recurrent", "bias"):
            config[f"{name}_constraint"] = constraints.serialize(
                getattr(self, f"{name}_constraint")
            )
        return {**super().get_config(), **config}

    @classmethod
    def from_config(cls, config):
        tree_config, search_config, tuple_config, rest = configs_from_flat(
            config
        )
        return cls(
            tree_config=tree_config,
            search_config=search_config,
            tuple_config=tuple_config,
            **rest,
        )
