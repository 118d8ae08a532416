"""Character-level language modelling, the RRNN paper's experiment.

The pieces of `examples/rrnn_chars.py` that are not the story it tells:
text cleaned to 26 letters and space (`clean_text`), random windows of it
as one-hot inputs and next-character targets (`char_sequences`), bits per
character (`bpc`; `bpc_figures` for JSON), the random search over
learning rate and batch size (`draw_settings`, `tune`), and the models
the example compares: a GRU (`train_gru`), the RRNN-GRU
(`train_rrnn_gru`) and the full RRNN with its tree-distance target
(`full_rrnn_model`).

Every model reads `(length, len(ALPHABET))` one-hot inputs and returns
per-step logits over `ALPHABET`.
"""

import argparse
import math
import re

import keras
import numpy as np

from on_lstm_keras.rrnn.config import TreeConfig
from on_lstm_keras.rrnn.distance import RRNNTreeDistance
from on_lstm_keras.rrnn.gru import prefer_tree
from on_lstm_keras.rrnn.layer import RRNN
from on_lstm_keras.rrnn.replay import replaying
from on_lstm_keras.rrnn.trees import NUM_LEAVES
from on_lstm_keras.rrnn.trees import gru_tree
from on_lstm_keras.rrnn.trees import normalize_tree

ALPHABET = " abcdefghijklmnopqrstuvwxyz"
# A model that does worse than guessing every character with equal
# probability has diverged (or never learned).
UNIFORM_BPC = math.log2(len(ALPHABET))
BATCH_SIZES = (16, 32, 64)
# The models the experiment compares; the GRU is always trained.
MODELS = ("gru", "rrnn_gru", "rrnn")

__all__ = [
    "ALPHABET",
    "MODELS",
    "UNIFORM_BPC",
    "add_experiment_arguments",
    "bpc",
    "bpc_figures",
    "char_sequences",
    "clean_text",
    "draw_settings",
    "evaluate_full_rrnn",
    "failed",
    "full_rrnn_model",
    "is_gru_tree",
    "print_schedule",
    "print_tree_report",
    "slots_under_root",
    "train_gru",
    "train_rrnn_gru",
    "tune",
]


def clean_text(text):
    """Lower-case letters and single spaces only; the PTB text's
    placeholders (`<unk>`, the number token `N`) dropped first."""
    text = text.replace("<unk>", " ").lower()
    text = re.sub(r"\bn\b", " ", text)  # the number placeholder "N"
    text = re.sub(r"[^a-z ]+", " ", text)
    return re.sub(r" +", " ", text).strip()


def char_sequences(text, count, length, rng):
    """`count` random non-overlapping windows of `length + 1` characters
    of `text`: one-hot inputs (the first `length`) and next-character
    targets, drawn with the `numpy.random.RandomState` `rng`."""
    size = length + 1
    available = len(text) // size
    if count > available:
        raise ValueError(
            f"Argument `count` must be at most the {available} windows of "
            f"{size} characters the text holds, received: count={count}"
        )
    starts = rng.choice(available, size=count, replace=False) * size
    codes = np.array([ALPHABET.index(c) for c in text], dtype="int32")
    windows = np.stack([codes[s : s + size] for s in starts])
    inputs = np.eye(len(ALPHABET), dtype="float32")[windows[:, :-1]]
    return inputs, windows[:, 1:]


def bpc(logits, targets):
    """Mean cross-entropy in bits per character."""
    logits = logits - logits.max(-1, keepdims=True)
    log_z = np.log(np.exp(logits).sum(-1))
    picked = np.take_along_axis(logits, targets[..., None], -1)[..., 0]
    return float(np.mean(log_z - picked) / math.log(2))


def bpc_figures(results):
    """The models' scores as JSON figures (the example's `--json` line and
    result record): each value rounded to 4 digits, an infinite or NaN BPC
    (a diverged model) as None, a flag (`failed`) kept as it is.

    Args:
        results: `{model: {"valid_bpc": float, "test_bpc": float, ...}}`.

    Returns:
        A dict of the same shape.
    """
    return {name: {key: value if isinstance(value, bool) else (
        round(value, 4) if math.isfinite(value) else None)
        for key, value in row.items()} for name, row in results.items()}


def failed(score):
    """Whether a validation BPC says its training diverged or never
    learned: not finite, or worse than the uniform guess."""
    return not math.isfinite(score) or score > UNIFORM_BPC


def draw_settings(count, lr_range, seed):
    """`count` draws of `(learning rate, batch size)`: rates log-uniform
    in `lr_range` `(low, high)`, batch sizes from `BATCH_SIZES`, from a
    `RandomState(seed)` of their own (the same draws for every model)."""
    draws = np.random.RandomState(seed)
    low, high = (math.log10(v) for v in lr_range)
    return [(float(10 ** draws.uniform(low, high)),
             int(draws.choice(list(BATCH_SIZES)))) for _ in range(count)]


def tune(label, trials, train, validation_data, report=True):
    """The best of `train(rate, batch)` over the `(rate, batch)` `trials`.

    Args:
        label: The model's name in the printed lines.
        trials: `(learning rate, batch size)` pairs.
        train: Called with each pair; returns a tuple, the model first.
        validation_data: `(x, y)` each trial is scored on (BPC).
        report: Print a line per trial.

    Returns:
        `(score, rate, batch, trained)` of the trial of lowest validation
        BPC; a failed one (`failed`) only when every one failed.
    """
    valid_x, valid_y = validation_data
    chosen = None
    for trial, (rate, batch) in enumerate(trials):
        trained = train(rate, batch)
        score = bpc(trained[0].predict(valid_x, verbose=0), valid_y)
        if report:
            print(f"{label} trial {trial + 1}: learning rate {rate:.4f}, "
                  f"batch {batch}: "
                  + (f"failed (valid BPC {score:.4g}, worse than the "
                     f"uniform guess's {UNIFORM_BPC:.3f})" if failed(score)
                     else f"valid BPC {score:.3f}"))
        if (chosen is None or failed(chosen[0])
                or (not failed(score) and score < chosen[0])):
            chosen = (score, rate, batch, trained)
    return chosen


def _loss():
    return keras.losses.SparseCategoricalCrossentropy(from_logits=True)


def train_gru(units, rate, batch, data, epochs, validation_data=None):
    """A GRU (`reset_after=False`) language model trained with Adam.

    Args:
        units: The GRU's size.
        rate, batch: Learning rate and batch size.
        data: Training `(x, y)`.
        epochs: Epochs of training.
        validation_data: With `(x, y)`, the model ends with the weights of
            its epoch of lowest validation loss (it is never stopped
            early).

    Returns:
        `(model, gru)`: the model and its GRU layer.
    """
    inputs = keras.Input(data[0].shape[1:])
    layer = keras.layers.GRU(units, reset_after=False, return_sequences=True)
    model = keras.Model(inputs, keras.layers.Dense(len(ALPHABET))(
        layer(inputs)))
    model.compile(keras.optimizers.Adam(rate), loss=_loss())
    extra = {}
    if validation_data is not None:
        extra = {
            "validation_data": validation_data,
            "callbacks": [keras.callbacks.EarlyStopping(
                patience=epochs, restore_best_weights=True)],
        }
    model.fit(*data, batch_size=batch, epochs=epochs, verbose=0, **extra)
    return model, layer


def train_rrnn_gru(units, rate, batch, data, epochs, search_config,
                   tuple_config, margin_weight=0.0, l2=0.0,
                   prior_strength=None, clipnorm=0.0):
    """The paper's RRNN-GRU (soft mixtures over the tuples at every merge
    but the GRU's gates) trained with Adam.

    Args:
        units: The layer's size.
        rate, batch: Learning rate and batch size.
        data: Training `(x, y)`.
        epochs: Epochs of training.
        search_config, tuple_config: The layer's `SearchConfig` and
            `TupleConfig`.
        margin_weight: Weight of the margin term.
        l2: L2 weight on the kernels.
        prior_strength: `None` for uniform mixtures at the start, else the
            merge prior on the GRU's tuples (`prefer_tree`).
        clipnorm: Gradient norm clipping (0: none).

    Returns:
        `(model, trees_model)`: the model and one from its inputs to the
        layer's trees (each node's tuple is the argmax of its mixture).
    """
    inputs = keras.Input(data[0].shape[1:])
    layer = RRNN(units, TreeConfig(variant="rrnn_gru", selection="soft"),
                 search_config, tuple_config,
                 margin_weight=margin_weight,
                 kernel_regularizer=keras.regularizers.L2(l2),
                 recurrent_regularizer=keras.regularizers.L2(l2),
                 return_sequences=True, return_trees=True)
    hidden, layer_trees = layer(inputs)
    if prior_strength is not None:
        prefer_tree(layer.cell, gru_tree(), strength=prior_strength)
    model = keras.Model(inputs, keras.layers.Dense(len(ALPHABET))(hidden))
    clip = {"clipnorm": clipnorm} if clipnorm > 0 else {}
    model.compile(keras.optimizers.Adam(rate, **clip), loss=_loss())
    model.fit(*data, batch_size=batch, epochs=epochs, verbose=0)
    return model, keras.Model(inputs, layer_trees)


def full_rrnn_model(layer, gru, length, td_weight):
    """A character model on the full RRNN `layer` (with `return_trees`,
    `return_nodes` and `return_sequences`) and the tree distance to the
    frozen `gru` written as a forced RRNN on the same inputs.

    Returns:
        `(inputs, logits, trees, distance)`: the model's input and the
        tensors of its logits, its layer's trees and the tree distance;
        `keras.Model(inputs, [logits, distance])` is the model to train.
    """
    target = RRNN.from_gru(gru, return_trees=True, return_nodes=True,
                           trainable=False, name="gru_target")
    inputs = keras.Input((length, len(ALPHABET)))
    hidden, trees, nodes = layer(inputs)
    _, target_trees, target_nodes = target(inputs)
    distance = RRNNTreeDistance(td_weight)(
        [trees, nodes, target_trees, target_nodes])
    logits = keras.layers.Dense(len(ALPHABET))(hidden)
    return inputs, logits, trees, distance


def evaluate_full_rrnn(layer, model_tensors, best_tree, valid_x, test_x):
    """Logits, trees and tree distances of a `full_rrnn_model`.

    Args:
        layer: The full RRNN.
        model_tensors: `(inputs, logits, trees, distance)` of
            `full_rrnn_model`.
        best_tree: The tree the fixing stage replayed, or `None`.
        valid_x, test_x: The inputs scored.

    Returns:
        `(logits, test_trees, test_distance)`: `logits`, `[valid, test]`,
        of the model running `best_tree` (its search when `None`); the
        trees its search picks on `test_x` and their distances.
    """
    inputs, logits, trees, distance = model_tensors

    def predict():
        # Built afresh, so that it runs the cell as it is set now.
        predictor = keras.Model(inputs, [logits, trees, distance])
        valid_out = predictor.predict(valid_x, verbose=0, batch_size=64)
        test_out = predictor.predict(test_x, verbose=0, batch_size=64)
        return [valid_out[0], test_out[0]], test_out[1], test_out[2]

    searched, test_trees, test_distance = predict()
    if best_tree is None:
        return searched, test_trees, test_distance
    with replaying(layer.cell, best_tree):
        fixed = predict()[0]
    print("RRNN: the fixed tree is "
          + ("the GRU tree" if is_gru_tree(layer, best_tree)
             else "not the GRU tree")
          + ": " + layer.tree_expression(np.array(best_tree)))
    return fixed, test_trees, test_distance


def slots_under_root(tree):
    """The slots the root's value depends on (a tree may leave merges
    unused with pool "all"): a set of slot numbers, the root's included.
    """
    seen, stack = set(), [len(tree) + NUM_LEAVES - 1]
    while stack:
        slot = stack.pop()
        if slot not in seen:
            seen.add(slot)
            if slot >= NUM_LEAVES:
                stack.extend(int(c) for c in tree[slot - NUM_LEAVES][:2])
    return seen


# -- flags ------------------------------------------------------------------


def add_experiment_arguments(parser):
    """Adds the flags of `examples/rrnn_chars.py` to the argparse
    `parser`: sizes, epochs, the random search, the models, and the RRNN
    layers' settings. Counts, the learning-rate range and the model list
    are checked as they are read."""
    one, zero = _at_least(1), _at_least(0)
    add = parser.add_argument
    add("--train", type=one, default=10000,
        help="training sequences of the GRU and RRNN-GRU (the paper's)")
    add("--rrnn-train", type=one, default=1000,
        help="training sequences of the full RRNN (the paper: 5,000)")
    add("--valid", type=one, default=1000)
    add("--test", type=one, default=2000)
    add("--length", type=one, default=20, help="characters per sequence")
    add("--units", type=one, default=100)
    add("--epochs", type=one, default=6,
        help="epochs of the GRU trials and the RRNN-GRU")
    add("--rrnn-epochs", type=one, default=2,
        help="epochs of the full RRNN's search stage")
    add("--rrnn-fix-epochs", type=zero, default=20,
        help="epochs of the full RRNN's fixing stage (0: none)")
    add("--replay", default="tree", choices=("tree", "batch_step"),
        help="what the fixing stage replays: the best tree at every step, "
             "or the best tree of each training batch and step")
    add("--replay-candidates", type=one, default=5,
        help="with --replay tree: of each search epoch's this many most "
             "frequent trees, replay the one whose replay does best")
    add("--score-rate", type=_positive, default=None,
        help="learning rate of the full RRNN's scoring weights (default: "
             "the tuned GRU's)")
    add("--gru-trials", type=one, default=3,
        help="trials of the GRU's random search")
    add("--lr-range", type=_lr_range, default="0.001,0.01",
        help="LOW,HIGH: learning rates are drawn log-uniformly in it")
    add("--models", type=_model_list, default=",".join(MODELS),
        help=f"models to train, from {', '.join(MODELS)} (gru always)")
    add("--score-units", type=int, default=16)
    add("--pool", default="roots", choices=("all", "roots"))
    add("--margin-weight", type=float, default=0.1)
    add("--td-weight", type=float, default=0.003)
    add("--l2", type=float, default=1e-8)
    add("--rrnn-gru-start", default="gru", choices=("gru", "uniform"),
        help="start the RRNN-GRU's mixtures leaning to the GRU's tuples, "
             "or uniform (the authors' code)")
    add("--prior-strength", type=float, default=4.0,
        help="merge prior on the GRU's tuples at the RRNN-GRU's start")
    add("--rrnn-gru-trials", type=zero, default=0,
        help="tune the RRNN-GRU by the GRU's draws too (0: train it once at "
             "the GRU's best setting)")
    add("--trainable-identity", action="store_true",
        help="let the RRNN-GRU's identity tuple (I, I, 0) train")
    add("--rrnn-fixed-identity", action="store_true",
        help="hold the full RRNN's identity tuple fixed too")
    add("--rrnn-read-inputs", default=True,
        action=argparse.BooleanOptionalAction,
        help="keep the full RRNN's search to trees that read x_t and h_(t-1)")
    add("--clipnorm", type=float, default=1.0,
        help="gradient norm clipping of the RRNN models (0: none)")
    add("--warm-start", action="store_true",
        help="start the full RRNN at the tuned GRU (weights and tree)")
    add("--top", type=int, default=5, help="most frequent trees shown")
    add("--seed", type=int, default=0)
    add("--json", action="store_true",
        help="print the BPCs as JSON on the last line")
    add("--record", metavar="FILE",
        help="write the result record of the BPCs (with the command, "
             "commit, machine and versions) to FILE")


def _positive(text):
    if not float(text) > 0:
        raise argparse.ArgumentTypeError(
            f"must be positive, received {text}")
    return float(text)


def _at_least(low):
    """An argparse `type`: an integer of at least `low`."""
    def parse(text):
        if int(text) < low:
            raise argparse.ArgumentTypeError(
                f"must be at least {low}, received {text}")
        return int(text)
    return parse


def _lr_range(text):
    """An argparse `type`: `"LOW,HIGH"` as `(low, high)`, `0 < low <=
    high`."""
    try:
        low, high = (float(v) for v in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"must be two numbers LOW,HIGH, received {text!r}") from None
    if not 0 < low <= high or not math.isfinite(high):
        raise argparse.ArgumentTypeError(
            f"needs 0 < LOW <= HIGH, received {text!r}")
    return low, high


def _model_list(text):
    """An argparse `type`: comma-separated names from `MODELS`, `"gru"`
    among them, as a list in `MODELS`' order."""
    models = [m.strip() for m in text.split(",") if m.strip()]
    if any(m not in MODELS for m in models) or "gru" not in models:
        raise argparse.ArgumentTypeError(
            f"takes names from {', '.join(MODELS)} and must include gru, "
            f"received {text!r}")
    return [m for m in MODELS if m in models]


# -- reports ----------------------------------------------------------------


def is_gru_tree(layer, tree):
    """Whether `tree` (merges as indices, or `None`) is `gru_tree()` in
    `layer`'s operations and activations."""
    gru_row = np.array(normalize_tree(
        gru_tree(), operations=layer.operations,
        activations=layer.activations))
    return tree is not None and np.array_equal(np.array(tree), gru_row)


def print_schedule(schedule, layer, fix_epochs):
    """Prints a line per epoch of a `fit_search_and_fix` result, the
    candidate trees and the fixing epoch whose weights were kept."""
    for record in schedule["epochs"]:
        name = ("the GRU tree" if is_gru_tree(layer, record["tree"])
                else "another tree")
        print(f"RRNN {record['stage']} epoch ({record['trained']} "
              f"weights): loss {record['loss']:.3f}, valid loss "
              f"{record['val_loss']:.3f}, most frequent tree: {name}")
    for tree, val_loss in schedule.get("candidates", []):
        print(f"RRNN: candidate tree, replayed valid loss {val_loss:.3f}"
              + (" (replayed)" if tree == schedule["best_tree"] else ""))
    if schedule["best_fix_epoch"] is not None:
        print(f"RRNN: the fixing stage keeps the weights of its epoch "
              f"{schedule['best_fix_epoch']} of {fix_epochs} "
              "(0: those it started with), the lowest validation loss")


def print_tree_report(layer, trees, top):
    """Prints how the trees `(batch, steps, iterations, 5)` that `layer`
    picked read `h_(t-1)`, how many merges lie under the root, how often
    the GRU's tree was picked, and the `top` most frequent trees."""
    gru_text = layer.tree_expression(np.array(normalize_tree(
        gru_tree(), operations=layer.operations,
        activations=layer.activations)))
    counts = layer.most_common_trees(trees, top=None)
    total = trees.shape[0] * trees.shape[1]
    is_gru = sum(c for text, c, _ in counts if text == gru_text)
    reached = [slots_under_root(tree)
               for tree in trees.reshape(-1, layer.iterations, 5)]
    print(f"full RRNN: {np.mean([1 in r for r in reached]):.0%} of test "
          f"steps depend on h_(t-1); the tree under h_t uses "
          f"{np.mean([len([s for s in r if s >= 3]) for r in reached]):.1f} "
          f"of {layer.iterations} merges")
    print(f"full RRNN: GRU tree at {is_gru}/{total} test steps; "
          f"{len(counts)} distinct trees; most frequent:")
    for text, count, share in counts[:top]:
        print(f"  {share:6.1%}  {text}")
