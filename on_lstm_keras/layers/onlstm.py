"""The ON-LSTM cell and layer (Shen et al., "Ordered Neurons", ICLR 2019)."""

import keras
from keras import activations
from keras import constraints
from keras import initializers
from keras import ops
from keras import regularizers
from keras import tree
from keras.layers import Layer
from keras import backend
from keras.layers import RNN
# The backend-agnostic recurrence that `keras.layers.RNN` itself runs on, and
# the mix-in through which `keras.layers.RNN` draws a cell's dropout masks.
from keras.src.backend import rnn as backend_rnn
from keras.src.layers.rnn.dropout_rnn_cell import DropoutRNNCell

from on_lstm_keras.utils import validation as check
from on_lstm_keras.utils.rnn import cell_property as _cell_property
from on_lstm_keras.utils.rnn import check_sequence_rank
from on_lstm_keras.utils.rnn import insert_extra_masks
from on_lstm_keras.utils.rnn import insert_extras
from on_lstm_keras.layers.onlstm_fused import fused_inner_loop
from on_lstm_keras.layers.onlstm_fused import fused_path_unsupported
# The columns of the distances that `ONLSTM(return_distances=True)` returns.
from on_lstm_keras.ops import DISTANCE_FORGET
from on_lstm_keras.ops import DISTANCE_INPUT
from on_lstm_keras.ops import cumax
from on_lstm_keras.ops import master_distances
from on_lstm_keras.ops import reverse_cumax

MASTER_INPUT_MODES = ("cumax", "reverse_cumsum")


@keras.saving.register_keras_serializable(package="on_lstm_keras")
class ONLSTMCell(Layer, DropoutRNNCell):
    """Cell class for the `ONLSTM` layer: one step of an ordered-neurons LSTM.

    The cell is an LSTM whose cell state is updated by interval. Besides the
    usual gates `i, f, o` and candidate `ĉ`, it computes two master gates over
    `levels = units // chunk_size` levels, each level repeated `chunk_size`
    times across the units:

    ```
    f̃ = cumax(W_f̃ x + U_f̃ h + b_f̃)              master forget gate (rising)
    ĩ = 1 - cumax(W_ĩ x + U_ĩ h + b_ĩ)          master input gate (falling)
    ω = f̃ ∘ ĩ                                   overlap of the two
    c = ω∘(f∘c₋₁ + i∘ĉ) + (f̃ − ω)∘c₋₁ + (ĩ − ω)∘ĉ
    h = o ∘ tanh(c)
    ```

    High-ranking neurons (large unit index) are copied from the past, low ones
    are overwritten by the input, and the overlap is updated as in an LSTM.

    Weight layout. `kernel` has shape `(input_dim, 4 * units + 2 * levels)`,
    `recurrent_kernel` `(units, 4 * units + 2 * levels)` and `bias`
    `(4 * units + 2 * levels,)`. Their columns are, in this order: input gate
    `i`, forget gate `f`, candidate `ĉ`, output gate `o` (`units` columns
    each, the same order as `keras.layers.LSTMCell`), then the master forget
    gate and the master input gate (`levels` columns each). Unit `u` belongs
    to level `u // chunk_size`.

    Args:
        units: Positive integer, dimensionality of the output space.
        chunk_size: Positive integer that divides `units`; each master-gate
            level covers `chunk_size` consecutive units.
        activation: Activation function for the candidate and the output.
            Default: hyperbolic tangent (`tanh`).
        recurrent_activation: Activation function for the gates `i, f, o`.
            Default: sigmoid (`sigmoid`).
        use_bias: Boolean (default `True`), whether the cell uses a bias.
        kernel_initializer: Initializer for `kernel`. Default:
            `"glorot_uniform"`.
        recurrent_initializer: Initializer for `recurrent_kernel`. Default:
            `"orthogonal"`.
        bias_initializer: Initializer for the bias. Default: `"zeros"`.
        unit_forget_bias: Boolean (default `True`). If `True`, add 1 to the
            bias of the forget gate `f` at initialization (as
            `keras.layers.LSTMCell` does; master gates are left at 0).
        kernel_regularizer: Regularizer function applied to `kernel`.
        recurrent_regularizer: Regularizer function applied to
            `recurrent_kernel`.
        bias_regularizer: Regularizer function applied to the bias.
        kernel_constraint: Constraint function applied to `kernel`.
        recurrent_constraint: Constraint function applied to
            `recurrent_kernel`.
        bias_constraint: Constraint function applied to the bias.
        dropout: Float in [0, 1). Fraction of the input units to drop; one
            mask per sequence, shared by every step (variational dropout).
        recurrent_dropout: Float in [0, 1). Fraction of the units of `h₋₁`
            to drop before the recurrent transformation; one mask per
            sequence, shared by every step and by all six gate blocks.
        recurrent_dropconnect: Float in [0, 1). DropConnect on the whole
            `recurrent_kernel` (all six gate blocks): one Bernoulli mask per
            call, shared by every sample and every time step, and no mask at
            inference. Kept weights are scaled by `1 / (1 - rate)` during
            training (the inverted scaling of AWD-LSTM's weight drop), so the
            stored weights are used unchanged at inference and the expected
            recurrent pre-activation is the same in both modes.
        master_input: `"cumax"` (default, the paper: `ĩ = 1 − cumax(·)`) or
            `"reverse_cumsum"` (Su Jianlin's symmetric variant: right-to-left
            cumulative sum of the softmax, which keeps level `k` itself).
        seed: Random seed for the dropout and DropConnect masks.

    Call arguments:
        inputs: A 2D tensor, with shape `(batch, features)`.
        states: List of two 2D tensors `[h, c]`, each `(batch, units)`.
        training: Python boolean, whether the dropout and DropConnect masks
            are applied.

    Example:

    >>> import numpy as np
    >>> inputs = np.random.random((4, 10, 8)).astype("float32")
    >>> rnn = keras.layers.RNN(ONLSTMCell(16, chunk_size=4))
    >>> tuple(rnn(inputs).shape)
    (4, 16)
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
        kernel_constraint=None,
        recurrent_constraint=None,
        bias_constraint=None,
        dropout=0.0,
        recurrent_dropout=0.0,
        recurrent_dropconnect=0.0,
        master_input="cumax",
        seed=None,
        **kwargs,
    ):
        # Accepted as `keras.layers.LSTMCell` accepts it; one implementation.
        kwargs.pop("implementation", None)
        units = check.positive_int("units", units)
        chunk_size = check.positive_int("chunk_size", chunk_size)
        if units % chunk_size:
            raise ValueError(
                "Argument `units` must be a multiple of `chunk_size`, "
                f"received: units={units}, chunk_size={chunk_size} "
                f"(units % chunk_size = {units % chunk_size})"
            )
        super().__init__(**kwargs)
        self.units = units
        self.chunk_size = chunk_size
        self.levels = units // chunk_size
        self.activation = activations.get(activation)
        self.recurrent_activation = activations.get(recurrent_activation)
        self.use_bias = use_bias

        self.kernel_initializer = initializers.get(kernel_initializer)
        self.recurrent_initializer = initializers.get(recurrent_initializer)
        self.bias_initializer = initializers.get(bias_initializer)

        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.recurrent_regularizer = regularizers.get(recurrent_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)

        self.kernel_constraint = constraints.get(kernel_constraint)
        self.recurrent_constraint = constraints.get(recurrent_constraint)
        self.bias_constraint = constraints.get(bias_constraint)

        self.dropout = check.rate("dropout", dropout)
        self.recurrent_dropout = check.rate(
            "recurrent_dropout", recurrent_dropout
        )
        self.recurrent_dropconnect = check.rate(
            "recurrent_dropconnect", recurrent_dropconnect
        )
        self.master_input = check.choice(
            "master_input", master_input, MASTER_INPUT_MODES
        )
        self.seed = seed
        self.seed_generator = keras.random.SeedGenerator(seed=seed)

        self.unit_forget_bias = unit_forget_bias
        self.state_size = [self.units, self.units]
        self.output_size = self.units
        self._dropconnect_mask = None

    @property
    def gate_size(self):
        """Width of the fused gate block: `4 * units + 2 * levels`."""
        return 4 * self.units + 2 * self.levels

    def build(self, input_shape):
        super().build(input_shape)
        input_dim = input_shape[-1]
        self.kernel = self.add_weight(
            shape=(input_dim, self.gate_size),
            name="kernel",
            initializer=self.kernel_initializer,
            regularizer=self.kernel_regularizer,
            constraint=self.kernel_constraint,
        )
        self.recurrent_kernel = self.add_weight(
            shape=(self.units, self.gate_size),
            name="recurrent_kernel",
            initializer=self.recurrent_initializer,
            regularizer=self.recurrent_regularizer,
            constraint=self.recurrent_constraint,
        )
        if self.use_bias:
            if self.unit_forget_bias:

                def bias_initializer(_, *args, **kwargs):
                    return ops.concatenate(
                        [
                            self.bias_initializer(
                                (self.units,), *args, **kwargs
                            ),
                            initializers.get("ones")(
                                (self.units,), *args, **kwargs
                            ),
                            self.bias_initializer(
                                (2 * self.units + 2 * self.levels,),
                                *args,
                                **kwargs,
                            ),
                        ]
                    )

            else:
                bias_initializer = self.bias_initializer
            self.bias = self.add_weight(
                shape=(self.gate_size,),
                name="bias",
                initializer=bias_initializer,
                regularizer=self.bias_regularizer,
                constraint=self.bias_constraint,
            )
        else:
            self.bias = None

    # -- masks ------------------------------------------------------------

    def get_dropconnect_mask(self):
        """The DropConnect mask of `recurrent_kernel` for the current call.

        Created once and cached until `reset_recurrent_dropout_mask()` (which
        `keras.layers.RNN` calls after each sequence), so every time step of
        a call shares it. `None` when `recurrent_dropconnect` is 0.
        """
        if self._dropconnect_mask is None and self.recurrent_dropconnect > 0:
            self._dropconnect_mask = keras.random.dropout(
                ops.ones(
                    (self.units, self.gate_size), dtype=self.compute_dtype
                ),
                rate=self.recurrent_dropconnect,
                seed=self.seed_generator,
            )
        return self._dropconnect_mask

    def get_recurrent_dropout_mask(self, step_input):
        # `keras.layers.RNN` asks for the masks once before its loop, so the
        # loop itself draws no random numbers (needed under JAX): the
        # DropConnect mask is drawn at the same moment.
        self.get_dropconnect_mask()
        return super().get_recurrent_dropout_mask(step_input)

    def reset_recurrent_dropout_mask(self):
        super().reset_recurrent_dropout_mask()
        self._dropconnect_mask = None

    def effective_recurrent_kernel(self, training=False):
        """`recurrent_kernel`, with the DropConnect mask applied in training."""
        if training and self.recurrent_dropconnect > 0:
            return self.recurrent_kernel * self.get_dropconnect_mask()
        return self.recurrent_kernel

    # -- the computation --------------------------------------------------

    def input_projection(self, inputs, training=False):
        """`dropout(x) · kernel + bias`, for one step or a whole sequence."""
        if training and self.dropout > 0:
            if len(inputs.shape) == 3:  # one mask for every step
                mask = ops.expand_dims(self.get_dropout_mask(inputs[:, 0]), 1)
            else:
                mask = self.get_dropout_mask(inputs)
            inputs = inputs * mask
        z = ops.matmul(inputs, self.kernel)
        if self.use_bias:
            z = z + self.bias
        return z

    def recurrent_step(self, z_x, states, recurrent_kernel, training=False):
        """One step given the input projection `z_x` of this step.

        Args:
            z_x: `(batch, 4 * units + 2 * levels)`, `x_t · kernel + bias`.
            states: `[h₋₁, c₋₁]`.
            recurrent_kernel: The recurrent kernel to use this step
                (with DropConnect applied, in training).
            training: Whether recurrent dropout applies.

        Returns:
            `(h, [h, c], distances)` where `distances` is `(batch, 2)`:
            `1 − mean(f̃)` in column `DISTANCE_FORGET`, `mean(ĩ)` in
            column `DISTANCE_INPUT`.
        """
        h_tm1, c_tm1 = states
        if training and self.recurrent_dropout > 0:
            h_tm1 = h_tm1 * self.get_recurrent_dropout_mask(h_tm1)
        z = z_x + ops.matmul(h_tm1, recurrent_kernel)
        return self.update(z, c_tm1)

    def update(self, z, c_tm1):
        """The ON-LSTM cell update from the fused pre-activations `z`."""
        units, levels, chunk = self.units, self.levels, self.chunk_size
        z_i, z_f, z_c, z_o, z_mf, z_mi = ops.split(
            z,
            [units, 2 * units, 3 * units, 4 * units, 4 * units + levels],
            axis=-1,
        )
        master_forget = cumax(z_mf)
        if self.master_input == "cumax":
            master_input = 1.0 - cumax(z_mi)
        else:
            master_input = reverse_cumax(z_mi)
        distances = master_distances(master_forget, master_input)

        def by_level(t):
            return ops.reshape(t, (-1, levels, chunk))

        i = by_level(self.recurrent_activation(z_i))
        f = by_level(self.recurrent_activation(z_f))
        c_hat = by_level(self.activation(z_c))
        o = self.recurrent_activation(z_o)
        c_prev = by_level(c_tm1)
        mf = ops.expand_dims(master_forget, -1)
        mi = ops.expand_dims(master_input, -1)
        overlap = mf * mi
        c = (
            overlap * (f * c_prev + i * c_hat)
            + (mf - overlap) * c_prev
            + (mi - overlap) * c_hat
        )
        c = ops.reshape(c, (-1, units))
        h = o * self.activation(c)
        return h, [h, c], distances

    def call(self, inputs, states, training=False):
        z_x = self.input_projection(inputs, training=training)
        recurrent_kernel = self.effective_recurrent_kernel(training)
        h, new_states, _ = self.recurrent_step(
            z_x, states, recurrent_kernel, training=training
        )
        return h, new_states

    def get_config(self):
        config = {
            "units": self.units,
            "chunk_size": self.chunk_size,
            "activation": activations.serialize(self.activation),
            "recurrent_activation": activations.serialize(
                self.recurrent_activation
            ),
            "use_bias": self.use_bias,
            "unit_forget_bias": self.unit_forget_bias,
            "kernel_initializer": initializers.serialize(
                self.kernel_initializer
            ),
            "recurrent_initializer": initializers.serialize(
                self.recurrent_initializer
            ),
            "bias_initializer": initializers.serialize(self.bias_initializer),
            "kernel_regularizer": regularizers.serialize(
                self.kernel_regularizer
            ),
            "recurrent_regularizer": regularizers.serialize(
                self.recurrent_regularizer
            ),
            "bias_regularizer": regularizers.serialize(self.bias_regularizer),
            "kernel_constraint": constraints.serialize(self.kernel_constraint),
            "recurrent_constraint": constraints.serialize(
                self.recurrent_constraint
            ),
            "bias_constraint": constraints.serialize(self.bias_constraint),
            "dropout": self.dropout,
            "recurrent_dropout": self.recurrent_dropout,
            "recurrent_dropconnect": self.recurrent_dropconnect,
            "master_input": self.master_input,
            "seed": self.seed,
        }
        base_config = super().get_config()
        return {**base_config, **config}

    def get_initial_state(self, batch_size=None):
        return [
            ops.zeros((batch_size, d), dtype=self.compute_dtype)
            for d in self.state_size
        ]


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

    Speed: on the TensorFlow and JAX backends, with the default activations
    (`tanh`, `sigmoid`), the layer runs the whole recurrence as one function
    with a hand-written backward pass (`keras.ops.custom_gradient`): the six
    gate blocks share one recurrent matmul per step, and the weight
    gradients are single matmuls after the loop. It covers masks,
    `go_backwards`, `stateful`, `initial_state`, `return_distances`, all
    three dropouts, mixed precision, `unroll` and XLA. Other backends or
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
            last states `h` and `c`. Kept as `returns_states`; the attribute
            `return_state` reads `True` whenever the result is a tuple (also
            with `return_distances` alone), which is what wrappers such as
            `keras.layers.Bidirectional` read it for.
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
    `d_bwd` are in the input's time order.

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
        self._step_distances = None
        # Set to False to step through the cell generically (for tests and
        # benchmarks); the fused recurrence is used only where
        # `fused_path_unsupported` allows it.
        self.use_fused_recurrence = True

    @property
    def return_state(self):
        """Whether the layer's result is a tuple `(output, *more)`.

        `True` with `return_state=True` and also with `return_distances`:
        wrappers such as `keras.layers.Bidirectional` read this attribute to
        tell the output from what follows it, and then pass the distances on
        as they pass states on. Whether the last states themselves are
        returned is the constructor's `return_state`, kept in
        `returns_states` (and in `get_config()`).
        """
        return self.returns_states or getattr(self, "return_distances", False)

    @return_state.setter
    def return_state(self, value):
        # `keras.layers.RNN.__init__` sets it from the argument.
        self.returns_states = bool(value)

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
            (output_shape, *state_shapes) if self.returns_states
            else output_shape,
            distances_shape,
            self.returns_states,
        )

    def compute_mask(self, inputs, mask):
        sequence_mask = tree.flatten(mask)[0]
        output_mask = sequence_mask if self.return_sequences else None
        if self.returns_states:
            output_mask = [output_mask, None, None]
        return insert_extra_masks(
            output_mask, sequence_mask, int(self.return_distances),
            self.returns_states,
        )

    def inner_loop(self, sequences, initial_state, mask, training=False):
        if tree.is_nested(mask):
            mask = mask[0]
        # The fused recurrence where it covers the case, else step through
        # the cell (as `keras.layers.LSTM` tries cuDNN, else falls back).
        if self.use_fused_recurrence and not fused_path_unsupported(
            self.cell
        ):
            result, distances = fused_inner_loop(
                self, sequences, initial_state, mask, training
            )
        else:
            result, distances = self._stepwise_inner_loop(
                sequences, initial_state, mask, training
            )
        # Handed to `call`, which runs this method and returns them.
        self._step_distances = distances
        return result

    def _stepwise_inner_loop(self, sequences, initial_state, mask, training):
        """`inner_loop` stepping through `ONLSTMCell` with autodiff.

        Returns `((last_output, outputs, states), distances)`, the
        distances `None` unless `return_distances`.
        """
        cell = self.cell
        # The input transformation of every step at once, outside the loop.
        z_x = cell.input_projection(sequences, training=training)
        recurrent_kernel = cell.effective_recurrent_kernel(training)
        units = cell.units

        if self.return_distances:
            # The distances ride along with `h` in the first state, so that a
            # masked step carries them over exactly as it carries `h` over
            # (every backend treats the first state as the previous output).
            def step(z_t, states):
                h_and_distances, c_tm1 = states
                h, (_, c), distances = cell.recurrent_step(
                    z_t,
                    [h_and_distances[:, :units], c_tm1],
                    recurrent_kernel,
                    training=training,
                )
                out = ops.concatenate([h, ops.cast(distances, h.dtype)], -1)
                return out, [out, c]

            h0, c0 = initial_state
            no_distances = ops.zeros((ops.shape(h0)[0], 2), dtype=h0.dtype)
            initial_state = [ops.concatenate([h0, no_distances], -1), c0]
        else:

            def step(z_t, states):
                h, new_states, _ = cell.recurrent_step(
                    z_t, states, recurrent_kernel, training=training
                )
                return h, new_states

        last_output, outputs, states = backend_rnn(
            step,
            z_x,
            list(initial_state),
            go_backwards=self.go_backwards,
            mask=mask,
            unroll=self.unroll,
            input_length=sequences.shape[1],
            zero_output_for_mask=self.zero_output_for_mask,
            return_all_outputs=self.return_sequences or self.return_distances,
        )
        distances = None
        if self.return_distances:
            distances = outputs[..., units:]
            if self.go_backwards:  # to the input's time order
                distances = ops.flip(distances, axis=1)
            if mask is not None:
                step_mask = ops.cast(mask, distances.dtype)
                distances = distances * ops.expand_dims(step_mask, -1)
            outputs = outputs[..., :units]
            last_output = last_output[..., :units]
            states = [states[0][..., :units], states[1]]
        return (last_output, outputs, states), distances

    def call(self, sequences, initial_state=None, mask=None, training=False):
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
        if not backend.is_float_dtype(sequences.dtype):
            # As `keras.layers.LSTM`, whose matmuls promote integers.
            sequences = ops.cast(sequences, self.compute_dtype)
        result = super().call(
            sequences, mask=mask, training=training, initial_state=initial_state
        )
        if self.return_state:  # `RNN.call` gave `(output, h, c)`
            output, states = result[0], list(result[1:])
        else:
            output, states = result, []
        distances = []
        if self.return_distances:
            distances = [ops.cast(self._step_distances, self.compute_dtype)]
            self._step_distances = None
        if not self.returns_states:
            return (output, *distances) if distances else output
        return insert_extras((output, *states), distances, True)

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
        base_config["return_state"] = self.returns_states
        del base_config["cell"]
        return {**base_config, **config}

    @classmethod
    def from_config(cls, config):
        return cls(**config)
