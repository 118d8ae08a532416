"""`RRNN`: recurrent layer whose cell builds its own computation tree.

Qian, Kennedy and Klabjan, "Dynamic Cell Structure via Recursive-Recurrent
Neural Networks" (2019). The layer runs `RRNNCell` over a sequence and can
also return each step's tree and node values.
"""

import keras
from keras import ops
from keras import regularizers
from keras import tree as nest
from keras.layers import RNN
# The backend-agnostic recurrence that `keras.layers.RNN` itself runs on.
from keras.src.backend import rnn as backend_rnn

from on_lstm_keras.utils import validation as check
from on_lstm_keras.utils.rnn import cell_property as _cell_property
from on_lstm_keras.utils.rnn import check_sequence_rank
from on_lstm_keras.utils.rnn import insert_extra_masks
from on_lstm_keras.utils.rnn import insert_extras
from on_lstm_keras.rrnn.cell import RRNNCell
from on_lstm_keras.rrnn.config import SEARCH_FIELDS
from on_lstm_keras.rrnn.config import TREE_FIELDS
from on_lstm_keras.rrnn.config import TUPLE_FIELDS
from on_lstm_keras.rrnn.config import configs_from_flat
from on_lstm_keras.rrnn.gru import rrnn_from_gru
from on_lstm_keras.rrnn.recurrence import step_inputs
from on_lstm_keras.rrnn.recurrence import tree_step_function
from on_lstm_keras.rrnn.recurrence import unpack_extras
from on_lstm_keras.rrnn.trees import most_common_trees
from on_lstm_keras.rrnn.trees import tree_expression

_WEIGHT_ARGS = (
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
# The keys of the cell's config that the layer's config repeats.
_CELL_ARGS = (
    ("units",) + TREE_FIELDS + SEARCH_FIELDS + TUPLE_FIELDS + _WEIGHT_ARGS
)


@keras.saving.register_keras_serializable(package="on_lstm_keras")
class RRNN(RNN):
    """Recursive-recurrent layer with a dynamic cell structure (RRNN).

    Qian, Kennedy and Klabjan (2019). At each step the cell builds a binary
    computation tree over the leaves `x_t`, `h_{t-1}`, `0` by `iterations`
    greedy merges `u(o(c_i·L_k, c_j·R_k) + b_k)` chosen by a learned score;
    the last node is `h_t`. See `RRNNCell` for the candidates, the pools,
    the selection modes and the weight layout, and `on_lstm_keras.rrnn.trees`
    for how trees are written.

    Everything is vectorised with `keras.ops`: the input edges
    `x·[L_0|...|L_{K-1}]` of all steps are one matmul before the recurrence;
    inside a step the merges are unrolled, each new node is projected by all
    tuples in one matmul, and the candidates of a merge are gathered with
    static pair tables.

    GRU as a special case: `RRNN.from_gru(gru)` copies a built
    `keras.layers.GRU(reset_after=False)` into tuples 0-2, sets tuple 3 to
    `(I, I, 0)` and forces `gru_tree()`; its output equals the GRU's. With
    `selection="hard"` it starts the search at the GRU tree instead.

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
        tree_config: A `TreeConfig` (default `TreeConfig()`): merges per
            step, tuples, operations, activations, selection, pool, the
            forced tree and the variant (see `RRNNCell`).
        search_config: A `SearchConfig` (default `SearchConfig()`): the
            score MLP's size, the margin `M` and the search options.
        tuple_config: A `TupleConfig` (default `TupleConfig()`): the
            identity start of the last tuple, whether it stays fixed, and
            whether `x` shares `L_k`.
        margin_weight: Non-negative float (default 0): weight of the margin
            term this layer adds with `add_loss`.
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
    >>> from on_lstm_keras.rrnn import RRNN, SearchConfig, TreeConfig
    >>> x = np.random.random((2, 5, 6)).astype("float32")
    >>> layer = RRNN(8, TreeConfig(iterations=4), SearchConfig(score_units=4),
    ...              return_trees=True)
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
        tree_config=None,
        search_config=None,
        tuple_config=None,
        margin_weight=0.0,
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
        margin_weight = check.non_negative_float("margin_weight", margin_weight)
        cell = RRNNCell(
            units,
            tree_config=tree_config,
            search_config=search_config,
            tuple_config=tuple_config,
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
    def from_gru(cls, gru, tree_config=None, **kwargs):
        """An RRNN equal to a built `keras.layers.GRU(reset_after=False)`.

        The GRU's kernel `[W_z | W_r | W_h]`, recurrent kernel
        `[U_z | U_r | U_h]` and bias `[b_z | b_r | b_h]` become tuples
        `0, 1, 2` (`kernel` and `right_kernel` blocks 0-2, `bias`); tuple 3
        is set to `(I, I, 0)`; with the forced `gru_tree()` the layer
        computes exactly the GRU. `left_kernel` blocks 0-2 are not used by
        the GRU tree: they keep their initial values (or, with
        `tie_input_kernel=True`, they are the GRU kernel). The GRU's
        `return_sequences`, `return_state` and `go_backwards` are kept.

        With a `tree_config` whose `selection` is `"hard"` or `"soft"` the
        same weights start a tree search, and, when the cell has a merge prior (`merge_prior=True`,
        the default) and `iterations=9`, the prior is set to the GRU tree
        and the score kernel to zero (`prefer_tree`): the hard search then
        picks `gru_tree()` at every step and its output equals the GRU's,
        a warm start from which training moves the tree. Without a merge
        prior only the weights are copied, and a value-only score need not
        find the GRU tree from them.

        Args:
            gru: A built `keras.layers.GRU` with `reset_after=False`,
                `activation="tanh"`, `recurrent_activation="sigmoid"`.
            tree_config: A `TreeConfig`; default: the forced GRU tree,
                `TreeConfig(selection="forced", tree=gru_tree())`. Its
                `iterations` must stay 9 and `tuples` at least 4, and its
                `operations` and `activations` must hold the names the GRU
                tree uses.
            **kwargs: Other `RRNN` arguments.

        Returns:
            A built `RRNN`.
        """
        return rrnn_from_gru(cls, gru, tree_config=tree_config, **kwargs)

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
        x_proj = cell.input_projection(sequences)
        extras = self._needs_extras
        # Per-step trees (`replaying` with one tree per step): the loop is
        # unrolled, so `step` runs once per step, in order.
        step_trees = cell.step_trees
        if step_trees is not None and sequences.shape[1] != len(step_trees):
            raise ValueError(
                f"The replayed trees are for {len(step_trees)} steps, "
                f"received inputs with {sequences.shape[1]} steps"
            )
        step = tree_step_function(
            cell,
            node_kernel=cell.node_kernel(),
            widths=(x_proj.shape[-1], sequences.shape[-1]),
            masked=mask is not None,
            with_nodes=self.return_nodes,
            pack=extras,
            zero_output_for_mask=self.zero_output_for_mask,
            go_backwards=self.go_backwards,
        )
        last_output, outputs, states = backend_rnn(
            step,
            step_inputs(x_proj, sequences, mask, self.return_nodes),
            list(initial_state),
            go_backwards=self.go_backwards,
            mask=None,
            unroll=self.unroll or step_trees is not None,
            input_length=sequences.shape[1],
            return_all_outputs=self.return_sequences or extras,
        )
        if extras:
            margin, trees, nodes, outputs, last_output = unpack_extras(
                cell, outputs, last_output, self.return_nodes
            )
            # Handed to `call`, which runs this method and returns them.
            self._step_extras = (margin, trees, nodes, mask)
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
    variant = _cell_property("variant")
    tree_config = _cell_property("tree_config")
    search_config = _cell_property("search_config")
    tuple_config = _cell_property("tuple_config")

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
        tree_config, search_config, tuple_config, rest = configs_from_flat(
            config
        )
        return cls(
            tree_config=tree_config,
            search_config=search_config,
            tuple_config=tuple_config,
            **rest,
        )
