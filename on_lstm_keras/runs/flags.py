"""The command-line flags of the two configs: one flag a field, and the
configs they give.

`add_config_arguments` adds a flag for each field of `ModelConfig` and
`TrainingConfig` that a user sets (all but `recurrent`, `master_input` and
`direction`, which a training plan sets), default `None`: a flag not given
leaves the field of the base configs (a preset's, or a resumed run's).
`configs_from_args` builds the configs from them, field by field.
"""

import argparse
import math

from on_lstm_keras.config import DEFAULT_PRESET
from on_lstm_keras.config import INITIALIZERS
from on_lstm_keras.config import MIN_VOCAB
from on_lstm_keras.config import OPTIMIZERS
from on_lstm_keras.config import PRESETS
from on_lstm_keras.config import ModelConfig
from on_lstm_keras.config import TrainingConfig


def int_at_least(minimum):
    """An argparse `type`: an integer >= `minimum`; argparse's message names
    the flag."""
    def parse(text):
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"must be an integer, received {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(
                f"must be an integer >= {minimum}, received {value}")
        return value
    return parse


def float_in(low, high=math.inf, low_open=True, high_open=True):
    """An argparse `type`: a float in the given interval (finite)."""
    def parse(text):
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"must be a number, received {text!r}") from None
        ok = (math.isfinite(value)
              and (value > low if low_open else value >= low)
              and (value < high if high_open else value <= high))
        if not ok:
            where = (f"{'>' if low_open else '>='} {low:g}"
                     if high == math.inf else
                     f"in {'(' if low_open else '['}{low:g}, {high:g}"
                     f"{')' if high_open else ']'}")
            raise argparse.ArgumentTypeError(
                f"must be a finite number {where}, received {text!r}")
        return value
    return parse


POSITIVE = int_at_least(1)
NON_NEGATIVE = int_at_least(0)
RATE = float_in(0.0, 1.0, low_open=False)
POSITIVE_FLOAT = float_in(0.0)
NON_NEGATIVE_FLOAT = float_in(0.0, low_open=False)


def _shown(value, none):
    if value is None:
        return none
    if isinstance(value, bool):
        return "on" if value else "off"
    return f"{value:g}" if isinstance(value, float) else str(value)


def by_preset(value_of, none=None):
    """`(default: ...)` for a flag's help: the value each preset gives.

    Args:
        value_of: The value, from a preset's `(ModelConfig,
            TrainingConfig)`.
        none: What `None` means, for a field that may be `None`.
    """
    values = {name: value_of(*pair) for name, pair in PRESETS.items()}
    if len(set(map(repr, values.values()))) == 1:
        return (f"(default: {_shown(values[DEFAULT_PRESET], none)}, every "
                "preset)")
    return "(default: the --preset's: " + ", ".join(
        f"{name} {_shown(value, none)}" for name, value in values.items()
    ) + ")"


def add_model_arguments(group):
    """The flags of `ModelConfig`'s fields."""
    group.add_argument(
        "--embedding-size", dest="embedding_size", type=POSITIVE,
        metavar="EMBEDDING_SIZE", default=None, help="embedding size "
        + by_preset(lambda m, t: m.embedding_size))
    group.add_argument(
        "--hidden-size", dest="hidden_size", type=POSITIVE,
        metavar="HIDDEN_SIZE", default=None,
        help="units of every layer but the last "
        + by_preset(lambda m, t: m.hidden_size))
    group.add_argument(
        "--layers", dest="num_layers", type=POSITIVE, metavar="NUM_LAYERS",
        default=None, help="number of recurrent layers "
        + by_preset(lambda m, t: m.num_layers))
    group.add_argument(
        "--chunk-size", dest="chunk_size", type=POSITIVE,
        metavar="CHUNK_SIZE", default=None,
        help="master-gate chunk size; must divide every layer size "
        + by_preset(lambda m, t: m.chunk_size))
    group.add_argument(
        "--input-dropout", dest="input_dropout", type=RATE,
        metavar="INPUT_DROPOUT", default=None,
        help="locked dropout on the embeddings "
        + by_preset(lambda m, t: m.input_dropout))
    group.add_argument(
        "--layer-dropout", dest="layer_dropout", type=RATE,
        metavar="LAYER_DROPOUT", default=None,
        help="locked dropout between layers "
        + by_preset(lambda m, t: m.layer_dropout))
    group.add_argument(
        "--output-dropout", dest="output_dropout", type=RATE,
        metavar="OUTPUT_DROPOUT", default=None,
        help="locked dropout on the last layer's output "
        + by_preset(lambda m, t: m.output_dropout))
    group.add_argument(
        "--embedding-dropout", dest="embedding_dropout", type=RATE,
        metavar="EMBEDDING_DROPOUT", default=None,
        help="dropout of whole embedding rows (words) "
        + by_preset(lambda m, t: m.embedding_dropout))
    group.add_argument(
        "--recurrent-dropconnect", dest="recurrent_dropconnect", type=RATE,
        metavar="RECURRENT_DROPCONNECT", default=None,
        help="DropConnect on the recurrent kernels "
        + by_preset(lambda m, t: m.recurrent_dropconnect))
    group.add_argument(
        "--tie-weights", dest="tie_weights",
        action=argparse.BooleanOptionalAction, default=None,
        help="share the embedding with the softmax "
        + by_preset(lambda m, t: m.tie_weights))
    group.add_argument(
        "--initializer", dest="initializer", choices=INITIALIZERS,
        default=None, help="initial weights of the recurrent layers: keras "
        "(Glorot, orthogonal, forget bias 1) or uniform (PyTorch's nn.LSTM: "
        "U(+-1/sqrt(units))) " + by_preset(lambda m, t: m.initializer))


def add_training_arguments(group):
    """The flags of `TrainingConfig`'s fields."""
    group.add_argument(
        "--batch-size", dest="batch_size", type=POSITIVE,
        metavar="BATCH_SIZE", default=None,
        help="rows of the training stream read in parallel "
        + by_preset(lambda m, t: t.batch_size))
    group.add_argument(
        "--bptt", dest="bptt", type=POSITIVE, metavar="BPTT", default=None,
        help="truncated-BPTT window length "
        + by_preset(lambda m, t: t.bptt))
    group.add_argument(
        "--epochs", dest="epochs", type=POSITIVE, metavar="EPOCHS",
        default=None, help="total number of epochs "
        + by_preset(lambda m, t: t.epochs))
    group.add_argument(
        "--optimizer", dest="optimizer", choices=OPTIMIZERS, default=None,
        help="optimizer " + by_preset(lambda m, t: t.optimizer))
    group.add_argument(
        "--lr", dest="learning_rate", type=POSITIVE_FLOAT,
        metavar="LEARNING_RATE", default=None,
        help="learning rate " + by_preset(
            lambda m, t: t.optimizer_learning_rate))
    group.add_argument(
        "--clip", dest="clipnorm", type=POSITIVE_FLOAT, metavar="CLIPNORM",
        default=None, help="gradient-norm clipping " + by_preset(
            lambda m, t: t.clipnorm, none="no clipping"))
    group.add_argument(
        "--weight-decay", dest="weight_decay", type=NON_NEGATIVE_FLOAT,
        metavar="WEIGHT_DECAY", default=None, help="L2 weight decay "
        + by_preset(lambda m, t: t.weight_decay, none="none"))
    group.add_argument(
        "--eval-batch-size", dest="eval_batch_size", type=POSITIVE,
        metavar="EVAL_BATCH_SIZE", default=None,
        help="rows of the validation and test streams "
        + by_preset(lambda m, t: t.eval_batch_size))
    group.add_argument(
        "--variable-bptt", dest="variable_length",
        action=argparse.BooleanOptionalAction, default=None,
        help="AWD-LSTM's random BPTT window lengths "
        + by_preset(lambda m, t: t.variable_length))
    group.add_argument(
        "--min-count", dest="min_count", type=POSITIVE, metavar="MIN_COUNT",
        default=None, help="keep words seen at least this many times "
        + by_preset(lambda m, t: t.min_count))
    group.add_argument(
        "--max-vocab", dest="max_vocab", type=int_at_least(MIN_VOCAB),
        metavar="MAX_VOCAB", default=None,
        help="vocabulary size cap, 3 special tokens included "
        + by_preset(lambda m, t: t.max_vocab, none="no cap"))
    group.add_argument(
        "--seed", dest="seed", type=NON_NEGATIVE, metavar="SEED",
        default=None,
        help="seed of the weights, dropout, windows and corpus split "
        + by_preset(lambda m, t: t.seed))
    group.add_argument(
        "--warmup-steps", dest="warmup_steps", type=NON_NEGATIVE,
        metavar="WARMUP_STEPS", default=None,
        help="linear learning-rate warm-up over this many optimizer steps "
        "(0: none) " + by_preset(lambda m, t: t.warmup_steps))
    group.add_argument(
        "--lstm-warmup-steps", dest="lstm_warmup_steps", type=NON_NEGATIVE,
        metavar="STEPS", default=None,
        help="the warm-up of the same-size LSTM (--with-lstm), which "
        "without one stays on the unigram plateau (0: none) "
        + by_preset(lambda m, t: t.lstm_warmup_steps))
    group.add_argument(
        "--xla", dest="xla", action=argparse.BooleanOptionalAction,
        default=None, help="compile training and evaluation with XLA "
        "(TensorFlow; JAX always does) " + by_preset(lambda m, t: t.xla))


def add_config_arguments(parser):
    """Adds the argument groups `model` and `training` to `parser`: one
    flag a field of `ModelConfig` and `TrainingConfig`, default `None`.

    Args:
        parser: An `argparse.ArgumentParser`.

    Returns:
        The two groups, `(model, training)`.
    """
    model = parser.add_argument_group(
        "model", "the language model (ModelConfig); a flag not given keeps "
        "the --preset's value, or with --resume the run's")
    add_model_arguments(model)
    training = parser.add_argument_group(
        "training", "how it is trained (TrainingConfig)")
    add_training_arguments(training)
    return model, training


def given(value, base):
    """`value` if the flag was given (not `None`), else `base`."""
    return base if value is None else value


def check_chunk_size(chunk_size, hidden_size, embedding_size, tie_weights):
    """Raises a `ValueError` naming the flags if `--chunk-size` does not
    divide a layer size (the last layer has the embedding size with
    `--tie-weights`)."""
    sizes = [("--hidden-size", hidden_size)]
    if tie_weights:
        sizes.append(("--embedding-size", embedding_size))
    for flag, size in sizes:
        if size % chunk_size:
            raise ValueError(
                f"--chunk-size {chunk_size} must divide {flag} {size}"
                + (" (the last layer has the embedding size with "
                   "--tie-weights)" if flag == "--embedding-size" else ""))


def configs_from_args(args, base):
    """The `(ModelConfig, TrainingConfig)` of the flags of
    `add_config_arguments`: each field the flag's value if given, else the
    field of `base`.

    Args:
        args: The parsed arguments.
        base: `(ModelConfig, TrainingConfig)`: a preset's
            (`config.PRESETS[args.preset]`) or a resumed run's
            (`recorded_configs`).

    Raises:
        ValueError: A flag's value does not fit another's (the message
            names both flags).
    """
    model, training = base
    check_chunk_size(given(args.chunk_size, model.chunk_size),
                     given(args.hidden_size, model.hidden_size),
                     given(args.embedding_size, model.embedding_size),
                     given(args.tie_weights, model.tie_weights))
    model_config = ModelConfig(
        embedding_size=given(args.embedding_size, model.embedding_size),
        hidden_size=given(args.hidden_size, model.hidden_size),
        num_layers=given(args.num_layers, model.num_layers),
        chunk_size=given(args.chunk_size, model.chunk_size),
        recurrent=model.recurrent,
        master_input=model.master_input,
        input_dropout=given(args.input_dropout, model.input_dropout),
        layer_dropout=given(args.layer_dropout, model.layer_dropout),
        output_dropout=given(args.output_dropout, model.output_dropout),
        embedding_dropout=given(args.embedding_dropout,
                                model.embedding_dropout),
        recurrent_dropconnect=given(args.recurrent_dropconnect,
                                    model.recurrent_dropconnect),
        tie_weights=given(args.tie_weights, model.tie_weights),
        direction=model.direction,
        initializer=given(args.initializer, model.initializer),
    )
    training_config = TrainingConfig(
        batch_size=given(args.batch_size, training.batch_size),
        bptt=given(args.bptt, training.bptt),
        epochs=given(args.epochs, training.epochs),
        optimizer=given(args.optimizer, training.optimizer),
        learning_rate=given(args.learning_rate, training.learning_rate),
        clipnorm=given(args.clipnorm, training.clipnorm),
        weight_decay=given(args.weight_decay, training.weight_decay),
        eval_batch_size=given(args.eval_batch_size, training.eval_batch_size),
        variable_length=given(args.variable_length, training.variable_length),
        min_count=given(args.min_count, training.min_count),
        max_vocab=given(args.max_vocab, training.max_vocab),
        seed=given(args.seed, training.seed),
        warmup_steps=given(args.warmup_steps, training.warmup_steps),
        lstm_warmup_steps=given(args.lstm_warmup_steps,
                                training.lstm_warmup_steps),
        xla=given(args.xla, training.xla),
    )
    return model_config, training_config
