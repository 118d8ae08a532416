# %% [markdown]
# # Parsing Chinese with a trained ON-LSTM language model
#
#     python examples/parse_chinese.py --model DIR [--layer K|mean]
#         [--direction forward|backward|both] [--tree-rule official|plain]
#         [--format json|brackets|ascii] [--presegmented] [SENTENCE ...]
#     python examples/parse_chinese.py --model DIR --eval-sinica [NLTK_DATA]
#         [--plot PNG]
#
# A model directory written by `examples/lm_chinese.py` or `on-lstm train`
# (e.g. `runs/lm_chinese`) holds everything needed to parse: the model,
# its vocabulary and the tokenizer it was trained with. This script loads
# it, and either prints the unsupervised tree of each sentence given
# (from the arguments, `--file`, or stdin, one a line), or, with
# `--eval-sinica`, scores the trees of every reading direction, layer and
# tree rule against the two halves of the Sinica treebank sample beside
# four trivial baselines.
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
# The flags are those of `on-lstm parse` (`add_parse_arguments`), plus
# `--eval-sinica` and `--max-length`. In a notebook no command line is
# read: `argv` names the model of `examples/lm_chinese.py` and two
# sentences.

# %%
import argparse
import os
import sys

# TensorFlow prints its C++ info logs when Keras starts, which
# `import on_lstm_keras` does: keep them off the terminal.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

from on_lstm_keras.cli import add_parse_arguments
from on_lstm_keras.cli import format_parse
from on_lstm_keras.cli import read_input_sentences
from on_lstm_keras.cli.parse import tree_rule_of

parser = argparse.ArgumentParser(
    description="Parse Chinese sentences with a trained ON-LSTM model.")
add_parse_arguments(parser)
parser.add_argument(
    "--eval-sinica", nargs="?", const="", default=None, metavar="NLTK_DATA",
    help="score every layer on the Sinica treebank (folder holding "
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
# None (the run's default, else official), or --tree-rule official|plain
tree_rule = tree_rule_of(args, "parse")

# %% [markdown]
# ## 1. The trained run
#
# `load_run` reads the model directory: the Keras model (`model.keras`),
# the vocabulary (`vocab.json`) and, from `run.json`, the tokenizer (jieba
# for a Chinese model) and what the model was trained on. A missing or
# damaged file is a one-line error naming it.

# %%
from on_lstm_keras.models.saving import load_run

try:
    run = load_run(args.model)
except (FileNotFoundError, ValueError) as e:
    sys.exit(f"parse_chinese.py: {e}")
print(f"{args.model}: {run.model.num_layers} layers, "
      f"{len(run.vocab):,} words, trained on {run.info.get('corpus')}",
      file=sys.stderr)  # stdout holds only the trees, one a line

# %% [markdown]
# ## 2. Scores on the Sinica treebank (with `--eval-sinica`)
#
# `evaluate_settings` reads the gold trees with their own segmentation
# (so jieba plays no part), converts the treebank's traditional characters
# to simplified ones for a model trained on simplified text, reads every
# sentence once with each model (the forward one and, when the run has
# one in `backward/`, the backward one), and scores the trees of every
# setting: direction (forward, backward, both) x layer (each, and the mean
# over layers) x tree rule (official, plain), with unlabelled span F1: the
# per-sentence mean (the paper's figure) and the corpus-level one. The
# sample is scored in two fixed halves, by sentence position in the file
# (even: dev, odd: test); the run's default (`*`) was chosen on the dev
# half alone. Beside them, the left- and right-branching, balanced and
# random trees, which any parser must beat to have learnt something. A
# bar chart of the scores goes to `--plot` (default:
# `MODEL/sinica_f1_dev.png`).

# %%
from on_lstm_keras.cli.evaluate import format_settings_table
from on_lstm_keras.parsing.runs import evaluate_settings
from on_lstm_keras.parsing.runs import saved_parse_default

if args.eval_sinica is not None:
    nltk_data = args.eval_sinica or None
    table = evaluate_settings(
        args.model, "sinica", backward_model=args.backward_model,
        nltk_data=nltk_data, max_length=args.max_length,
        progress=not args.quiet)
    for half, counts in table["halves"].items():
        print(f"Sinica {half} half: {counts['sentences']} sentences "
              f"({counts['skipped']} one-word sentences skipped)")
    print(f"{100 * table['unknown_word_rate']:.1f}% of gold words unknown "
          "to the model")
    default = saved_parse_default(args.model)
    for line in format_settings_table(table, default):
        print(line)
    if default:
        print(f"* the run's default, chosen on the {default['chosen_on']}")
    from on_lstm_keras.plotting import plot_f1_bars

    bars = args.plot or os.path.join(args.model, "sinica_f1_dev.png")
    plot_f1_bars(table["cells"], table["baselines"], bars, half="dev",
                 tree_rule=(tree_rule or (default or {}).get("tree_rule")
                            or "official"))
    print(f"Bar chart (dev half): {bars}")

# %% [markdown]
# ## 3. Trees of the given sentences
#
# `parse` segments each sentence with the run's tokenizer (or splits it on
# spaces with `--presegmented`), reads it through the model from a zero
# state, and splits it top-down at the largest master-forget distance
# split score: the run's recorded default (direction, layer, rule) for
# each setting not given, else the forward model's middle layer and the
# paper's rule (`tree_rule="official"`). Each
# result holds the words, the tree (nested lists) and the distances; the
# tree is printed as JSON, brackets or an ASCII drawing (`--distances`
# adds every layer's `d_f` to the JSON). After `--eval-sinica` alone there
# is nothing more to parse.

# %%
from on_lstm_keras.parsing.runs import parse

if args.eval_sinica is None or args.sentences or args.file:
    sentences = read_input_sentences(args)
    for p in parse(args.model, sentences, layer=args.layer,
                   presegmented=args.presegmented, tree_rule=tree_rule,
                   progress=not args.quiet, direction=args.direction,
                   backward_run=args.backward_model):
        print(format_parse(p, args.format, args.distances), flush=True)
