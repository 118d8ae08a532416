# %% [markdown]
# # Parsing Chinese with a trained ON-LSTM language model
#
#     python examples/parse_chinese.py --model DIR [--layer K]
#         [--format json|brackets|ascii] [--presegmented] [SENTENCE ...]
#     python examples/parse_chinese.py --model DIR --eval-sinica [NLTK_DATA]
#
# Sentences come from the arguments, `--file`, or stdin (one a line); each
# gives one tree on one line (`ascii` trees take several). With
# `--eval-sinica`, the trees of every layer are scored against the Sinica
# treebank (gold segmentation; traditional characters converted to
# simplified for a model trained on simplified text) beside the four
# baselines, with the package's metric code.

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

parser = argparse.ArgumentParser(
    description="Parse Chinese sentences with a trained ON-LSTM model.")
add_parse_arguments(parser)
parser.add_argument(
    "--eval-sinica", nargs="?", const="", default=None, metavar="NLTK_DATA",
    help="score every layer on the Sinica treebank (folder holding "
         "corpora/sinica_treebank; default: nltk's data path)")
parser.add_argument("--max-length", type=int, default=None,
                    help="with --eval-sinica: sentences of at most N words")
args = parser.parse_args()

# %%
from on_lstm_keras import workflow
from on_lstm_keras.models.saving import load_run

try:
    run = load_run(args.model)
except (FileNotFoundError, ValueError) as e:
    sys.exit(f"parse_chinese.py: {e}")

# %% [markdown]
# ## Scores on the Sinica treebank

# %%
if args.eval_sinica is not None:
    nltk_data = args.eval_sinica or None
    per_layer = workflow.evaluate_treebank(
        "sinica", model=run, layer="all", nltk_data=nltk_data,
        max_length=args.max_length, split=args.split)
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
        b = workflow.evaluate_treebank(
            "sinica", baseline=name, nltk_data=nltk_data,
            max_length=args.max_length)
        print(f"| {label} | {b['sentence_f1']:.1f} | {b['corpus_f1']:.1f} |")
    if not args.sentences and not args.file:
        sys.exit(0)

# %% [markdown]
# ## Trees of the given sentences

# %%
for parse in workflow.parse(run, read_input_sentences(args), layer=args.layer,
                            presegmented=args.presegmented, split=args.split):
    print(format_parse(parse, args.format), flush=True)
