"""The ON-LSTM layer (Shen et al., "Ordered Neurons", ICLR 2019)."""

import keras
from keras import backend
from keras import ops
from keras import regularizers
from keras import tree
from keras.layers import RNN

from on_lstm_keras.layers.fused import fused_inner_loop
from on_lstm_keras.layers.onlstm_cell import ONLSTMCell
from on_lstm_keras.layers.stepwise import stepwise_inner_loop
from on_lstm_keras.utils.rnn import cell_property as _cell_property
from on_lstm_keras.utils.rnn import check_sequence_rank
from on_lstm_keras.utils.rnn import insert_extra_masks
from on_lstm_keras.utils.rnn import insert_extras


@keras.saving.register_keras_serializable(package="on_lstm_keras")
class ONLSTM(RNN):
    """Ordered Neurons LSTM layer (Shen et al., ICLR 2019).

    A drop-in replacement for `keras.layers.LSTM` whose cell state is ordered:
    two master gates (`cumax` over `units // chunk_size` levels) decide which
    high-ranking neurons are copied from the past and which low-ranking ones
    are overwritten by the input (see `ONLSTMCell` for the equations and the
    weight layout). With `return_distances=True` the layer also returns, per
    step, the master-forget distance `d_f = 1 − mean(f̃)` (high where a new
    constituent starts; the unsupervised parser splits there) and the
    master-input distance `d_i = mean(ĩ)`, in the columns named by
    `DISTANCE_FORGET` and `DISTANCE_INPUT`
    (`distances[..., DISTANCE_FORGET]` is `d_f`).

    Recurrence: on the TensorFlow and JAX backends, with the default
    activations (`tanh`, `sigmoid`), the layer runs the whole recurrence as
    one function with a hand-written backward pass
    (`keras.ops.custom_gradient`): the six gate blocks share one recurrent
    matmul per step, and the weight gradients are single matmuls after the
    loop. It covers masks, `go_backwards`, `stateful`, `initial_state`,
    `return_distances`, all three dropouts, mixed precision, `unroll` and
    XLA. Other backends or
    activations (or `layer.use_fused_recurrence = False`) step through
    `ONLSTMCell` with autodiff; the results are the same, except that under
    JAX the generic loop outputs `h0` (not 0) at padded steps before a
    sequence's first real step.

    Args:
        units: Positive integer, dimensionality of the output space.
        chunk_size: Positive integer dividing `units`; the master gates have
            `units // chunk_size` levels, each repeated `chunk_size` times.
        activation: Activation of the candidate and output. Default: `tanh`.
        recurrent_activation: Activation of the gates. Default: `sigmoid`.
        use_bias: Boolean (default `True`), whether to use a bias vector.
        kernel_initializer: Initializer for `kernel`. Default:
            `"glorot_uniform"`.
        recurrent_initializer: Initializer for `recurrent_kernel`. Default:
            `"orthogonal"`.
        bias_initializer: Initializer for the bias. Default: `"zeros"`.
        unit_forget_bias: Boolean (default `True`), add 1 to the forget-gate
            bias at initialization.
        kernel_regularizer: Regularizer function applied to `kernel`.
        recurrent_regularizer: Regularizer function applied to
            `recurrent_kernel`.
        bias_regularizer: Regularizer function applied to the bias.
        activity_regularizer: Regularizer function applied to the output.
        kernel_constraint: Constraint function applied to `kernel`.
        recurrent_constraint: Constraint function applied to
            `recurrent_kernel`.
        bias_constraint: Constraint function applied to the bias.
        dropout: Float in [0, 1), variational dropout on the inputs.
        recurrent_dropout: Float in [0, 1), variational dropout on `h₋₁`.
        recurrent_dropconnect: Float in [0, 1), DropConnect on the recurrent
            kernel: one mask per call (per batch), shared by all time steps,
            weights scaled by `1 / (1 - rate)` in training, no mask at
            inference. This is AWD-LSTM's weight drop ("wdrop").
        master_input: `"cumax"` (the paper, default) or `"reverse_cumsum"`
            (Su Jianlin's variant). See `ONLSTMCell`.
        seed: Random seed for dropout and DropConnect.
        return_sequences: Boolean (default `False`), whether to return the
            whole output sequence or only the last output.
        return_state: Boolean (default `False`), whether to also return the
            last states `h` and `c`.
        return_distances: Boolean (default `False`). If `True`, the layer
            also returns a `(batch, timesteps, 2)` tensor of distances:
            `d_f` in column `DISTANCE_FORGET` (0), `d_i` in column
            `DISTANCE_INPUT` (1), right after the output and before any states,
            whatever `return_sequences` is. Padded steps (where the mask is
            `False`) give distances of 0. They always come in the input's
            time order: `distances[:, t]` belongs to input step `t`, also
            with `go_backwards=True` (whose output sequence is reversed).
        go_backwards: Boolean (default `False`), process the sequence
            backwards and return the reversed sequence.
        stateful: Boolean (default `False`), reuse the last state of each
            sample as the initial state of the same sample in the next batch.
        unroll: Boolean (default `False`), unroll the loop (short sequences
            only).
        use_cudnn: `"auto"` (default), `False` or `True`, as for
            `keras.layers.LSTM`. There is no cuDNN ON-LSTM: `"auto"` and
            `False` run the layer's own recurrence, `True` raises a
            `ValueError` when the layer is called.

    Call arguments:
        inputs: A 3D tensor `(batch, timesteps, features)`; any number of
            time steps but 0 on every call, any batch size including 0.
            Integer inputs are cast to the compute dtype.
        mask: Boolean tensor `(batch, timesteps)`; `False` marks padding.
        training: Python boolean; dropout and DropConnect apply only in
            training.
        initial_state: Optional list `[h, c]` of initial states.

    Returns:
        `output`, then `distances` if `return_distances`, then `h, c` if
        `return_state`. `output` is `(batch, timesteps, units)` with
        `return_sequences`, else `(batch, units)`; `distances` is
        `(batch, timesteps, 2)`; `h` and `c` are `(batch, units)`.

    In `keras.layers.Bidirectional(ONLSTM(..., return_distances=True))`,
    the distances of both directions come back, each after the merged
    output (both outputs with `merge_mode=None`) and before that direction's
    states: `output, d_fwd, d_bwd`, or with `return_state`
    `output, d_fwd, h_fwd, c_fwd, d_bwd, h_bwd, c_bwd`. Both `d_fwd` and
    `d_bwd` are in the input's time order. (`Bidirectional` learns that
    the result is a tuple from `result_is_tuple`; see `return_state`.)

    Example:

    >>> import numpy as np
    >>> from on_lstm_keras import ONLSTM
    >>> model = keras.Sequential([
    ...     keras.Input((12, 8)),
    ...     ONLSTM(32, chunk_size=4, return_sequences=True),
    ...     ONLSTM(16, chunk_size=4),
    ...     keras.layers.Dense(1),
    ... ])
    >>> tuple(model(np.zeros((2, 12, 8))).shape)
    (2, 1)
    >>> layer = ONLSTM(32, 4, return_distances=True)
    >>> output, distances = layer(np.zeros((2, 12, 8)))
    >>> tuple(output.shape), tuple(distances.shape)
    ((2, 32), (2, 12, 2))
    >>> bi = keras.layers.Bidirectional(
    ...     ONLSTM(8, 4, return_sequences=True, return_distances=True))
    >>> [tuple(t.shape) for t in bi(np.zeros((2, 12, 8)))]
    [(2, 12, 16), (2, 12, 2), (2, 12, 2)]
    """

    def __init__(
        self,
        units,
        chunk_size,
        activation="tanh",
        recurrent_activation="sigmoid",
        use_bias=True,
        kernel_initializer="glorot_uniform",
        recurrent_initializer="orthogonal",
        bias_initializer="zeros",
        unit_forget_bias=True,
        kernel_regularizer=None,
        recurrent_regularizer=None,
        bias_regularizer=None,
        activity_regularizer=None,
        kernel_constraint=None,
        recurrent_constraint=None,
        bias_constraint=None,
        dropout=0.0,
        recurrent_dropout=0.0,
        recurrent_dropconnect=0.0,
        master_input="cumax",
        seed=None,
        return_sequences=False,
        return_state=False,
        return_distances=False,
        go_backwards=False,
        stateful=False,
        unroll=False,
        use_cudnn="auto",
        **kwargs,
    ):
        # Accepted as `keras.layers.LSTM` accepts it; one implementation.
        kwargs.pop("implementation", None)
        if use_cudnn not in ("auto", True, False):
            raise ValueError(
                "Argument `use_cudnn` of ONLSTM must be 'auto', True or "
                f"False, received: use_cudnn={use_cudnn!r}"
            )
        cell = ONLSTMCell(
            units,
            chunk_size,
            activation=activation,
            recurrent_activation=recurrent_activation,
            use_bias=use_bias,
            kernel_initializer=kernel_initializer,
            recurrent_initializer=recurrent_initializer,
            bias_initializer=bias_initializer,
            unit_forget_bias=unit_forget_bias,
            kernel_regularizer=kernel_regularizer,
            recurrent_regularizer=recurrent_regularizer,
            bias_regularizer=bias_regularizer,
            kernel_constraint=kernel_constraint,
            recurrent_constraint=recurrent_constraint,
            bias_constraint=bias_constraint,
            dropout=dropout,
            recurrent_dropout=recurrent_dropout,
            recurrent_dropconnect=recurrent_dropconnect,
            master_input=master_input,
            seed=seed,
            dtype=kwargs.get("dtype", None),
            trainable=kwargs.get("trainable", True),
            name="onlstm_cell",
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
        self.return_distances = bool(return_distances)
        self.use_cudnn = use_cudnn
        # Set to False to step through the cell generically (for tests and
        # benchmarks); otherwise the fused recurrence is tried first.
        self.use_fused_recurrence = True

    # -- what the layer returns ------------------------------------------

    @property
    def return_state(self):
        """Whether the result is a tuple: `return_state` or `return_distances`.

        `keras.layers.Bidirectional` reads this attribute, once, when it
        wraps a layer, to split each direction's result into the output
        and what follows it; it has no other hook for a layer whose result
        is a tuple. So the attribute reads `result_is_tuple`, which is
        `True` also with `return_distances` alone, and `Bidirectional`
        passes the distances on as it passes states on. Whether the last
        states are returned is the constructor's `return_state`, which
        `get_config()` gives back and the layer itself follows.
        """
        return self.result_is_tuple

    @return_state.setter
    def return_state(self, value):
        # `keras.layers.RNN.__init__` sets it from the argument.
        self._return_state = bool(value)

    @property
    def result_is_tuple(self):
        """`True` unless the result is the output alone."""
        return self._return_state or self.return_distances

    def build(self, sequences_shape, initial_state_shape=None):
        check_sequence_rank("ONLSTM", sequences_shape)
        super().build(sequences_shape, initial_state_shape)

    def compute_output_shape(self, sequences_shape, initial_state_shape=None):
        batch, length = sequences_shape[0], sequences_shape[1]
        if self.return_sequences:
            output_shape = (batch, length, self.units)
        else:
            output_shape = (batch, self.units)
        state_shapes = [(batch, self.units)] * 2
        distances_shape = [(batch, length, 2)] * self.return_distances
        return insert_extras(
            (output_shape, *state_shapes) if self._return_state
            else output_shape,
            distances_shape,
            self._return_state,
        )

    def compute_mask(self, inputs, mask):
        sequence_mask = tree.flatten(mask)[0]
        output_mask = sequence_mask if self.return_sequences else None
        if self._return_state:
            output_mask = [output_mask, None, None]
        return insert_extra_masks(
            output_mask, sequence_mask, int(self.return_distances),
            self._return_state,
        )

    # -- the recurrence --------------------------------------------------

    def call(self, sequences, initial_state=None, mask=None, training=False):
        sequences = self._checked_sequences(sequences)
        initial_state = self._initial_state(sequences, initial_state)
        cell = self.cell
        # Drawn once before the loop, so that the loop itself draws no
        # random numbers (needed under JAX), as `keras.layers.RNN` does.
        cell.get_dropout_mask(sequences[:, 0, :])
        cell.get_recurrent_dropout_mask(initial_state[0])
        if tree.is_nested(mask):
            mask = mask[0]
        last_output, outputs, states, distances = self.inner_loop(
            sequences, initial_state, mask, training
        )
        cell.reset_dropout_mask()
        cell.reset_recurrent_dropout_mask()
        states = [ops.cast(s, self.compute_dtype) for s in states]
        if self.stateful:
            for variable, state in zip(self.states, states):
                variable.assign(state)
        output = outputs if self.return_sequences else last_output
        result = [ops.cast(output, self.compute_dtype)]
        if self.return_distances:
            result.append(ops.cast(distances, self.compute_dtype))
        if self._return_state:
            result += states
        return tuple(result) if len(result) > 1 else result[0]

    def inner_loop(self, sequences, initial_state, mask, training=False):
        """`(last_output, outputs, [h, c], distances)` of the recurrence.

        The fused recurrence where it covers the case, else one cell step a
        step, as `keras.layers.LSTM` tries cuDNN and falls back. The first
        three are what `keras.layers.RNN.inner_loop` returns; `distances`
        is `None` unless `return_distances`.
        """
        if self.use_fused_recurrence:
            try:
                return fused_inner_loop(
                    self, sequences, initial_state, mask, training
                )
            except NotImplementedError:
                pass
        return stepwise_inner_loop(
            self, sequences, initial_state, mask, training
        )

    def forget_gate_distances(self, inputs, outputs, mask=None,
                              initial_state=None):
        """The ordinary forget gate's distance `1 − mean(f_t)` at every
        step: the ON-LSTM distance with the master forget gate `f̃`
        replaced by the forget gate `f_t = σ(x_t W_f + h_(t−1) U_f + b_f)`
        (Dyer, Melis and Blunsom 2019 read an LSTM's depth this way).

        Computed at once for the whole sequence from the layer's input,
        its output sequence (`h_(t−1)` is the output at the last real step
        before `t`, the initial `h` before the first) and the forget-gate
        columns of the weights as stored (`units:2*units` of `kernel`,
        `recurrent_kernel` and the bias; no dropout, no DropConnect), so at
        inference it is the gate the recurrence used. For an `ONLSTM` with
        one level (the LSTM comparison, whose master gates are constant)
        this is the distance that moves; for any other it is the ordinary
        forget gate beside the master one.

        Args:
            inputs: `(batch, time, features)`, what the layer was called on.
            outputs: `(batch, time, units)`, its output sequence
                (`return_sequences=True`).
            mask: Optional `(batch, time)` booleans, `False` at padding, as
                the layer was called with; padded steps give 0, as the
                master distances do, and carry `h` over.
            initial_state: The `[h, c]` the layer started from (only `h`
                is read); default zeros.

        Returns:
            `(batch, time)` distances in the layer's compute dtype.

        Raises:
            ValueError: the layer runs backwards (`go_backwards=True`), or
                `outputs` is not a sequence of `units` features.

        Example:

        >>> import numpy as np
        >>> layer = ONLSTM(6, 6, return_sequences=True)
        >>> x = np.random.default_rng(0).normal(size=(2, 5, 3))
        >>> d = layer.forget_gate_distances(x, layer(x))
        >>> tuple(d.shape)
        (2, 5)
        """
        if self.go_backwards:
            raise ValueError(
                "forget_gate_distances reads a layer that runs forward, "
                "received a layer with go_backwards=True")
        dtype = self.compute_dtype
        x = ops.cast(inputs, dtype)
        h = ops.cast(outputs, dtype)
        units = self.cell.units
        if len(h.shape) != 3 or h.shape[-1] != units:
            raise ValueError(
                "Argument `outputs` must be the layer's output sequence, "
                f"(batch, time, {units}), received shape {tuple(h.shape)}")
        batch, steps = ops.shape(x)[0], ops.shape(x)[1]
        if initial_state is None:
            h0 = ops.zeros((batch, units), dtype=dtype)
        else:
            if tree.is_nested(initial_state):
                initial_state = initial_state[0]
            h0 = ops.cast(initial_state, dtype)
        if mask is None:
            valid = ops.ones((batch, steps), dtype="bool")
        else:
            valid = ops.cast(tree.flatten(mask)[0], "bool")
        position = ops.arange(steps, dtype="int32")
        # The last real step before each step (-1: none, the initial h).
        before = ops.logical_and(
            ops.less(position[None, None, :], position[None, :, None]),
            valid[:, None, :])
        last = ops.max(ops.where(before, position[None, None, :], -1),
                       axis=-1)
        carried = ops.concatenate([h0[:, None, :], h], axis=1)
        h_prev = ops.take_along_axis(
            carried, ops.expand_dims(last + 1, -1), axis=1)
        cell = self.cell
        z = (ops.matmul(x, ops.cast(cell.kernel[:, units:2 * units], dtype))
             + ops.matmul(h_prev, ops.cast(
                 cell.recurrent_kernel[:, units:2 * units], dtype)))
        if cell.use_bias:
            z = z + ops.cast(cell.bias[units:2 * units], dtype)
        distances = 1.0 - ops.mean(cell.recurrent_activation(z), axis=-1)
        return ops.where(valid, distances, ops.zeros_like(distances))

    def _checked_sequences(self, sequences):
        """`sequences`, checked, integers cast to the compute dtype."""
        check_sequence_rank("ONLSTM", sequences.shape)
        if sequences.shape[1] == 0:
            raise ValueError(
                "Argument `inputs` of ONLSTM has no time steps: an RNN needs "
                "at least one step to give an output (keras.layers.LSTM "
                f"fails too), received: shape={tuple(sequences.shape)}"
            )
        if self.use_cudnn is True:
            raise ValueError(
                "Argument `use_cudnn` of ONLSTM is True, but there is no "
                "cuDNN kernel for ON-LSTM. Pass use_cudnn='auto' or False: "
                "the layer then runs its own fused recurrence."
            )
        if self.unroll and sequences.shape[1] is None:
            raise ValueError(
                "Argument `unroll` of ONLSTM is True, but the number of "
                "time steps is not known: give the input a fixed length "
                f"(keras.Input(shape=...)), received: "
                f"shape={tuple(sequences.shape)}"
            )
        if not backend.is_float_dtype(sequences.dtype):
            # As `keras.layers.LSTM`, whose matmuls promote integers.
            sequences = ops.cast(sequences, self.compute_dtype)
        return sequences

    def _initial_state(self, sequences, initial_state):
        """`[h0, c0]` in the cell's compute dtype: `initial_state`, else
        the carried states (`stateful`), else zeros."""
        if initial_state is None:
            if self.stateful:
                initial_state = self.states
            else:
                initial_state = self.get_initial_state(
                    batch_size=ops.shape(sequences)[0]
                )
        if self.stateful:
            batch_size = sequences.shape[0]
            expected = self._expected_batch_size
            if None not in (expected, batch_size) and batch_size != expected:
                raise ValueError(
                    "Argument `inputs` of a stateful ONLSTM must have the "
                    f"batch size of its states, {expected}, received: "
                    f"batch size {batch_size}"
                )
        if not tree.is_nested(initial_state):
            initial_state = [initial_state]
        return [
            ops.convert_to_tensor(s, dtype=self.cell.compute_dtype)
            for s in initial_state
        ]

    units = _cell_property("units")
    chunk_size = _cell_property("chunk_size")
    levels = _cell_property("levels")
    activation = _cell_property("activation")
    recurrent_activation = _cell_property("recurrent_activation")
    use_bias = _cell_property("use_bias")
    unit_forget_bias = _cell_property("unit_forget_bias")
    kernel_initializer = _cell_property("kernel_initializer")
    recurrent_initializer = _cell_property("recurrent_initializer")
    bias_initializer = _cell_property("bias_initializer")
    kernel_regularizer = _cell_property("kernel_regularizer")
    recurrent_regularizer = _cell_property("recurrent_regularizer")
    bias_regularizer = _cell_property("bias_regularizer")
    kernel_constraint = _cell_property("kernel_constraint")
    recurrent_constraint = _cell_property("recurrent_constraint")
    bias_constraint = _cell_property("bias_constraint")
    dropout = _cell_property("dropout")
    recurrent_dropout = _cell_property("recurrent_dropout")
    recurrent_dropconnect = _cell_property("recurrent_dropconnect")
    master_input = _cell_property("master_input")

    def get_config(self):
        cell_config = self.cell.get_config()
        config = {
            key: cell_config[key]
            for key in (
                "units",
                "chunk_size",
                "activation",
                "recurrent_activation",
                "use_bias",
                "kernel_initializer",
                "recurrent_initializer",
                "bias_initializer",
                "unit_forget_bias",
                "kernel_regularizer",
                "recurrent_regularizer",
                "bias_regularizer",
                "kernel_constraint",
                "recurrent_constraint",
                "bias_constraint",
                "dropout",
                "recurrent_dropout",
                "recurrent_dropconnect",
                "master_input",
                "seed",
            )
        }
        config["activity_regularizer"] = regularizers.serialize(
            self.activity_regularizer
        )
        config["return_distances"] = self.return_distances
        config["use_cudnn"] = self.use_cudnn
        base_config = super().get_config()
        base_config["return_state"] = self._return_state
        del base_config["cell"]
        return {**base_config, **config}

    @classmethod
    def from_config(cls, config):
        return cls(**config)
