# %% [markdown]
# # Parsing Chinese with a trained ON-LSTM language model
#
#     python examples/parse_chinese.py --model DIR [--layer K|mean]
#         [--reading forward|backward|both] [--tree-rule official|plain]
#         [--format json|brackets|ascii] [--presegmented] [SENTENCE ...]
#     python examples/parse_chinese.py --model DIR --eval-sinica [NLTK_DATA]
#         [--plot PNG]
#
# A model directory written by `examples/lm_chinese.py` or `on-lstm train`
# (e.g. `runs/lm_chinese`) holds everything needed to parse: the model,
# its vocabulary and the tokenizer it was trained with. This script reads
# it with `on_lstm_keras.runs`, and either prints the unsupervised tree of
# each sentence given (from the arguments, `--file`, or stdin, one a
# line), or, with `--eval-sinica`, scores the trees of every reading,
# layer and tree rule against the two halves of the Sinica treebank sample
# beside four trivial baselines.
#
# The Sinica treebank comes with nltk's data:
# `python -m nltk.downloader sinica_treebank` puts it where nltk looks;
# give another folder (the one holding `corpora/sinica_treebank`) after
# `--eval-sinica`.
#
# Each `# %%` cell also runs as a notebook cell (VS Code, or Jupyter with
# jupytext); in a notebook the flags are the list `argv` below.

# %% [markdown]
# ## 0. Flags
#
# The flags follow `on-lstm parse`, plus `--eval-sinica`, `--max-length`
# and `--plot`. A reading says where the split scores come from: the
# forward model, the backward one (trained on reversed sentences, in
# `MODEL/backward`), or both combined. In a notebook no command line is
# read: `argv` names the model of `examples/lm_chinese.py` and two
# sentences.

# %%
import argparse
import json
import os
import sys

# TensorFlow prints its C++ info logs when Keras starts, which
# `import on_lstm_keras` does: keep them off the terminal.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")


def layer_arg(text):
    """`--layer`: a layer number from 1, or `mean` (the mean over layers)."""
    if text == "mean":
        return text
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(
            f"must be a layer number (from 1) or 'mean', received {text!r}")
    return int(text)


parser = argparse.ArgumentParser(
    description="Parse Chinese sentences with a trained ON-LSTM model.")
parser.add_argument("--model", required=True, help="model directory")
parser.add_argument("--layer", type=layer_arg, default=None,
                    help="layer number from 1, or 'mean' (default: the "
                         "run's recorded default, else the middle layer)")
parser.add_argument("--reading", choices=("forward", "backward", "both"),
                    default=None, help="where the split scores come from "
                    "(default: the run's recorded default, else forward)")
parser.add_argument("--backward-model", default=None, metavar="DIR",
                    help="the backward model's run (default: MODEL/backward)")
parser.add_argument("--tree-rule", choices=("official", "plain"),
                    default=None, help="how a tree is built from the scores")
parser.add_argument("--format", choices=("json", "brackets", "ascii"),
                    default="json", help="output (default: %(default)s)")
parser.add_argument("--distances", action="store_true",
                    help="with --format json: each layer's d_f as well")
parser.add_argument("--presegmented", action="store_true",
                    help="words are separated by spaces; no jieba")
parser.add_argument("--file", default=None,
                    help="read sentences from a UTF-8 file, one a line")
parser.add_argument("--quiet", action="store_true", help="no progress bar")
parser.add_argument("sentences", nargs="*",
                    help="sentences (default: one a line on stdin)")
parser.add_argument(
    "--eval-sinica", nargs="?", const="", default=None, metavar="NLTK_DATA",
    help="score every reading on the Sinica treebank (folder holding "
         "corpora/sinica_treebank; default: nltk's data path)")
parser.add_argument("--max-length", type=int, default=None,
                    help="with --eval-sinica: sentences of at most N words")
parser.add_argument("--plot", default=None, metavar="PNG",
                    help="with --eval-sinica: the bar chart's file (default: "
                         "MODEL/sinica_f1_dev.png)")
in_notebook = "ipykernel" in sys.modules
argv = ["--model", os.path.join("runs", "lm_chinese"), "--format", "ascii",
        "爱真的需要勇气", "今天的天气非常好"]  # the flags, in a notebook
args = parser.parse_args(argv if in_notebook else None)
if args.distances and args.format != "json":
    parser.error(f"--distances needs --format json, received --format {args.format}")

# %% [markdown]
# ## 1. The trained run
#
# A run directory holds the Keras model (`model.keras`), the vocabulary
# (`vocab.json`) and `run.json`: the model's configuration, the tokenizer
# (jieba for a Chinese model), the corpus it was trained on, and, once
# chosen, its default reading. The trees go to stdout, one a line; what
# the run is goes to stderr.

# %%
run_file = os.path.join(args.model, "run.json")
if not os.path.isfile(run_file):
    sys.exit(f"parse_chinese.py: {args.model} holds no run (no run.json)")
with open(run_file, encoding="utf-8") as f:
    info = json.load(f)
print(f"{args.model}: {info['model']['num_layers']} layers, "
      f"{info.get('vocabulary', 0):,} words, trained on {info.get('corpus')}",
      file=sys.stderr)

# %% [markdown]
# ## 2. Scores on the Sinica treebank (with `--eval-sinica`)
#
# `runs.evaluate_readings` reads the gold trees with their own
# segmentation (so jieba plays no part), converts the treebank's
# traditional characters to simplified ones for a model trained on
# simplified text, reads every sentence once with each model (the forward
# one and, when the run has one in `backward/`, the backward one), and
# scores the trees of every reading (forward, backward, both) x layer
# (each, and the mean over layers) x tree rule (official, plain), with
# unlabelled span F1: the per-sentence mean (the paper's figure) and the
# corpus-level one. The sample is scored in two fixed halves, by sentence
# position in the file (even: dev, odd: test); the run's default (`*`)
# was chosen on the dev half alone. Beside them, the left- and
# right-branching, balanced and random trees, which any parser must beat
# to have learnt something. A bar chart of the dev half goes to `--plot`
# (default: `MODEL/sinica_f1_dev.png`).

# %%
from on_lstm_keras import plotting
from on_lstm_keras import runs

if args.eval_sinica is not None:
    table = runs.evaluate_readings(
        args.model, "sinica", backward_model=args.backward_model,
        nltk_data=args.eval_sinica or None, max_length=args.max_length,
        progress=not args.quiet)
    for half, counts in table["halves"].items():
        print(f"Sinica {half} half: {counts['sentences']} sentences "
              f"({counts['skipped']} one-word sentences skipped)")
    print(f"{100 * table['unknown_word_rate']:.1f}% of gold words unknown "
          "to the model")
    default = runs.saved_reading(args.model)
    for line in runs.format_readings_table(table, default):
        print(line)
    if default:
        print(f"* the run's default, chosen on the {default['chosen_on']}")
    bars = args.plot or os.path.join(args.model, "sinica_f1_dev.png")
    plotting.plot_f1_bars(table["cells"], table["baselines"], bars,
                          half="dev", tree_rule=(
                              args.tree_rule or (default or {}).get(
                                  "tree_rule") or "official"))
    print(f"Bar chart (dev half): {bars}")

# %% [markdown]
# ## 3. Trees of the given sentences
#
# `runs.parse` segments each sentence with the run's tokenizer (or splits
# it on spaces with `--presegmented`), reads it through the model from a
# zero state, and splits it top-down at the largest split score: the
# run's recorded default (reading, layer, rule) for each setting not
# given, else the forward model's middle layer and the paper's rule
# (`tree_rule="official"`). Each `Parse` holds the words, the tree (nested
# lists), the split scores and every layer's `d_f`; the tree is printed as
# JSON, brackets or an ASCII drawing (`--distances` adds every layer's
# `d_f` to the JSON). After `--eval-sinica` alone there is nothing more
# to parse.

# %%
from on_lstm_keras.parsing import ascii_tree
from on_lstm_keras.parsing import to_brackets
from on_lstm_keras.parsing import to_json


def input_sentences():
    if args.sentences:
        return list(args.sentences)
    if args.file:
        with open(args.file, encoding="utf-8") as f:
            return [line.rstrip("\r\n") for line in f]
    return [line.rstrip("\r\n") for line in sys.stdin]


def shown(p):
    if args.distances:
        record = {"words": p.words, "tree": p.tree,
                  "distances": p.layer_distances}
        if p.backward_layer_distances:
            record.update(backward_distances=p.backward_layer_distances,
                          scores=p.split_scores)
        return json.dumps(record, ensure_ascii=False)
    if p.tree is None:
        return "null" if args.format == "json" else ""
    return {"json": to_json, "brackets": to_brackets,
            "ascii": ascii_tree}[args.format](p.tree)


if args.eval_sinica is None or args.sentences or args.file:
    for p in runs.parse(args.model, input_sentences(), reading=args.reading,
                        layer=args.layer, tree_rule=args.tree_rule,
                        presegmented=args.presegmented,
                        backward_run=args.backward_model,
                        progress=not args.quiet):
        print(shown(p), flush=True)
