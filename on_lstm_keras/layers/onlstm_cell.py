"""The ON-LSTM cell (Shen et al., "Ordered Neurons", ICLR 2019)."""

import keras
from keras import activations
from keras import constraints
from keras import initializers
from keras import ops
from keras import regularizers
from keras.layers import Layer
# The mix-in through which `keras.layers.RNN` draws a cell's dropout masks.
from keras.src.layers.rnn.dropout_rnn_cell import DropoutRNNCell

from on_lstm_keras.ops import cumax
from on_lstm_keras.ops import master_distances
from on_lstm_keras.ops import reverse_cumax
from on_lstm_keras.utils import validation as check

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
