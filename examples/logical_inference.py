# %% [markdown]
# # Logical inference: ON-LSTM against LSTM on longer formulas than seen in training
#
#     python examples/logical_inference.py [--seed 0] [--epochs E] [--units U]
#         [--train-pairs N] [--output DIR] [--json] [--record FILE]
#
# The fourth experiment of the ON-LSTM paper (Shen et al., 2019, §5.4 and
# Figure 3), on the artificial language of Bowman, Manning and Potts (2015):
# formulas over six propositional variables `a`-`f` built with `and`, `or`
# and `not`, written with brackets, e.g. `( ( not a ) and ( b or c ) )`. A
# model reads two formulas and predicts which of the seven relations of
# natural logic holds between them. It is trained on pairs with at most 6
# operators and tested on pairs with 1 to 12: a model that has learned to
# compose meanings along the (unseen) tree structure should keep its
# accuracy on the longer formulas.
#
# Both models are siamese: the same encoder reads each formula, and an MLP
# classifies `[u, v, u·v, |u−v|]`. The encoder is an `ONLSTM` in one model
# and a `keras.layers.LSTM` of the same size in the other; everything else
# (data, optimiser, epochs) is shared. The script writes a picture of the
# accuracy per operator count (like the paper's Figure 3) and, with
# `--json`, prints the accuracies as its last line. Its result record
# (`runs.result_record`: the accuracies with the command, commit, machine
# and versions behind them) goes to `OUTPUT/record.json` (`--record FILE`).
#
# Each `# %%` cell runs as a notebook cell too (VS Code, Jupyter with
# jupytext); the functions can be imported from this file without
# training anything.

# %% [markdown]
# ## 0. The language and its pairs
#
# `on_lstm_keras.data.logic` holds the language: the exact semantics of a
# formula (the set of the 64 truth assignments under which it holds), the
# relation of two formulas, and the seeded generator of pairs. The test
# pairs are drawn first, `--test-pairs` for each operator count 1-12; the
# training pairs (1-6 operators) are then drawn excluding every test pair
# in either order, and 10% of them are set aside for validation. Formulas
# are encoded as token ids with 0 for padding, which the embedding masks.

# %%
import argparse
import json
import os
import sys
import time

import numpy as np

# TensorFlow's C++ side reports fatal errors only (level 3: no CUDA or
# oneDNN notices) unless the user chose a level; read when it loads.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

from on_lstm_keras import ONLSTM  # noqa: E402
from on_lstm_keras import runs  # noqa: E402
from on_lstm_keras.data.logic import RELATIONS  # noqa: E402
from on_lstm_keras.data.logic import TOKENS  # noqa: E402
from on_lstm_keras.data.logic import accuracy_by_operator_count  # noqa: E402
from on_lstm_keras.data.logic import encode_pairs  # noqa: E402
from on_lstm_keras.data.logic import logic_datasets  # noqa: E402
from on_lstm_keras.data.logic import majority_accuracy  # noqa: E402

# Keras after `on_lstm_keras`: the package's import keeps TensorFlow's
# C++ start-up lines off the terminal, if it is the one that loads it.
import keras  # noqa: E402

# %% [markdown]
# ## 1. The models
#
# `Embedding(mask_zero=True)` → encoder (last output) on each formula, the
# same weights for both; then `[u, v, u·v, |u−v|]` → `Dense(relu)` →
# `Dense(7, softmax)`. The mask makes the encoder's last output that of the
# last real token, so the padding does not matter.

# %%


def build_model(encoder, units, chunk_size=8, embedding_dim=64,
                hidden=128, learning_rate=2e-3, seed=0):
    """The siamese classifier with an `"onlstm"` or `"lstm"` encoder."""
    keras.utils.set_random_seed(seed)
    if encoder == "onlstm":
        rnn = ONLSTM(units=units, chunk_size=chunk_size, name="encoder")
    elif encoder == "lstm":
        rnn = keras.layers.LSTM(units=units, name="encoder")
    else:
        raise ValueError("Argument `encoder` must be 'onlstm' or 'lstm', "
                         f"received: encoder={encoder!r}")
    embed = keras.layers.Embedding(len(TOKENS), embedding_dim,
                                   mask_zero=True, name="embedding")
    left = keras.Input((None,), dtype="int32", name="left")
    right = keras.Input((None,), dtype="int32", name="right")
    u = rnn(embed(left))
    v = rnn(embed(right))
    features = keras.layers.Concatenate()([
        u, v, keras.layers.Multiply()([u, v]),
        keras.layers.Lambda(lambda t: keras.ops.abs(t[0] - t[1]))([u, v]),
    ])
    x = keras.layers.Dense(hidden, activation="relu")(features)
    x = keras.layers.Dense(hidden, activation="relu")(x)
    outputs = keras.layers.Dense(len(RELATIONS), activation="softmax")(x)
    model = keras.Model([left, right], outputs, name=f"siamese_{encoder}")
    model.compile(keras.optimizers.Adam(learning_rate, clipnorm=1.0),
                  "sparse_categorical_crossentropy", metrics=["accuracy"])
    return model


def train_and_test(encoder, data, args, log=print):
    """Trains one model; returns its accuracy per operator count, its
    training time and its best validation accuracy."""
    model = build_model(encoder, args.units, args.chunk_size,
                        args.embedding_dim, args.hidden, args.learning_rate,
                        args.seed)
    tl, tr, ty = encode_pairs(data["train"])
    vl, vr, vy = encode_pairs(data["valid"])
    started = time.time()
    best, best_weights = -1.0, None
    for epoch in range(args.epochs):
        history = model.fit([tl, tr], ty, batch_size=args.batch_size,
                            epochs=1, verbose=0, shuffle=True)
        valid = model.evaluate([vl, vr], vy, batch_size=256, verbose=0,
                               return_dict=True)["accuracy"]
        log(f"{encoder:>6} epoch {epoch + 1}: train acc "
            f"{history.history['accuracy'][-1]:.3f}, valid acc {valid:.3f} "
            f"({time.time() - started:.0f} s)")
        if valid > best:
            best, best_weights = valid, model.get_weights()
    model.set_weights(best_weights)
    accuracy = accuracy_by_operator_count(model, data["test"])
    keras.backend.clear_session()
    return accuracy, time.time() - started, best


def plot(results, path, majority=None):
    """Accuracy against operator count, one line per model (Figure 3)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 3.4), dpi=100)
    styles = {"onlstm": ("ON-LSTM", "o-"), "lstm": ("LSTM", "s--")}
    for name, accuracy in results.items():
        label, style = styles.get(name, (name, "x-"))
        counts = sorted(accuracy)
        ax.plot(counts, [100 * accuracy[n] for n in counts], style,
                label=label, markersize=4)
    if majority:
        counts = sorted(majority)
        ax.plot(counts, [100 * majority[n] for n in counts], ":",
                color="grey", label="majority class")
    ax.axvspan(6.5, max(max(a) for a in results.values()) + 0.5,
               color="0.92", zorder=0)
    ax.set_xlabel("number of operators")
    ax.set_ylabel("test accuracy (%)")
    ax.set_xticks(range(1, 13))
    ax.legend(loc="lower left", fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def parse_args(argv=None):
    parser = argparse.ArgumentParser(
        description="Logical inference (Bowman et al. 2015): ON-LSTM vs "
                    "LSTM, accuracy per operator count.")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=14)
    parser.add_argument("--units", type=int, default=128)
    parser.add_argument("--chunk-size", type=int, default=8,
                        help="ONLSTM chunk size (units must be a multiple)")
    parser.add_argument("--embedding-dim", type=int, default=64)
    parser.add_argument("--hidden", type=int, default=128,
                        help="width of the classifier's hidden layers")
    parser.add_argument("--train-pairs", type=int, default=50000,
                        help="training + validation pairs (1-6 operators)")
    parser.add_argument("--test-pairs", type=int, default=500,
                        help="test pairs per operator count")
    parser.add_argument("--max-test-operators", type=int, default=12)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--learning-rate", type=float, default=2e-3)
    parser.add_argument("--models", default="onlstm,lstm",
                        help="comma-separated: onlstm, lstm")
    parser.add_argument("--output", default=os.path.join("runs", "logic"),
                        help="directory for the picture and results.json")
    parser.add_argument("--json", action="store_true",
                        help="print the accuracies as JSON on the last line")
    parser.add_argument("--record", help="where to write the result record "
                        "(default: OUTPUT/record.json)")
    args = parser.parse_args(argv)
    for name in ("epochs", "units", "chunk_size", "embedding_dim", "hidden",
                 "train_pairs", "test_pairs", "max_test_operators",
                 "batch_size"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1, "
                         f"received {getattr(args, name)}")
    if args.units % args.chunk_size:
        parser.error(f"--units must be a multiple of --chunk-size, received "
                     f"--units {args.units} --chunk-size {args.chunk_size}")
    models = [m.strip() for m in args.models.split(",") if m.strip()]
    bad = [m for m in models if m not in ("onlstm", "lstm")]
    if bad or not models:
        parser.error(f"--models takes onlstm and/or lstm, received "
                     f"{args.models!r}")
    args.models = models
    return args


# %% [markdown]
# ## 2. Run: data, both models, the table and the picture
#
# The cells from here on train, so they run only when the file is run
# (as a script, or cell by cell in a notebook), not when it is imported.
# First the data: the test pairs of every operator count, then the
# training and validation pairs (1-6 operators, none equal to a test
# pair), the share of each relation, and the majority-class accuracy per
# operator count, the floor both models must beat.

# %%
if __name__ == "__main__":
    in_notebook = "ipykernel" in sys.modules
    args = parse_args([] if in_notebook else None)
    started = time.time()
    data = logic_datasets(args.seed, args.train_pairs, args.test_pairs,
                          max_test_operators=args.max_test_operators)
    counts = {r: 0 for r in RELATIONS}
    for _, _, rel in data["train"]:
        counts[rel] += 1
    print(f"pairs: {len(data['train'])} train, {len(data['valid'])} valid "
          f"(1-6 operators), {args.test_pairs} test per operator count "
          f"1-{args.max_test_operators} ({time.time() - started:.1f} s)")
    print("training relations: " + ", ".join(
        f"{r} {100 * c / len(data['train']):.1f}%" for r, c in counts.items()))
    example = data["train"][0]
    print(f"example: {' '.join(example[0])}  {example[2]}  "
          f"{' '.join(example[1])}")
    majority = majority_accuracy(data["test"])

# %% [markdown]
# Training: the same epochs, batches and optimiser for both encoders; the
# weights of the epoch with the best validation accuracy are tested.

# %%
if __name__ == "__main__":
    results, summary = {}, {}
    for encoder in args.models:
        accuracy, seconds, valid = train_and_test(encoder, data, args)
        results[encoder] = accuracy
        summary[encoder] = {"seconds": round(seconds, 1),
                            "best_valid_accuracy": round(valid, 4)}

# %% [markdown]
# ## 3. Results
#
# Accuracy per operator count; the counts above 6 were never seen in
# training (the shaded part of the picture).

# %%
if __name__ == "__main__":
    header = "model    " + "".join(f"{n:>6}" for n in sorted(majority))
    print()
    print(header)
    for name, accuracy in list(results.items()) + [("majority", majority)]:
        print(f"{name:<9}" + "".join(f"{100 * accuracy[n]:6.1f}"
                                     for n in sorted(accuracy)))
    for name, accuracy in results.items():
        seen = [accuracy[n] for n in accuracy if n <= 6]
        unseen = [accuracy[n] for n in accuracy if n > 6]
        print(f"{name}: mean accuracy 1-6 {100 * np.mean(seen):.1f}%"
              + (f", 7-{args.max_test_operators} "
                 f"{100 * np.mean(unseen):.1f}%" if unseen else "")
              + f"; trained in {summary[name]['seconds']:.0f} s")
    os.makedirs(args.output, exist_ok=True)
    picture = os.path.join(args.output, "logical_inference.png")
    plot(results, picture, majority)
    as_json = {name: {str(n): round(a, 4) for n, a in acc.items()}
               for name, acc in results.items()}
    with open(os.path.join(args.output, "results.json"), "w") as f:
        json.dump({"accuracy": as_json, "training": summary,
                   "majority": {str(n): m for n, m in majority.items()},
                   "settings": vars(args)}, f, indent=1)
    record = runs.result_record("logical_inference", as_json, seed=args.seed,
                                seconds=time.time() - started)
    runs.write_record(args.record or os.path.join(args.output, "record.json"),
                      record)
    print(f"picture: {picture}; total time {time.time() - started:.0f} s")
    if args.json:
        print(json.dumps(as_json))
