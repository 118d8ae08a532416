"""Training an RRNN the way its authors did: two optimisers, two stages.

`split_weights` separates the scoring weights of an `RRNN` (the score MLP
and the merge prior) from the cell's weights. `fit_search_and_fix` trains a
model holding an `RRNN` in cycles of two stages:

- a search stage: the layer searches its trees; the scoring weights and the
  cell weights are trained by their own optimisers, each for
  `switch_every` epochs in turn. After every search epoch the layer's most
  frequent tree on a sample of the training data is recorded with the
  validation loss;
- a fixing stage: the tree with the lowest recorded validation loss is
  replayed (the layer runs it as a forced tree) and only the cell weights
  are trained.

The authors' code records the best tree per batch and time step; here one
tree (the most frequent of the best epoch) is replayed for every step.
"""

import collections

import numpy as np

from on_lstm_keras import _validation as check
from on_lstm_keras.rrnn.trees import normalize_tree

SCORE_WEIGHTS = (
    "score_hidden_kernel",
    "score_hidden_bias",
    "score_kernel",
    "merge_prior",
)


def split_weights(layer):
    """`(scoring, cell)` weight lists of a built `RRNN` layer.

    Args:
        layer: A built `RRNN`.

    Returns:
        Two lists of variables: the score MLP and merge prior, and every
        other weight of the layer.
    """
    scoring = [v for v in layer.weights if _name(v) in SCORE_WEIGHTS]
    ids = {id(v) for v in scoring}
    return scoring, [v for v in layer.weights if id(v) not in ids]


def _name(variable):
    return variable.path.split("/")[-1] if hasattr(variable, "path") else (
        variable.name
    )


def _train_only(model, variables, optimizer, loss):
    """Recompiles `model` so that only `variables` (among its trainable
    weights) are trained, by `optimizer` (whose state carries over)."""
    keep = {id(v) for v in variables}
    for variable in model.weights:
        variable.trainable = id(variable) in keep
    model.compile(optimizer=optimizer, loss=loss)


def _restore(model, trainable):
    for variable in model.weights:
        variable.trainable = trainable[id(variable)]


def most_frequent_tree(trees):
    """The most frequent tree `(iterations, 5)` among `(..., iterations, 5)`
    integer trees, ignoring padded (`-1`) steps; `None` if there is none."""
    trees = np.asarray(trees)
    rows = trees.reshape(-1, trees.shape[-2], trees.shape[-1])
    counts = collections.Counter(
        tuple(map(tuple, tree)) for tree in rows if tree[0, 0] >= 0
    )
    if not counts:
        return None
    return counts.most_common(1)[0][0]


def fit_search_and_fix(
    model,
    layer,
    x,
    y,
    trees_model,
    validation_data,
    score_optimizer,
    cell_optimizer,
    loss,
    batch_size=32,
    search_epochs=2,
    fix_epochs=1,
    cycles=1,
    switch_every=1,
    tree_sample=256,
    verbose=0,
):
    """Trains `model` in search and fixing stages with two optimisers.

    Args:
        model: A `keras.Model` that holds `layer`; it is (re)compiled here.
        layer: The `RRNN` to train, with `selection="hard"` or `"soft"` and
            the default `variant="rrnn"`.
        x, y: Training inputs and targets (as for `model.fit`).
        trees_model: A `keras.Model` from the same inputs to `layer`'s trees
            output (the layer needs `return_trees=True`).
        validation_data: `(x, y)` on which each search epoch is scored.
        score_optimizer: Optimizer of the scoring weights (score MLP and
            merge prior).
        cell_optimizer: Optimizer of every other trainable weight.
        loss: The loss, as for `model.compile`.
        batch_size: Positive integer.
        search_epochs: Positive integer, epochs of each search stage.
        fix_epochs: Non-negative integer, epochs of each fixing stage.
        cycles: Positive integer, number of (search, fix) cycles.
        switch_every: Positive integer: during a search stage the cell
            weights train for this many epochs, then the scoring weights
            for as many, and so on (the cell first).
        tree_sample: Positive integer, training samples whose trees are
            counted after each search epoch.
        verbose: Passed to `model.fit`.

    The weights' `trainable` flags are restored at the end, but the model
    stays compiled for the last stage: compile it again before training it
    any other way.

    Returns:
        A dict: `"epochs"`, one record per epoch (`stage`, `trained`,
        `loss`, `val_loss`, `tree` for search epochs); `"best_tree"`, the
        tree replayed by the last fixing stage (or `None`).
    """
    for name, value in (
        ("batch_size", batch_size),
        ("search_epochs", search_epochs),
        ("cycles", cycles),
        ("switch_every", switch_every),
        ("tree_sample", tree_sample),
    ):
        check.positive_int(name, value)
    check.non_negative_int("fix_epochs", fix_epochs)
    cell = layer.cell
    if cell.selection == "forced" or cell.variant != "rrnn":
        raise ValueError(
            "Argument `layer` must search its trees (selection 'hard' or "
            "'soft', variant 'rrnn'), received: "
            f"selection={cell.selection!r}, variant={cell.variant!r}"
        )
    trainable = {id(v): v.trainable for v in model.weights}
    scoring, _ = split_weights(layer)
    scoring_ids = {id(v) for v in scoring}
    cell_weights = [
        v for v in model.weights
        if trainable[id(v)] and id(v) not in scoring_ids
    ]
    scoring = [v for v in scoring if trainable[id(v)]]
    val_x, val_y = validation_data
    records, recorded = [], []
    best_tree = None
    try:
        for _ in range(cycles):
            for epoch in range(search_epochs):
                phase = (epoch // switch_every) % 2
                trained = "cell" if phase == 0 else "score"
                _train_only(
                    model,
                    cell_weights if trained == "cell" else scoring,
                    cell_optimizer if trained == "cell" else score_optimizer,
                    loss,
                )
                history = model.fit(
                    x, y, batch_size=batch_size, epochs=1, verbose=verbose
                )
                val_loss = _evaluate(model, val_x, val_y, batch_size)
                tree = most_frequent_tree(
                    trees_model.predict(
                        x[:tree_sample], batch_size=batch_size, verbose=0
                    )
                )
                recorded.append((val_loss, tree))
                records.append({
                    "stage": "search",
                    "trained": trained,
                    "loss": float(history.history["loss"][-1]),
                    "val_loss": val_loss,
                    "tree": tree,
                })
            if not fix_epochs:
                continue
            best_tree = min(
                (r for r in recorded if r[1] is not None),
                key=lambda r: r[0],
            )[1]
            with _replaying(cell, best_tree):
                _train_only(model, cell_weights, cell_optimizer, loss)
                for _ in range(fix_epochs):
                    history = model.fit(
                        x, y, batch_size=batch_size, epochs=1,
                        verbose=verbose,
                    )
                    records.append({
                        "stage": "fix",
                        "trained": "cell",
                        "loss": float(history.history["loss"][-1]),
                        "val_loss": _evaluate(
                            model, val_x, val_y, batch_size
                        ),
                        "tree": best_tree,
                    })
    finally:
        _restore(model, trainable)
    return {"epochs": records, "best_tree": best_tree}


def _evaluate(model, x, y, batch_size):
    result = model.evaluate(x, y, batch_size=batch_size, verbose=0)
    return float(result[0] if isinstance(result, (list, tuple)) else result)


class _replaying:
    """Runs `cell` as a forced tree inside a `with` block."""

    def __init__(self, cell, tree):
        self.cell = cell
        self.tree = normalize_tree(
            tree,
            iterations=cell.iterations,
            tuples=cell.tuples,
            operations=cell.operations,
            activations=cell.activations,
            pool=cell.pool,
        )

    def __enter__(self):
        self.saved = (self.cell.selection, self.cell.tree)
        self.cell.selection, self.cell.tree = "forced", self.tree
        return self

    def __exit__(self, *exc):
        self.cell.selection, self.cell.tree = self.saved
        return False
