# %% [markdown]
# # Logical inference: ON-LSTM against LSTM on longer formulas than seen in training
#
#     python examples/logical_inference.py [--seed 0] [--epochs E] [--units U]
#         [--train-pairs N] [--output DIR] [--json]
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
# `--json`, prints the accuracies as its last line.
#
# The defaults (50,000 pairs, 14 epochs, 128 units) need about 17 minutes
# of CPU time for the data and both models, so they run in under 20
# minutes on two cores; `--train-pairs 30000 --epochs 12` needs 9.
#
# Each `# %%` cell runs as a notebook cell too (VS Code, Jupyter with
# jupytext); the data functions can be imported from this file without
# training anything.

# %% [markdown]
# ## 0. The vocabulary of the artificial language
#
# Six variables, three operators and brackets: twelve token ids with 0 for
# padding, which the embedding masks. The seven relations are the labels
# the classifiers predict.

# %%
import argparse
import json
import os
import sys
import time

import numpy as np

VARIABLES = ("a", "b", "c", "d", "e", "f")
OPERATORS = ("and", "or", "not")
# Token ids: 0 is padding (masked), then brackets, operators and variables.
TOKENS = ("<pad>", "(", ")") + OPERATORS + VARIABLES
TOKEN_ID = {t: i for i, t in enumerate(TOKENS)}
# The seven relations of MacCartney's natural logic, in Bowman's notation.
RELATIONS = ("=", "<", ">", "^", "|", "v", "#")
RELATION_NAMES = {
    "=": "equivalence",
    "<": "forward entailment",
    ">": "backward entailment",
    "^": "negation",
    "|": "alternation",
    "v": "cover",
    "#": "independence",
}
N_ASSIGNMENTS = 2 ** len(VARIABLES)  # 64 truth assignments


# %% [markdown]
# ## 1. The language and its exact semantics
#
# A formula's meaning is the set of truth assignments (out of the 64 to
# six variables) under which it holds, kept as a boolean array of 64
# entries: variable `k` is true in assignment `j` when bit `k` of `j` is
# set, `not` complements, `and` intersects, `or` unites. The relation of a
# pair follows from the two sets `A` and `B` (with `U` all 64):
#
# | relation | symbol | sets |
# |---|---|---|
# | equivalence | `=` | `A = B` |
# | forward entailment | `<` | `A ⊂ B` (strictly) |
# | backward entailment | `>` | `A ⊃ B` (strictly) |
# | negation | `^` | `A ∩ B = ∅` and `A ∪ B = U` |
# | alternation | `\|` | `A ∩ B = ∅`, `A ∪ B ≠ U` |
# | cover | `v` | `A ∩ B ≠ ∅`, `A ∪ B = U`, neither contains the other |
# | independence | `#` | everything else |
#
# **Degenerate formulas.** A contradiction (`A = ∅`, e.g. `( a and ( not a
# ) )`) or a tautology (`A = U`) would stand in several relations at once
# (the empty set is both contained in and disjoint from any set), so, as
# Bowman et al. do, pairs are only made of formulas whose set is neither
# empty nor all 64 assignments: the generator redraws a degenerate formula.
# `relation()` raises a `ValueError` on one. With both sets non-degenerate
# the seven cases above are mutually exclusive and cover every pair.

# %%


def variable_set(index):
    """The 64 truth assignments under which variable number `index` holds."""
    return (np.arange(N_ASSIGNMENTS) >> index) & 1 == 1


def truth_set(formula):
    """The truth set (64 booleans) of a formula given as a token list.

    Args:
        formula: Fully bracketed token sequence, e.g.
            `["(", "a", "and", "(", "not", "b", ")", ")"]`.

    Returns:
        A boolean NumPy array of shape `(64,)`.
    """
    tokens = list(formula)
    position = 0

    def parse():
        nonlocal position
        token = tokens[position]
        position += 1
        if token in VARIABLES:
            return variable_set(VARIABLES.index(token))
        if token != "(":
            raise ValueError(f"unexpected token {token!r} in {formula!r}")
        if tokens[position] == "not":
            position += 1
            value = ~parse()
        else:
            left = parse()
            operator = tokens[position]
            position += 1
            right = parse()
            if operator == "and":
                value = left & right
            elif operator == "or":
                value = left | right
            else:
                raise ValueError(
                    f"unexpected operator {operator!r} in {formula!r}")
        if tokens[position] != ")":
            raise ValueError(f"missing ')' in {formula!r}")
        position += 1
        return value

    value = parse()
    if position != len(tokens):
        raise ValueError(f"trailing tokens in {formula!r}")
    return value


def relation(a, b):
    """The natural-logic relation between two truth sets (symbols above).

    Args:
        a, b: Boolean arrays of shape `(64,)`, neither empty nor all true.

    Returns:
        One of `"=", "<", ">", "^", "|", "v", "#"`.
    """
    a = np.asarray(a, dtype=bool)
    b = np.asarray(b, dtype=bool)
    for name, s in (("a", a), ("b", b)):
        if not s.any() or s.all():
            raise ValueError(
                f"Argument `{name}` is a contradiction or a tautology "
                "(empty or universal truth set); the seven relations are "
                "only defined here between non-degenerate sets")
    if np.array_equal(a, b):
        return "="
    meet = (a & b).any()
    exhaustive = (a | b).all()
    if not meet:
        return "^" if exhaustive else "|"
    if not (a & ~b).any():
        return "<"
    if not (b & ~a).any():
        return ">"
    return "v" if exhaustive else "#"


def formula_relation(left, right):
    """The relation between two formulas given as token sequences."""
    return relation(truth_set(left), truth_set(right))


def count_operators(formula):
    """How many `and`, `or` and `not` a token sequence holds."""
    return sum(t in OPERATORS for t in formula)


# %% [markdown]
# ## 2. Random formulas and pairs
#
# A formula with `n` operators is drawn top-down: with no operator left it
# is a variable; otherwise the top operator is `not` (one third of the
# time) over a formula with `n − 1` operators, or `and` / `or` over two
# formulas whose operator counts (uniformly split) add up to `n − 1`.
#
# A pair's operator count is that of its longer formula (Bowman et al.'s
# buckets): one formula gets `n` operators, the other a count drawn
# uniformly from `0..n`, and the two are swapped half of the time. Both
# formulas of a pair use the variables of one random subset of two to four
# of the six variables, so that they share variables and all seven
# relations occur (two formulas over unrelated variables are almost always
# independent).
#
# The test pairs are drawn first, `--test-pairs` for each operator count
# 1-12; the training pairs (operator counts 1-6, equally many of each,
# except that pairs with one operator run out of distinct pairs early and
# pass their share on) are then drawn excluding every test pair in either
# order, and 10% of them are set aside for validation. Everything comes from one
# `numpy.random.default_rng(seed)`, so a seed fixes the data.

# %%


def random_formula(n_operators, rng, variables=VARIABLES):
    """A random fully bracketed formula with exactly `n_operators` operators.

    Args:
        n_operators: Number of `and`, `or` and `not` in the formula (>= 0).
        rng: A `numpy.random.Generator`.
        variables: The variables to draw leaves from.

    Returns:
        A list of tokens.
    """
    if n_operators == 0:
        return [variables[rng.integers(len(variables))]]
    operator = OPERATORS[rng.integers(3)]
    if operator == "not":
        return ["(", "not"] + random_formula(n_operators - 1, rng,
                                             variables) + [")"]
    n_left = int(rng.integers(n_operators))  # 0 .. n-1
    return (["("] + random_formula(n_left, rng, variables) + [operator]
            + random_formula(n_operators - 1 - n_left, rng, variables)
            + [")"])


def random_proper_formula(n_operators, rng, variables):
    """Like `random_formula`, redrawn until it is neither always false nor
    always true; returns `(tokens, truth_set)`."""
    while True:
        tokens = random_formula(n_operators, rng, variables)
        value = truth_set(tokens)
        if value.any() and not value.all():
            return tokens, value


def random_pair(n_operators, rng):
    """A random pair whose longer formula has `n_operators` operators.

    Returns:
        `(left_tokens, right_tokens, relation_symbol)`.
    """
    k = int(rng.integers(2, 5))
    variables = tuple(sorted(rng.choice(VARIABLES, size=k, replace=False)))
    long_tokens, long_set = random_proper_formula(n_operators, rng, variables)
    n_other = int(rng.integers(n_operators + 1))
    other_tokens, other_set = random_proper_formula(n_other, rng, variables)
    if rng.integers(2):
        return other_tokens, long_tokens, relation(other_set, long_set)
    return long_tokens, other_tokens, relation(long_set, other_set)


def _key(left, right):
    return " ".join(left) + " | " + " ".join(right)


def make_datasets(seed=0, train_pairs=50000, test_pairs=500,
                  max_train_operators=6, max_test_operators=12,
                  valid_fraction=0.1):
    """Draws the training, validation and per-length test pairs.

    Args:
        seed: Seed of the random generator; equal seeds give equal data.
        train_pairs: Training plus validation pairs (operator counts
            `1..max_train_operators`, equally many of each).
        test_pairs: Test pairs per operator count `1..max_test_operators`.
        max_train_operators: Largest operator count in training.
        max_test_operators: Largest operator count tested.
        valid_fraction: Share of the training pairs set aside.

    Returns:
        A dict with `"train"`, `"valid"` (lists of
        `(left, right, relation)`) and `"test"` (a dict from operator count
        to such a list).
    """
    for name, value in (("train_pairs", train_pairs),
                        ("test_pairs", test_pairs),
                        ("max_train_operators", max_train_operators),
                        ("max_test_operators", max_test_operators)):
        if int(value) != value or value < 1:
            raise ValueError(f"Argument `{name}` must be a positive integer, "
                             f"received: {name}={value!r}")
    if not 0.0 <= valid_fraction < 1.0:
        raise ValueError("Argument `valid_fraction` must be in [0, 1), "
                         f"received: valid_fraction={valid_fraction!r}")
    rng = np.random.default_rng(seed)
    test, seen = {}, set()
    for n in range(1, max_test_operators + 1):
        bucket, keys = [], set()
        attempts = 0
        while len(bucket) < test_pairs:
            attempts += 1
            if attempts > 100 * test_pairs:
                raise ValueError(
                    f"cannot draw {test_pairs} distinct test pairs with {n} "
                    "operators; ask for fewer with `test_pairs`")
            left, right, rel = random_pair(n, rng)
            key = _key(left, right)
            if key in keys:
                continue
            keys.add(key)
            seen.add(key)
            seen.add(_key(right, left))
            bucket.append((left, right, rel))
        test[n] = bucket
    # Equally many pairs of each operator count, except where short
    # formulas run out of distinct pairs (with one operator there are only
    # a few thousand): a count that stops yielding new pairs passes its
    # remaining share on to the longer counts.
    pairs, keys = [], set()
    for n in range(1, max_train_operators + 1):
        quota = -(-(train_pairs - len(pairs))
                  // (max_train_operators - n + 1))
        drawn, misses = 0, 0
        while drawn < quota:
            left, right, rel = random_pair(n, rng)
            key = _key(left, right)
            if key in seen or key in keys:
                misses += 1
                if misses > 20 * quota + 1000:
                    break
                continue
            keys.add(key)
            pairs.append((left, right, rel))
            drawn += 1
    if len(pairs) < train_pairs:
        raise ValueError(
            f"cannot draw {train_pairs} distinct training pairs with at most "
            f"{max_train_operators} operators (got {len(pairs)}); ask for "
            "fewer with `train_pairs`")
    order = rng.permutation(len(pairs))
    pairs = [pairs[i] for i in order]
    n_valid = int(round(valid_fraction * len(pairs)))
    return {"train": pairs[n_valid:], "valid": pairs[:n_valid],
            "test": test}


def encode(pairs, length=None):
    """Token ids (right-padded with 0) of both sides, and relation ids.

    Returns:
        `(left_ids, right_ids, labels)`, int32 arrays.
    """
    if length is None:
        length = max(max(len(l), len(r)) for l, r, _ in pairs)
    left = np.zeros((len(pairs), length), dtype="int32")
    right = np.zeros((len(pairs), length), dtype="int32")
    for i, (l, r, _) in enumerate(pairs):
        left[i, : len(l)] = [TOKEN_ID[t] for t in l]
        right[i, : len(r)] = [TOKEN_ID[t] for t in r]
    labels = np.array([RELATIONS.index(rel) for _, _, rel in pairs],
                      dtype="int32")
    return left, right, labels


# %% [markdown]
# ## 3. The models
#
# `Embedding(mask_zero=True)` → encoder (last output) on each formula, the
# same weights for both; then `[u, v, u·v, |u−v|]` → `Dense(relu)` →
# `Dense(7, softmax)`. The mask makes the encoder's last output that of the
# last real token, so the padding does not matter.

# %%


def build_model(encoder, units, chunk_size=8, embedding_dim=64,
                hidden=128, learning_rate=2e-3, seed=0):
    """The siamese classifier with an `"onlstm"` or `"lstm"` encoder."""
    import keras

    from on_lstm_keras import ONLSTM

    keras.utils.set_random_seed(seed)
    if encoder == "onlstm":
        rnn = ONLSTM(units, chunk_size, name="encoder")
    elif encoder == "lstm":
        rnn = keras.layers.LSTM(units, name="encoder")
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
    """Trains one model; returns its accuracy per operator count."""
    import keras

    model = build_model(encoder, args.units, args.chunk_size,
                        args.embedding_dim, args.hidden, args.learning_rate,
                        args.seed)
    tl, tr, ty = encode(data["train"])
    vl, vr, vy = encode(data["valid"])
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
    # One padded length for every test bucket: `predict` then traces once.
    length = max(max(len(l), len(r)) for pairs in data["test"].values()
                 for l, r, _ in pairs)
    accuracy = {}
    for n, pairs in data["test"].items():
        l, r, y = encode(pairs, length)
        p = model.predict([l, r], batch_size=256, verbose=0).argmax(-1)
        accuracy[n] = float(np.mean(p == y))
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
# ## 4. Run: data, both models, the table and the picture
#
# The cells from here on train, so they run only when the file is run
# (as a script, or cell by cell in a notebook), not when it is imported.
# First the data: the test pairs of every operator count, then the
# training and validation pairs (1-6 operators, none equal to a test
# pair), the share of each relation, and the majority-class accuracy per
# operator count, the floor both models must beat.

# %%
if __name__ == "__main__":
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    in_notebook = "ipykernel" in sys.modules
    args = parse_args([] if in_notebook else None)
    started = time.time()
    data = make_datasets(args.seed, args.train_pairs, args.test_pairs,
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
    majority = {}
    for n, pairs in data["test"].items():
        labels = [rel for _, _, rel in pairs]
        majority[n] = max(labels.count(r) for r in RELATIONS) / len(labels)

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
# ## 5. Results
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
    print(f"picture: {picture}; total time {time.time() - started:.0f} s")
    if args.json:
        print(json.dumps(as_json))
