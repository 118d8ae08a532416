# %% [markdown]
# # Parsing Chinese with a trained ON-LSTM language model
#
#     python examples/parse_chinese.py --model DIR [--layer K]
#         [--format json|brackets|ascii] [--presegmented] [SENTENCE ...]
#     python examples/parse_chinese.py --model DIR --eval-sinica [NLTK_DATA]
#
# A model directory written by `examples/lm_chinese.py` or `on-lstm train`
# (e.g. `runs/lm_chinese`) holds everything needed to parse: the model,
# its vocabulary and the tokenizer it was trained with. This script loads
# it, and either prints the unsupervised tree of each sentence given
# (from the arguments, `--file`, or stdin, one a line), or, with
# `--eval-sinica`, scores the trees of every layer against the Sinica
# treebank beside four trivial baselines.
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
in_notebook = "ipykernel" in sys.modules
argv = ["--model", os.path.join("runs", "lm_chinese"), "--format", "ascii",
        "爱真的需要勇气", "今天的天气非常好"]  # the flags, in a notebook
args = parser.parse_args(argv if in_notebook else None)
if args.distances and args.format != "json":
    parser.error(f"--distances needs --format json, received --format {args.format}")
tree_rule = tree_rule_of(args, "parse")  # "official", or --tree-rule plain

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
# `evaluate_treebank` reads the gold trees with their own segmentation
# (so jieba plays no part), converts the treebank's traditional characters
# to simplified ones for a model trained on simplified text, parses every
# sentence with each layer (`layer="all"`) and scores the trees with
# unlabelled span F1: the per-sentence mean (the paper's figure) and the
# corpus-level one. The same function with `baseline=` scores the left-
# and right-branching, balanced and random trees, which any parser must
# beat to have learnt something.

# %%
from on_lstm_keras.parsing.runs import evaluate_treebank

if args.eval_sinica is not None:
    nltk_data = args.eval_sinica or None
    per_layer = evaluate_treebank(
        "sinica", model=run, layer="all", nltk_data=nltk_data,
        max_length=args.max_length, tree_rule=tree_rule,
        progress=not args.quiet)
    print(f"Sinica: {per_layer['sentences']} sentences "
          f"({per_layer['skipped']} one-word sentences skipped), "
          f"{100 * per_layer['unknown_word_rate']:.1f}% of gold words unknown "
          "to the model")
    print("| trees | sentence F1 | corpus F1 |")
    print("|---|---|---|")
    for row in per_layer["per_layer"]:
        print(f"| ON-LSTM layer {row['layer']} | {row['sentence_f1']:.1f} | "
              f"{row['corpus_f1']:.1f} |")
    labels = {"left": "left-branching", "right": "right-branching",
              "balanced": "balanced", "random": "random (seed 0)"}
    for name, label in labels.items():
        b = evaluate_treebank(
            "sinica", baseline=name, nltk_data=nltk_data,
            max_length=args.max_length)
        print(f"| {label} | {b['sentence_f1']:.1f} | {b['corpus_f1']:.1f} |")

# %% [markdown]
# ## 3. Trees of the given sentences
#
# `parse` segments each sentence with the run's tokenizer (or splits it on
# spaces with `--presegmented`), reads it through the model from a zero
# state, and splits it top-down at the largest master-forget distance
# `d_f` of the chosen layer (the middle one by default), by the paper's
# rule (`tree_rule="official"`) or the plain split before that word. Each
# result holds the words, the tree (nested lists) and the distances; the
# tree is printed as JSON, brackets or an ASCII drawing (`--distances`
# adds every layer's `d_f` to the JSON). After `--eval-sinica` alone there
# is nothing more to parse.

# %%
from on_lstm_keras.parsing.runs import parse

if args.eval_sinica is None or args.sentences or args.file:
    sentences = read_input_sentences(args)
    for p in parse(run, sentences, layer=args.layer,
                   presegmented=args.presegmented, tree_rule=tree_rule,
                   progress=not args.quiet):
        print(format_parse(p, args.format, args.distances), flush=True)
