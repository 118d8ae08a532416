"""The settings of a language-model run, typed: `ModelConfig` (the network)
and `TrainingConfig` (how it is trained), with the paper's defaults.

Each default is written once, here: `ONLSTMLanguageModel`,
`train_language_model`, `make_optimizer`, `runs.train` and the flags of
`on-lstm train` take theirs from these fields. `PRESETS` names complete
pairs of configs; a run's `run.json` stores both (`to_dict`), and
`runs.recorded_configs` reads them back (`from_dict`).

Both classes are frozen dataclasses: make a changed copy with
`dataclasses.replace(config, hidden_size=512)` (checked again). Every field
is checked when a config is made; a bad value raises a `ValueError` that
names the field and the value received.

Example:

>>> model, training = PRESETS["small"]
>>> model.hidden_size, training.optimizer
(256, 'adam')
>>> ModelConfig.from_dict(model.to_dict()) == model
True
>>> ModelConfig(hidden_size=12, chunk_size=5, embedding_size=10)
Traceback (most recent call last):
...
ValueError: Argument `chunk_size` must divide every layer size [10, 12], received: chunk_size=5
"""

import dataclasses

from on_lstm_keras.utils import validation as check

__all__ = [
    "DEFAULT_LEARNING_RATES",
    "DEFAULT_PRESET",
    "INITIALIZERS",
    "MIN_VOCAB",
    "MODEL_DIRECTIONS",
    "OPTIMIZERS",
    "PRESETS",
    "RECURRENT_KINDS",
    "ModelConfig",
    "TrainingConfig",
]

RECURRENT_KINDS = ("onlstm", "lstm")
# The order a language model reads a sentence in: "backward" is a model
# trained on reversed sentences (its distances are read back in input order
# by `parsing.model_parser`).
MODEL_DIRECTIONS = ("forward", "backward")
OPTIMIZERS = ("sgd", "adam")
# How the recurrent layers' weights are drawn: "keras" is Keras' LSTM
# default (Glorot-uniform kernels, orthogonal recurrent kernels, zero bias
# with the forget gate's at 1); "uniform" is PyTorch's `nn.LSTM` default,
# which AWD-LSTM's code gets: every kernel, recurrent kernel and bias from
# U(-1/sqrt(units), 1/sqrt(units)).
INITIALIZERS = ("keras", "uniform")
# The learning rate an optimizer gets when `learning_rate` is `None`: the
# paper's for SGD, and Adam's usual one for these models.
DEFAULT_LEARNING_RATES = {"sgd": 30.0, "adam": 2e-3}
# The smallest vocabulary: the 3 special tokens (`data.vocabulary.SPECIALS`)
# and a word.
MIN_VOCAB = 4


def _kind(kind, choices=None, minimum=1, why="", nullable=False):
    """How a field's value is checked.

    Args:
        kind: `"positive_int"`, `"non_negative_int"`, `"rate"` (in [0, 1)),
            `"positive_float"`, `"non_negative_float"`, `"bool"`, `"choice"`
            (with `choices`), or `"str"`.
        choices: The values of a `"choice"`.
        minimum: The smallest value of a `"positive_int"`.
        why: Why the minimum, for the message.
        nullable: Whether `None` is a value.
    """
    return dict(kind=kind, choices=choices, minimum=minimum, why=why,
                nullable=nullable)


def _check_field(name, value, kind):
    """`value` checked (and normalised: ints to floats) for field `name`
    of `kind` (from `_kind`)."""
    if value is None and kind["nullable"]:
        return None
    if kind["kind"] == "positive_int":
        value = check.positive_int(name, value)
        if value < kind["minimum"]:
            raise ValueError(
                f"Argument `{name}` must be at least {kind['minimum']}"
                f"{kind['why']}, received: {name}={value!r}"
            )
        return value
    checks = {"non_negative_int": check.non_negative_int, "rate": check.rate,
              "positive_float": check.positive_float,
              "non_negative_float": check.non_negative_float,
              "bool": check.boolean}
    if kind["kind"] in checks:
        return checks[kind["kind"]](name, value)
    if kind["kind"] == "choice":
        return check.choice(name, value, kind["choices"])
    if not isinstance(value, str):
        raise ValueError(
            f"Argument `{name}` must be a string, received: {name}={value!r}"
        )
    return value


class _Config:
    """What both configs share: checks, and dict conversion."""

    # How each field is checked: `{name: _kind(...)}`.
    _KINDS = {}

    def __post_init__(self):
        for field in dataclasses.fields(self):
            value = _check_field(field.name, getattr(self, field.name),
                                 self._KINDS[field.name])
            object.__setattr__(self, field.name, value)

    @classmethod
    def field_names(cls):
        """The names of the fields, in order."""
        return tuple(f.name for f in dataclasses.fields(cls))

    def to_dict(self):
        """The fields as a dict of JSON values (for `run.json`)."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data):
        """A config from `to_dict`'s output, or a part of it (the other
        fields keep their defaults).

        Raises:
            ValueError: A key is not a field (the message names it), or a
                value is bad.
        """
        data = dict(data)
        unknown = sorted(set(data) - set(cls.field_names()))
        if unknown:
            raise ValueError(
                f"{cls.__name__} has no field {', '.join(map(repr, unknown))}; "
                f"its fields are: {', '.join(cls.field_names())}"
            )
        return cls(**data)


@dataclasses.dataclass(frozen=True)
class ModelConfig(_Config):
    """The language model's architecture and regularisers (Shen et al.
    2019, with AWD-LSTM's regularisers, Merity et al. 2018); the defaults
    are the paper's PTB model.

    Args:
        embedding_size: Embedding size.
        hidden_size: Units of every layer but the last.
        num_layers: Number of recurrent layers.
        chunk_size: Master-gate chunk size; must divide every layer's size
            (the last layer has `embedding_size` units when `tie_weights`).
        recurrent: `"onlstm"`, or `"lstm"` for the same-size LSTM.
        master_input: The ON-LSTM master input gate, `"cumax"` (paper) or
            `"reverse_cumsum"`.
        input_dropout: Locked dropout on the embeddings (AWD `dropouti`).
        layer_dropout: Locked dropout between layers (`dropouth`).
        output_dropout: Locked dropout on the last layer's output
            (`dropout`).
        embedding_dropout: Word-row dropout of the embedding (`dropoute`).
        recurrent_dropconnect: DropConnect rate of the recurrent kernels
            (AWD-LSTM's `wdrop`).
        tie_weights: Share the embedding with the output layer.
        direction: The order the model reads a sentence in: `"forward"`
            (left to right), or `"backward"` for a model trained on
            reversed sentences. Configs written before this field load as
            `"forward"`.
        initializer: How the recurrent layers' weights are drawn
            (`INITIALIZERS`): `"keras"` (Keras' LSTM defaults) or
            `"uniform"` (PyTorch's `nn.LSTM` default,
            U(-1/sqrt(units), 1/sqrt(units)) for every weight). Configs
            written before this field load as `"keras"`, the weights they
            were made with.
    """

    embedding_size: int = 400
    hidden_size: int = 1150
    num_layers: int = 3
    chunk_size: int = 10
    recurrent: str = "onlstm"
    master_input: str = "cumax"
    input_dropout: float = 0.5
    layer_dropout: float = 0.3
    output_dropout: float = 0.45
    embedding_dropout: float = 0.1
    recurrent_dropconnect: float = 0.45
    tie_weights: bool = True
    direction: str = "forward"
    initializer: str = "keras"

    _KINDS = {
        "embedding_size": _kind("positive_int"),
        "hidden_size": _kind("positive_int"),
        "num_layers": _kind("positive_int"),
        "chunk_size": _kind("positive_int"),
        "recurrent": _kind("choice", choices=RECURRENT_KINDS),
        "master_input": _kind("str"),
        "input_dropout": _kind("rate"),
        "layer_dropout": _kind("rate"),
        "output_dropout": _kind("rate"),
        "embedding_dropout": _kind("rate"),
        "recurrent_dropconnect": _kind("rate"),
        "tie_weights": _kind("bool"),
        "direction": _kind("choice", choices=MODEL_DIRECTIONS),
        "initializer": _kind("choice", choices=INITIALIZERS),
    }

    def __post_init__(self):
        super().__post_init__()
        if self.recurrent == "onlstm":
            sizes = sorted(set(self.layer_sizes))
            if any(size % self.chunk_size for size in sizes):
                raise ValueError(
                    "Argument `chunk_size` must divide every layer size "
                    f"{sizes}, received: chunk_size={self.chunk_size}"
                )

    @property
    def layer_sizes(self):
        """Units of each recurrent layer, first to last."""
        last = self.embedding_size if self.tie_weights else self.hidden_size
        return [self.hidden_size] * (self.num_layers - 1) + [last]


@dataclasses.dataclass(frozen=True)
class TrainingConfig(_Config):
    """How a language model is trained and its vocabulary built; the
    defaults are the paper's (one epoch).

    Args:
        batch_size: Rows of the training stream read in parallel.
        bptt: Truncated-BPTT window length.
        epochs: Total number of epochs.
        optimizer: `"sgd"` (the paper) or `"adam"`.
        learning_rate: `None`: the optimizer's default
            (`DEFAULT_LEARNING_RATES`).
        clipnorm: Gradient-norm clipping (`None`: none).
        weight_decay: L2 weight decay (0 or `None`: none).
        eval_batch_size: Rows of the validation and test streams.
        variable_length: AWD-LSTM's random BPTT window lengths.
        min_count: Keep words seen at least this many times.
        max_vocab: Cap on the vocabulary size, 3 special tokens included
            (`None`: no cap).
        seed: Seed of the weights, the dropout masks, the windows and the
            corpus split.
        warmup_steps: Linear warm-up of the learning rate over this many
            optimizer steps, from `learning_rate / warmup_steps` to
            `learning_rate` (`models.schedules.LinearWarmup`); 0: none.
            Configs written before this field load as 0.
        lstm_warmup_steps: The `warmup_steps` of the same-size LSTM
            trained beside the model (`runs.plan_training(with_lstm=True)`).
            Without a warm-up, a three-layer LSTM trained with Adam stays
            on the unigram plateau (it predicts word frequencies only)
            where the ON-LSTM does not; with one it leaves it at once
            (`benchmarks/lstm_search.py`'s equal-budget search, see
            docs/notes/lstm-baseline.md). 0: none.
        xla: Compile the training and evaluation steps with XLA (Keras'
            `jit_compile=True`). On TensorFlow without a GPU, Keras does not
            use XLA by default; JAX always compiles with XLA, so this
            changes nothing there.
            The dropout masks XLA draws are not those TensorFlow draws
            without it, so a run resumed with the other setting is refused.
            Configs written before this field load as `False`.
    """

    batch_size: int = 20
    bptt: int = 70
    epochs: int = 1
    optimizer: str = "sgd"
    learning_rate: float = None
    clipnorm: float = 0.25
    weight_decay: float = 1.2e-6
    eval_batch_size: int = 10
    variable_length: bool = False
    min_count: int = 1
    max_vocab: int = None
    seed: int = 0
    warmup_steps: int = 0
    lstm_warmup_steps: int = 500
    xla: bool = False

    _KINDS = {
        "batch_size": _kind("positive_int"),
        "bptt": _kind("positive_int"),
        "epochs": _kind("positive_int"),
        "optimizer": _kind("choice", choices=OPTIMIZERS),
        "learning_rate": _kind("positive_float", nullable=True),
        "clipnorm": _kind("positive_float", nullable=True),
        "weight_decay": _kind("non_negative_float", nullable=True),
        "eval_batch_size": _kind("positive_int"),
        "variable_length": _kind("bool"),
        "min_count": _kind("positive_int"),
        "max_vocab": _kind("positive_int", minimum=MIN_VOCAB, nullable=True,
                           why=" (3 special tokens and a word)"),
        "seed": _kind("non_negative_int"),
        "warmup_steps": _kind("non_negative_int"),
        "lstm_warmup_steps": _kind("non_negative_int"),
        "xla": _kind("bool"),
    }

    @property
    def optimizer_learning_rate(self):
        """`learning_rate`, or the optimizer's default if it is `None`."""
        if self.learning_rate is None:
            return DEFAULT_LEARNING_RATES[self.optimizer]
        return self.learning_rate


PRESETS = {
    # Both reading directions (two models), 5 epochs each, on the default
    # Chinese corpus, sized for a CPU with the two models side by side.
    # Untied: with Adam and a few epochs, tying the softmax to the
    # embedding slowed learning a lot.
    "small": (
        ModelConfig(embedding_size=128, hidden_size=256, num_layers=3,
                    chunk_size=8, input_dropout=0.2, layer_dropout=0.2,
                    output_dropout=0.3, embedding_dropout=0.05,
                    recurrent_dropconnect=0.2, tie_weights=False),
        TrainingConfig(batch_size=32, bptt=35, epochs=5, optimizer="adam",
                       min_count=3, max_vocab=10000, xla=True),
    ),
    # PTB on a CPU, both directions. The paper's SGD at lr 30: with Adam
    # (lr 0.002) the same model reached a little lower perplexity but worse
    # trees.
    "ptb-cpu": (
        ModelConfig(embedding_size=200, hidden_size=400, num_layers=3,
                    chunk_size=10, input_dropout=0.3, layer_dropout=0.2,
                    output_dropout=0.3, embedding_dropout=0.05,
                    recurrent_dropconnect=0.2, tie_weights=False),
        TrainingConfig(batch_size=20, bptt=35, epochs=5, optimizer="sgd",
                       learning_rate=30.0, min_count=1, max_vocab=None,
                       xla=True),
    ),
    # The paper's PTB model (Shen et al. 2019; AWD-LSTM settings).
    "paper": (
        ModelConfig(),
        TrainingConfig(epochs=1000, learning_rate=30.0),
    ),
}
DEFAULT_PRESET = "small"
