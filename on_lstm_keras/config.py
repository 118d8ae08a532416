"""The settings of a language-model run, typed: `ModelConfig` (the network)
and `TrainingConfig` (how it is trained), with the paper's defaults.

Each default is written once, here: `ONLSTMLanguageModel`,
`train_language_model`, `make_optimizer`, `workflow.train` and the flags of
`on-lstm train` take theirs from these fields. `PRESETS` names complete
pairs of configs; a run's `run.json` stores both (`to_dict`), and
`configs_of_run` reads them back, from files written by older versions too.

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


def _field(default, help, kind, flag=None, none=None, cli=True, **more):
    """A dataclass field with what the command line needs to know of it.

    Args:
        default: The default value.
        help: One line for `--help`.
        kind: How a value is checked (and parsed from a flag):
            `"positive_int"`, `"non_negative_int"`, `"rate"` (in [0, 1)),
            `"positive_float"`, `"bool"`, `"choice"` (with `choices=`), or
            `"str"`.
        flag: The command-line spelling; default `--name-with-dashes`.
        none: What `None` means, for a field that may be `None`.
        cli: Whether `on-lstm train` has a flag for it.
        **more: `choices`, `minimum` (an int kind's smallest value).
    """
    metadata = dict(help=help, kind=kind, flag=flag, none=none, cli=cli, **more)
    return dataclasses.field(default=default, metadata=metadata)


def _check_field(field, value):
    """`value` checked (and normalised: ints to floats) for `field`."""
    meta = field.metadata
    name, kind = field.name, meta["kind"]
    if value is None and meta.get("none") is not None:
        return None
    if kind == "positive_int":
        value = check.positive_int(name, value)
        minimum = meta.get("minimum", 1)
        if value < minimum:
            raise ValueError(
                f"Argument `{name}` must be at least {minimum}"
                f"{meta.get('why', '')}, received: {name}={value!r}"
            )
        return value
    if kind == "non_negative_int":
        return check.non_negative_int(name, value)
    if kind == "rate":
        return check.rate(name, value)
    if kind == "positive_float":
        return check.positive_float(name, value)
    if kind == "non_negative_float":
        return check.non_negative_float(name, value)
    if kind == "bool":
        return check.boolean(name, value)
    if kind == "choice":
        return check.choice(name, value, meta["choices"])
    if not isinstance(value, str):
        raise ValueError(
            f"Argument `{name}` must be a string, received: {name}={value!r}"
        )
    return value


class _Config:
    """What both configs share: checks, and dict conversion."""

    # Old spellings of fields, accepted by `from_dict`.
    _OLD_NAMES = {}

    def __post_init__(self):
        for field in dataclasses.fields(self):
            value = _check_field(field, getattr(self, field.name))
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
        data = {cls._OLD_NAMES.get(k, k): v for k, v in dict(data).items()}
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
        recurrent: `"onlstm"`, or `"lstm"` for the same-size LSTM baseline.
        master_input: The ON-LSTM master input gate, `"cumax"` (paper) or
            `"reverse_cumsum"`.
        input_dropout: Locked dropout on the embeddings (AWD `dropouti`).
        layer_dropout: Locked dropout between layers (`dropouth`).
        output_dropout: Locked dropout on the last layer's output
            (`dropout`).
        embedding_dropout: Word-row dropout of the embedding (`dropoute`).
        recurrent_dropconnect: DropConnect rate of the recurrent kernels (`wdrop`).
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

    embedding_size: int = _field(400, "embedding size", "positive_int")
    hidden_size: int = _field(
        1150, "units of every layer but the last", "positive_int")
    num_layers: int = _field(
        3, "number of recurrent layers", "positive_int", flag="--layers")
    chunk_size: int = _field(
        10, "master-gate chunk size; must divide every layer size",
        "positive_int")
    recurrent: str = _field(
        "onlstm", "recurrent layers: onlstm, or lstm (the baseline)",
        "choice", choices=RECURRENT_KINDS, cli=False)
    master_input: str = _field(
        "cumax", "master input gate (cumax or reverse_cumsum)", "str",
        cli=False)
    input_dropout: float = _field(
        0.5, "locked dropout on the embeddings", "rate")
    layer_dropout: float = _field(
        0.3, "locked dropout between layers", "rate")
    output_dropout: float = _field(
        0.45, "locked dropout on the last layer's output", "rate")
    embedding_dropout: float = _field(
        0.1, "dropout of whole embedding rows (words)", "rate")
    recurrent_dropconnect: float = _field(
        0.45, "DropConnect on the recurrent kernels", "rate")
    tie_weights: bool = _field(
        True, "share the embedding with the softmax", "bool")
    direction: str = _field(
        "forward", "reading direction: forward, or backward (a model of "
        "reversed sentences)", "choice", choices=MODEL_DIRECTIONS, cli=False)
    initializer: str = _field(
        "keras", "initial weights of the recurrent layers: keras (Glorot, "
        "orthogonal, forget bias 1) or uniform (PyTorch's nn.LSTM: "
        "U(+-1/sqrt(units)))", "choice", choices=INITIALIZERS)

    _OLD_NAMES = {"cell": "recurrent"}

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
        xla: Compile the training and evaluation steps with XLA (Keras'
            `jit_compile=True`). On TensorFlow without a GPU, Keras does not
            use XLA by default. With it a training step of the `small`
            preset took 432 ms instead of 571 ms in a loop of
            `train_on_batch` on a 2-core CPU, but inside `fit` only about
            0.49 s instead of 0.53 s (the kernel's page faults, not the
            arithmetic, were the rest: see `train_runs(side_by_side=)`).
            JAX always compiles with XLA, so this changes nothing there.
            The dropout masks XLA draws are not those TensorFlow draws
            without it, so a run resumed with the other setting is refused.
            Configs written before this field load as `False`.
    """

    batch_size: int = _field(20, "rows of the training stream read in parallel",
                             "positive_int")
    bptt: int = _field(70, "truncated-BPTT window length", "positive_int")
    epochs: int = _field(1, "total number of epochs", "positive_int")
    optimizer: str = _field("sgd", "optimizer", "choice", choices=OPTIMIZERS)
    learning_rate: float = _field(
        None, "learning rate", "positive_float", flag="--lr",
        none="the optimizer's: " + ", ".join(
            f"{k} {v:g}" for k, v in DEFAULT_LEARNING_RATES.items()))
    clipnorm: float = _field(
        0.25, "gradient-norm clipping", "positive_float", flag="--clip",
        none="no clipping")
    weight_decay: float = _field(
        1.2e-6, "L2 weight decay", "non_negative_float", none="none")
    eval_batch_size: int = _field(
        10, "rows of the validation and test streams", "positive_int")
    variable_length: bool = _field(
        False, "AWD-LSTM's random BPTT window lengths", "bool",
        flag="--variable-bptt")
    min_count: int = _field(
        1, "keep words seen at least this many times", "positive_int")
    max_vocab: int = _field(
        None, "vocabulary size cap, 3 special tokens included",
        "positive_int", minimum=MIN_VOCAB,
        why=" (3 special tokens and a word)", none="no cap")
    seed: int = _field(
        0, "seed of the weights, dropout, windows and corpus split",
        "non_negative_int")
    warmup_steps: int = _field(
        0, "linear learning-rate warm-up over this many optimizer steps "
        "(0: none)", "non_negative_int")
    xla: bool = _field(
        False, "compile training and evaluation with XLA (TensorFlow; JAX "
        "always does)", "bool")

    @property
    def optimizer_learning_rate(self):
        """`learning_rate`, or the optimizer's default if it is `None`."""
        if self.learning_rate is None:
            return DEFAULT_LEARNING_RATES[self.optimizer]
        return self.learning_rate


PRESETS = {
    # Both reading directions (two models), 5 epochs each, on the default
    # Chinese corpus: aimed at 20 minutes on 2 idle CPU cores, with XLA and
    # the two models side by side (README, Results: 2 epochs took 22.4 min
    # on the slower of the two machines measured, 7.7 on the faster; the
    # backward model's trees kept improving to epoch 5 there, the forward
    # model's did not).
    # Untied: with Adam and a few epochs, tying the softmax to the
    # embedding slowed learning a lot (README, "Choices").
    "small": (
        ModelConfig(embedding_size=128, hidden_size=256, num_layers=3,
                    chunk_size=8, input_dropout=0.2, layer_dropout=0.2,
                    output_dropout=0.3, embedding_dropout=0.05,
                    recurrent_dropconnect=0.2, tie_weights=False),
        TrainingConfig(batch_size=32, bptt=35, epochs=5, optimizer="adam",
                       min_count=3, max_vocab=10000, xla=True),
    ),
    # PTB on 2 CPU cores: both directions in about an hour. The paper's
    # SGD at lr 30: with Adam (lr 0.002) the same model reached a little
    # lower perplexity but worse trees (README, PTB section: WSJ10-style
    # dev sentence F1 of the recipe's default 56.7 with Adam, 57.8 with
    # SGD; at all lengths 4 points below right-branching with Adam, 6
    # above with SGD).
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


def check_setting_names(settings):
    """`settings` with old names replaced (`cell`: `recurrent`); raises a
    `TypeError` for a key that is a field of neither config."""
    settings = {ModelConfig._OLD_NAMES.get(k, k): v for k, v in settings.items()}
    unknown = (set(settings) - set(ModelConfig.field_names())
               - set(TrainingConfig.field_names()))
    if unknown:
        raise TypeError(f"Unknown settings: {sorted(unknown)}")
    return settings


def split_settings(settings, model=None, training=None):
    """Flat keyword settings (`hidden_size=...`, `epochs=...`) applied to
    a pair of configs.

    Args:
        settings: A dict whose keys are fields of either config (`cell` is
            the old name of `recurrent`).
        model, training: The configs to change; default: the defaults.

    Returns:
        `(ModelConfig, TrainingConfig)`.

    Raises:
        TypeError: A key is a field of neither.
        ValueError: A value is bad (the message names it).
    """
    settings = check_setting_names(settings)
    model_keys = set(ModelConfig.field_names())
    training_keys = set(TrainingConfig.field_names())
    model = dataclasses.replace(
        model or ModelConfig(),
        **{k: v for k, v in settings.items() if k in model_keys})
    training = dataclasses.replace(
        training or TrainingConfig(),
        **{k: v for k, v in settings.items() if k in training_keys})
    return model, training


def flat_settings(model, training):
    """Both configs as one flat dict (the inverse of `split_settings`)."""
    return {**model.to_dict(), **training.to_dict()}


def configs_of_run(info):
    """The `(ModelConfig, TrainingConfig)` recorded in a run's `run.json`.

    Reads both layouts: this version's (`"model"` holds `recurrent`) and
    the older one (the kind of layers in a top-level `"cell"`).

    Raises:
        ValueError: A recorded setting is unknown or bad.
    """
    model = dict(info.get("model") or {})
    if "recurrent" not in model and "cell" not in model and "cell" in info:
        model["recurrent"] = info["cell"]
    return (ModelConfig.from_dict(model),
            TrainingConfig.from_dict(info.get("training") or {}))
