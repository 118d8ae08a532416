"""The paper's word-level language model: stacked ON-LSTM with AWD-LSTM
regularisation and a tied softmax."""

import keras
from keras import ops

from on_lstm_keras.utils import validation as check
from on_lstm_keras.config import INITIALIZERS
from on_lstm_keras.config import ModelConfig
from on_lstm_keras.layers import ONLSTM
from on_lstm_keras.ops import DISTANCE_FORGET
from on_lstm_keras.models.distribute import num_replicas
from on_lstm_keras.models.embedding import WordDropoutEmbedding

__all__ = ["ONLSTMLanguageModel", "recurrent_initializers"]


def recurrent_initializers(initializer, units):
    """The initializer arguments of an `ONLSTM` layer of `units` units
    for `ModelConfig.initializer`.

    Args:
        initializer: `"keras"` or `"uniform"` (`config.INITIALIZERS`).
        units: The layer's units.

    Returns:
        A dict of `ONLSTM` keyword arguments: none for `"keras"` (the
        layer's defaults, so that such a model draws exactly the weights
        it drew before the choice existed); for `"uniform"`, PyTorch's
        `nn.LSTM` default: `kernel_initializer`, `recurrent_initializer`
        and `bias_initializer` all U(-1/sqrt(units), 1/sqrt(units)) and
        `unit_forget_bias=False`. (`nn.LSTM` has two biases, each drawn so;
        here there is one.)

    Example:

    >>> recurrent_initializers("keras", 16)
    {}
    >>> init = recurrent_initializers("uniform", 16)
    >>> init["kernel_initializer"].minval, init["kernel_initializer"].maxval
    (-0.25, 0.25)
    """
    initializer = check.choice("initializer", initializer, INITIALIZERS)
    units = check.positive_int("units", units)
    if initializer == "keras":
        return {}
    bound = 1.0 / units ** 0.5

    def uniform():
        return keras.initializers.RandomUniform(-bound, bound)

    return dict(kernel_initializer=uniform(),
                recurrent_initializer=uniform(),
                bias_initializer=uniform(), unit_forget_bias=False)

def _with_forget_column(distances, forget):
    """`distances` `(batch, time, 2)` with column `DISTANCE_FORGET`
    replaced by `forget` `(batch, time)`."""
    columns = [distances[..., k] for k in range(2)]
    columns[DISTANCE_FORGET] = ops.cast(forget, distances.dtype)
    return ops.stack(columns, axis=-1)


# Every default is `ModelConfig`'s (the paper's), written once there.
_DEFAULT = ModelConfig()


@keras.saving.register_keras_serializable(package="on_lstm_keras")
class ONLSTMLanguageModel(keras.Model):
    """Embedding → N stacked ON-LSTM layers → tied softmax (Shen et al. 2019).

    The regularisers are AWD-LSTM's (Merity et al. 2018), as the paper's
    official code uses them: embedding dropout on whole word rows, locked
    (variational) dropout — one mask per sequence, shared by every time
    step — on the embeddings, between layers and on the last layer's
    output, and DropConnect on every recurrent kernel. With tied weights
    the last layer has `embedding_size` units and the output layer is the
    transposed embedding matrix plus a bias.

    Token id 0 is padding: it is masked, so padded steps leave the
    recurrent state untouched and get distance 0.

    A stateful model keeps its recurrent states in non-trainable variables
    of its own (created by `build_for(batch_size)`), which it passes to its
    layers as initial states and updates after every call. Unlike Keras'
    `stateful=True` RNN layers, this carries the state under every backend's
    `fit`, JAX's included.

    `recurrent="lstm"` builds the LSTM comparison, of the same size, through
    the same code path: each layer is an `ONLSTM` with a single level
    (`chunk_size=units`) and `master_input="reverse_cumsum"`, for which both
    master gates are constantly 1 and the update is exactly the LSTM's
    `c = f∘c₋₁ + i∘ĉ` (the tests check this against `keras.layers.LSTM`).
    The same dropouts and DropConnect apply, so the comparison is fair.
    Its master gates being constant, its master-forget distance is 0 at
    every step and every split a tie (the parser would give exactly the
    right-branching tree); so its distances carry, in column
    `DISTANCE_FORGET`, the ordinary forget gate's `1 − mean(f_t)` instead
    (`ONLSTM.forget_gate_distances`, the proxy of Dyer, Melis and Blunsom
    2019), which the parser reads as it reads an ON-LSTM's `d_f`.

    The architecture arguments are the fields of `ModelConfig` (the
    defaults are its, the paper's); `from_model_config` builds the model
    from one.

    Args:
        vocab_size: Number of words, padding included.
        embedding_size: Embedding size (paper: 400).
        hidden_size: Units of every layer but the last (paper: 1150).
        num_layers: Number of recurrent layers (paper: 3).
        chunk_size: Master-gate chunk size (paper: 10); must divide every
            layer's size.
        recurrent: `"onlstm"` (default) or `"lstm"` (the LSTM comparison).
        master_input: The ON-LSTM master input gate, `"cumax"` (paper) or
            `"reverse_cumsum"`.
        input_dropout: Locked dropout on the embeddings (AWD `dropouti`,
            paper 0.5).
        layer_dropout: Locked dropout between layers (`dropouth`, 0.3).
        output_dropout: Locked dropout on the last layer's output
            (`dropout`, 0.45).
        embedding_dropout: Word-row dropout of the embedding (`dropoute`,
            0.1).
        recurrent_dropconnect: DropConnect rate of the recurrent kernels
            (`wdrop`, 0.45).
        tie_weights: Share the embedding with the output layer (default).
        direction: `"forward"` (default), or `"backward"` for a model
            trained on reversed sentences. The model itself reads its tokens
            as given; the parser (`parsing.model_parser`) reverses each
            sentence for a backward model and reads its distances back in
            input order.
        initializer: How the recurrent layers' weights are drawn:
            `"keras"` (default: `ONLSTM`'s own defaults, Keras' LSTM ones:
            Glorot-uniform kernels, orthogonal recurrent kernels, zero
            bias with the forget gate's at 1) or `"uniform"` (PyTorch's
            `nn.LSTM` default, as AWD-LSTM gets it: every kernel, recurrent
            kernel and bias from U(-1/sqrt(units), 1/sqrt(units)) of its
            layer's `units`, no forget-gate offset); see
            `recurrent_initializers`. The embedding and the softmax are
            drawn the same way with either.
        stateful: Carry the recurrent state from batch to batch (truncated
            BPTT); needs a fixed batch size (build with `build_for`).
        seed: Random seed of every dropout.

    Call arguments:
        tokens: Integer tensor `(batch, time)`.
        training: Whether dropout applies.
        return_distances: If `True`, also return the distances of every
            layer, `(batch, num_layers, time, 2)`: `[d_f, d_i]` per step
            (for `recurrent="lstm"`, `d_f` is `1 − mean(f_t)`, see above).

    Example:

    >>> import numpy as np
    >>> model = ONLSTMLanguageModel(50, embedding_size=8, hidden_size=12,
    ...                             num_layers=2, chunk_size=4)
    >>> logits, distances = model(np.ones((2, 5), "int32"),
    ...                           return_distances=True)
    >>> tuple(logits.shape), tuple(distances.shape)
    ((2, 5, 50), (2, 2, 5, 2))
    """

    def __init__(
        self,
        vocab_size,
        embedding_size=_DEFAULT.embedding_size,
        hidden_size=_DEFAULT.hidden_size,
        num_layers=_DEFAULT.num_layers,
        chunk_size=_DEFAULT.chunk_size,
        recurrent=_DEFAULT.recurrent,
        master_input=_DEFAULT.master_input,
        input_dropout=_DEFAULT.input_dropout,
        layer_dropout=_DEFAULT.layer_dropout,
        output_dropout=_DEFAULT.output_dropout,
        embedding_dropout=_DEFAULT.embedding_dropout,
        recurrent_dropconnect=_DEFAULT.recurrent_dropconnect,
        tie_weights=_DEFAULT.tie_weights,
        direction=_DEFAULT.direction,
        initializer=_DEFAULT.initializer,
        stateful=False,
        seed=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.vocab_size = check.positive_int("vocab_size", vocab_size)
        # The config checks every argument, by its name.
        config = ModelConfig(
            embedding_size=embedding_size, hidden_size=hidden_size,
            num_layers=num_layers, chunk_size=chunk_size,
            recurrent=recurrent, master_input=master_input,
            input_dropout=input_dropout, layer_dropout=layer_dropout,
            output_dropout=output_dropout,
            embedding_dropout=embedding_dropout,
            recurrent_dropconnect=recurrent_dropconnect,
            tie_weights=bool(tie_weights), direction=direction,
            initializer=initializer,
        )
        self.model_config = config
        self.embedding_size = config.embedding_size
        self.hidden_size = config.hidden_size
        self.num_layers = config.num_layers
        self.chunk_size = config.chunk_size
        self.recurrent = config.recurrent
        self.master_input = config.master_input
        self.input_dropout = config.input_dropout
        self.layer_dropout = config.layer_dropout
        self.output_dropout = config.output_dropout
        self.embedding_dropout = config.embedding_dropout
        self.recurrent_dropconnect = config.recurrent_dropconnect
        self.tie_weights = config.tie_weights
        self.direction = config.direction
        self.initializer = config.initializer
        self.stateful = bool(stateful)
        self.seed = seed
        self.layer_sizes = config.layer_sizes
        self._make_layers()
        self.state_variables = None

    def _make_layers(self):
        """The embedding, the locked dropouts, the recurrent layers and the
        output layer (or, with tied weights, its bias), in this order: the
        order of the weights and of the dropouts' seed generators."""
        self.embedding = WordDropoutEmbedding(
            self.vocab_size,
            self.embedding_size,
            word_dropout=self.embedding_dropout,
            mask_zero=True,
            embeddings_initializer=keras.initializers.RandomUniform(-0.1, 0.1),
            seed=self._seed(0),
            name="embedding",
        )
        self.locked_dropouts = self._locked_dropouts()
        self.rnn_layers = [
            self._recurrent_layer(k, size)
            for k, size in enumerate(self.layer_sizes)
        ]
        if self.tie_weights:
            self.decoder = None
            self.output_bias = self.add_weight(
                shape=(self.vocab_size,), initializer="zeros",
                name="output_bias",
            )
        else:
            self.decoder = keras.layers.Dense(self.vocab_size, name="decoder")

    def _seed(self, offset):
        """The seed of the sublayer at `offset` (`None` if `seed` is)."""
        return None if self.seed is None else self.seed + offset

    def _locked_dropouts(self):
        """The locked dropouts: on the embeddings, after every layer but
        the last, and on the last layer's output (one mask per sequence,
        shared by every time step)."""
        rates_and_sizes = (
            [(self.input_dropout, self.embedding_size)]
            + [(self.layer_dropout, size) for size in self.layer_sizes[:-1]]
            + [(self.output_dropout, self.layer_sizes[-1])]
        )
        return [
            keras.layers.Dropout(
                rate,
                noise_shape=(None, 1, size),
                seed=self._seed(1 + k),
                name=f"locked_dropout_{k}",
            )
            for k, (rate, size) in enumerate(rates_and_sizes)
        ]

    def _recurrent_layer(self, k, size):
        """The `k`-th recurrent layer, of `size` units: an ON-LSTM, or for
        the LSTM comparison an `ONLSTM` whose master gates are always 1
        (one chunk, `"reverse_cumsum"`)."""
        if self.recurrent == "onlstm":
            chunk_size, master_input = self.chunk_size, self.master_input
        else:
            chunk_size, master_input = size, "reverse_cumsum"
        return ONLSTM(
            units=size,
            chunk_size=chunk_size,
            master_input=master_input,
            recurrent_dropconnect=self.recurrent_dropconnect,
            return_sequences=True,
            return_distances=True,
            return_state=True,
            seed=self._seed(100 + k),
            name=f"{self.recurrent}_{k}",
            **recurrent_initializers(self.initializer, size),
        )

    def call(self, tokens, training=False, return_distances=False):
        x, distances = self._recurrent_stack(tokens, training,
                                             return_distances)
        if self.tie_weights:
            embeddings = ops.cast(self.embedding.embeddings, x.dtype)
            logits = ops.matmul(x, ops.transpose(embeddings))
            logits = logits + ops.cast(self.output_bias, x.dtype)
        else:
            logits = self.decoder(x)
        if return_distances:
            return logits, ops.stack(distances, axis=1)
        return logits

    def distances(self, tokens, training=False):
        """The master-gate distances of every layer, without the output
        layer (the parser's reading: no `vocab_size` logits to compute);
        for `recurrent="lstm"`, the forget gate's `1 − mean(f_t)` in
        column `DISTANCE_FORGET` (see the class).

        Args:
            tokens: `(batch, time)` integer word ids, 0 for padding.
            training: Whether the dropouts apply.

        Returns:
            `(batch, layers, time, 2)`, as the second output of
            `call(tokens, return_distances=True)`.
        """
        return ops.stack(self._recurrent_stack(tokens, training)[1], axis=1)

    def _recurrent_stack(self, tokens, training, with_distances=True):
        """The last recurrent layer's output and the list of each layer's
        distances (stacked only by the callers that return them). For the
        LSTM comparison, column `DISTANCE_FORGET` holds the forget-gate
        distance (`ONLSTM.forget_gate_distances`), computed only
        `with_distances`."""
        mask = ops.not_equal(tokens, 0)
        x = self.embedding(tokens, training=training)
        x = self.locked_dropouts[0](x, training=training)
        distances = []
        for k, rnn in enumerate(self.rnn_layers):
            carried = None
            if self.state_variables is not None:
                carried = [ops.convert_to_tensor(v) for v in self.state_variables[k]]
            layer_input = x
            x, d, h, c = rnn(
                x, mask=mask, initial_state=carried, training=training
            )
            if self.state_variables is not None:
                for variable, value in zip(self.state_variables[k], (h, c)):
                    variable.assign(ops.cast(value, variable.dtype))
            if self.recurrent == "lstm" and with_distances:
                d = _with_forget_column(d, rnn.forget_gate_distances(
                    layer_input, x, mask=mask, initial_state=carried))
            distances.append(d)
            x = self.locked_dropouts[k + 1](x, training=training)
        return x, distances

    def reset_rnn_states(self):
        """Zeroes the carried states of a stateful model."""
        for pair in self.state_variables or ():
            for variable in pair:
                variable.assign(ops.zeros(variable.shape, variable.dtype))

    def build_for(self, batch_size):
        """Creates the weights (and, if stateful, the states) for a batch size.

        A stateful model must know its batch size before `fit`; a model that
        is not stateful can skip this.
        """
        batch_size = check.positive_int("batch_size", batch_size)
        replicas = num_replicas()
        if batch_size % replicas:
            raise ValueError(
                f"Argument `batch_size` must be a multiple of the {replicas} "
                f"data-parallel replicas, received: batch_size={batch_size}"
            )
        rows = batch_size // replicas
        if self.stateful and self.state_variables is None:
            # One state per replica for its own rows of every batch.
            sync = "on_read" if replicas > 1 else "auto"
            self.state_variables = []
            for k, size in enumerate(self.layer_sizes):
                pair = [
                    keras.Variable(
                        ops.zeros((rows, size), dtype=self.variable_dtype),
                        trainable=False,
                        synchronization=sync,
                        aggregation="only_first_replica",
                        name=f"{name}_{k}",
                    )
                    for name in ("carried_h", "carried_c")
                ]
                self.state_variables.append(pair)
        self(ops.ones((rows, 1), dtype="int32"))
        self.reset_rnn_states()
        return self

    def copy_weights_from(self, other):
        """Takes the trainable weights of a model of the same architecture
        (whatever its batch size or carried states).

        The values are copied, not shared: a backend that donates buffers
        to its compiled steps (JAX) may free the source's arrays.
        """
        for target, source in zip(self.trainable_weights, other.trainable_weights):
            target.assign(ops.copy(source.value))

    def clone(self, stateful=None, batch_size=1, **overrides):
        """A copy with the same weights, e.g. stateless for parsing or with
        another batch size for evaluation.

        Args:
            stateful: Override `stateful`; default: unchanged.
            batch_size: Batch size to build the copy for.
            **overrides: Other constructor arguments to change (dropout rates,
                say; sizes must stay).
        """
        config = self.get_config()
        if stateful is not None:
            config["stateful"] = stateful
        config.update(overrides)
        config.pop("name", None)
        copy = type(self).from_config(config)
        copy.build_for(batch_size)
        copy.copy_weights_from(self)
        return copy

    def get_config(self):
        return {
            **super().get_config(),
            "vocab_size": self.vocab_size,
            "embedding_size": self.embedding_size,
            "hidden_size": self.hidden_size,
            "num_layers": self.num_layers,
            "chunk_size": self.chunk_size,
            "recurrent": self.recurrent,
            "master_input": self.master_input,
            "input_dropout": self.input_dropout,
            "layer_dropout": self.layer_dropout,
            "output_dropout": self.output_dropout,
            "embedding_dropout": self.embedding_dropout,
            "recurrent_dropconnect": self.recurrent_dropconnect,
            "tie_weights": self.tie_weights,
            "direction": self.direction,
            "initializer": self.initializer,
            "stateful": self.stateful,
            "seed": self.seed,
        }

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config.pop("trainable", None)
        return cls(**config)

    @classmethod
    def from_model_config(cls, model_config, vocab_size, *, stateful=False,
                          seed=None, name=None):
        """A model with the architecture of a `ModelConfig`.

        Args:
            model_config: A `ModelConfig`.
            vocab_size: Number of words, padding included.
            stateful: Carry the recurrent state from batch to batch.
            seed: Random seed of every dropout.
            name: The model's name (default: Keras').

        Example:

        >>> from on_lstm_keras.config import PRESETS
        >>> model = ONLSTMLanguageModel.from_model_config(
        ...     PRESETS["small"][0], vocab_size=100)
        >>> model.layer_sizes
        [256, 256, 256]
        """
        if not isinstance(model_config, ModelConfig):
            raise ValueError(
                "Argument `model_config` must be a `ModelConfig`, received: "
                f"model_config={model_config!r}"
            )
        return cls(
            vocab_size,
            embedding_size=model_config.embedding_size,
            hidden_size=model_config.hidden_size,
            num_layers=model_config.num_layers,
            chunk_size=model_config.chunk_size,
            recurrent=model_config.recurrent,
            master_input=model_config.master_input,
            input_dropout=model_config.input_dropout,
            layer_dropout=model_config.layer_dropout,
            output_dropout=model_config.output_dropout,
            embedding_dropout=model_config.embedding_dropout,
            recurrent_dropconnect=model_config.recurrent_dropconnect,
            tie_weights=model_config.tie_weights,
            direction=model_config.direction,
            initializer=model_config.initializer,
            stateful=stateful,
            seed=seed,
            name=name,
        )
