"""Training an RRNN the way its authors did: two optimisers, two stages.

`split_weights` separates the scoring weights of an `RRNN` (the score MLP
and the merge prior) from the cell's weights. `fit_search_and_fix` trains a
model holding an `RRNN` in cycles of two stages:

- a search stage: the layer searches its trees; the scoring weights and the
  cell weights are trained by their own optimisers, each for
  `switch_every` epochs in turn. After every search epoch the trees are
  recorded;
- a fixing stage: recorded trees are replayed (the layer runs them as
  forced trees) and only the cell weights are trained.

Two ways to record and replay (`replay`):

- `"tree"`: after each search epoch, the most frequent tree on a sample of
  the training data is recorded with the validation loss; the tree with the
  lowest one is replayed at every step of every batch (with
  `replay_candidates`, several trees per epoch are recorded and the one
  whose own replay has the lowest validation loss is replayed).
- `"batch_step"` (the authors' code): the training data is cut into fixed
  batches (in order, not shuffled); after each search epoch, for every
  batch `b` and step `t`, the batch's most frequent tree at `t` is recorded
  with the batch's task loss at `t`; the fixing stage replays, at step `t`
  of batch `b`, the tree with the lowest recorded loss for `(b, t)`.
"""

import collections
import math

import numpy as np

from on_lstm_keras.utils import validation as check
from on_lstm_keras.rrnn.trees import normalize_tree

REPLAYS = ("tree", "batch_step")
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


def _train_only(model, variables, optimizer, loss, eager=False):
    """Recompiles `model` so that only `variables` (among its trainable
    weights) are trained, by `optimizer` (whose state carries over)."""
    keep = {id(v) for v in variables}
    for variable in model.weights:
        variable.trainable = id(variable) in keep
    model.compile(optimizer=optimizer, loss=loss, run_eagerly=eager)


def _restore(model, trainable):
    for variable in model.weights:
        variable.trainable = trainable[id(variable)]


def most_frequent_tree(trees):
    """The most frequent tree `(iterations, 5)` among `(..., iterations, 5)`
    integer trees, ignoring padded (`-1`) steps; `None` if there is none."""
    found = most_frequent_trees(trees, 1)
    return found[0] if found else None


def most_frequent_trees(trees, count):
    """The `count` most frequent trees among `(..., iterations, 5)` integer
    trees, most frequent first (ties in order of first appearance),
    ignoring padded (`-1`) steps: a list of up to `count` tuples."""
    trees = np.asarray(trees)
    rows = trees.reshape(-1, trees.shape[-2], trees.shape[-1])
    counts = collections.Counter(
        tuple(map(tuple, tree)) for tree in rows if tree[0, 0] >= 0
    )
    return [tree for tree, _ in counts.most_common(count)]


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
    replay="tree",
    restore_best=False,
    replay_candidates=1,
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
            counted after each search epoch (`replay="tree"`).
        replay: `"tree"` (default) or `"batch_step"`: what the fixing stage
            replays (see the module docstring). With `"batch_step"` the
            model's first output must be the per-step prediction that
            `loss` (the first loss, if a list) scores against `y`, shaped
            `(batch, steps, ...)`; the fixing stage trains batch by batch in
            eager mode (each batch its own trees), and its validation loss
            is that of the search.
        restore_best: Whether each fixing stage ends with the weights of
            its epoch of lowest validation loss, counting the weights it
            started with (as `keras.callbacks.EarlyStopping(
            restore_best_weights=True)` would, never stopping early). A
            replayed tree can diverge (a chain of identity nodes on `h` is
            a linear recurrence); the stage then keeps its best weights, at
            worst those it started with. A non-finite loss is never best.
        replay_candidates: Positive integer, with `replay="tree"`: after
            each search epoch the `replay_candidates` most frequent trees
            of the sample are recorded. With 1 (default) the fixing stage
            replays the recorded tree of the search epoch of lowest
            validation loss; with more, every distinct recorded tree is
            replayed on the validation data with the weights the search
            ended with, and the one of lowest validation loss is replayed
            (the loss of a tree as it will run, not of the search that
            picked it).
        verbose: Passed to `model.fit`.

    The weights' `trainable` flags are restored at the end, but the model
    stays compiled for the last stage: compile it again before training it
    any other way.

    Returns:
        A dict: `"epochs"`, one record per epoch (`stage`, `trained`,
        `loss`, `val_loss`, `tree`: the most frequent tree of the sample
        for search epochs, the replayed one for fixing epochs); with
        `replay="tree"`, `"best_tree"`, the tree replayed by the last fixing
        stage (or `None`); with `replay="batch_step"`, also `"step_trees"`
        and `"step_losses"` in each search record (int
        `(batches, steps, iterations, 5)` and `(batches, steps)`), and
        `"best_trees"`, the trees replayed by the last fixing stage (or
        `None`); with `replay_candidates > 1`, `"candidates"`, the
        `(tree, validation loss)` pairs that the last fixing stage chose
        from; `"best_fix_epoch"`, with `restore_best`, the fixing epoch
        whose weights the last fixing stage ended with (`0`: those it
        started with; `None` without `restore_best` or a fixing stage).
    """
    for name, value in (
        ("batch_size", batch_size),
        ("search_epochs", search_epochs),
        ("cycles", cycles),
        ("switch_every", switch_every),
        ("tree_sample", tree_sample),
        ("replay_candidates", replay_candidates),
    ):
        check.positive_int(name, value)
    check.non_negative_int("fix_epochs", fix_epochs)
    replay = check.choice("replay", replay, REPLAYS)
    check.boolean("restore_best", restore_best)
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
    best_tree = best_trees = best_fix_epoch = candidates = None

    def fix_start():
        if not restore_best:
            return None
        return _BestWeights(
            cell_weights, _evaluate(model, val_x, val_y, batch_size)
        )

    def fix_end(best):
        nonlocal best_fix_epoch
        if best is not None:
            best_fix_epoch = best.restore()

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
                record = {
                    "stage": "search",
                    "trained": trained,
                    "loss": float(history.history["loss"][-1]),
                    "val_loss": val_loss,
                }
                if replay == "tree":
                    frequent = most_frequent_trees(
                        trees_model.predict(
                            x[:tree_sample], batch_size=batch_size, verbose=0
                        ),
                        replay_candidates,
                    )
                    record["tree"] = frequent[0] if frequent else None
                    if replay_candidates > 1:
                        record["trees"] = frequent
                    recorded.append((val_loss, frequent))
                else:
                    step_trees, step_losses = _per_batch_and_step(
                        model, trees_model, x, y, loss, batch_size
                    )
                    record["tree"] = most_frequent_tree(step_trees)
                    record["step_trees"] = step_trees
                    record["step_losses"] = step_losses
                    recorded.append((step_losses, step_trees))
                records.append(record)
            if not fix_epochs:
                continue
            if replay == "tree" and replay_candidates > 1:
                candidates = _replayed_losses(
                    model, cell, recorded, cell_weights, cell_optimizer,
                    loss, val_x, val_y, batch_size,
                )
                best_tree = min(
                    candidates, key=lambda c: _finite_or_inf(c[1])
                )[0]
            elif replay == "tree":
                best_tree = min(
                    (r for r in recorded if r[1]), key=lambda r: r[0]
                )[1][0]
            if replay == "tree":
                with replaying(cell, best_tree):
                    _train_only(model, cell_weights, cell_optimizer, loss)
                    best = fix_start()
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
                        if best is not None:
                            best.update(records[-1]["val_loss"])
                    fix_end(best)
                continue
            best_trees = best_per_batch_and_step(recorded)
            best = fix_start()
            for _ in range(fix_epochs):
                losses = []
                _train_only(
                    model, cell_weights, cell_optimizer, loss, eager=True
                )
                for b, start in enumerate(range(0, len(x), batch_size)):
                    with replaying(cell, best_trees[b]):
                        result = model.train_on_batch(
                            x[start : start + batch_size],
                            y[start : start + batch_size],
                        )
                    losses.append(float(np.ravel(result)[0]))
                _train_only(model, cell_weights, cell_optimizer, loss)
                records.append({
                    "stage": "fix",
                    "trained": "cell",
                    "loss": float(np.mean(losses)),
                    "val_loss": _evaluate(model, val_x, val_y, batch_size),
                    "tree": most_frequent_tree(best_trees),
                })
                if best is not None:
                    best.update(records[-1]["val_loss"])
            fix_end(best)
    finally:
        _restore(model, trainable)
    result = {
        "epochs": records,
        "best_tree": best_tree,
        "best_fix_epoch": best_fix_epoch,
    }
    if candidates is not None:
        result["candidates"] = candidates
    if replay == "batch_step":
        result["best_trees"] = best_trees
    return result


def _replayed_losses(model, cell, recorded, cell_weights, optimizer, loss,
                     val_x, val_y, batch_size):
    """`[(tree, validation loss)]` of every distinct recorded tree, each
    replayed with the current weights, in order of first recording."""
    trees = []
    for _, frequent in recorded:
        trees.extend(t for t in frequent if t not in trees)
    losses = []
    for tree in trees:
        with replaying(cell, tree):
            # Compiled afresh so that the evaluation traces the forced tree.
            _train_only(model, cell_weights, optimizer, loss)
            losses.append((tree, _evaluate(model, val_x, val_y, batch_size)))
    return losses


def _finite_or_inf(value):
    return value if math.isfinite(value) else math.inf


class _BestWeights:
    """The values of `variables` at the epoch of lowest finite loss seen so
    far (epoch 0: when this was made, with `loss`)."""

    def __init__(self, variables, loss):
        self.variables = variables
        self.epoch = 0
        self.best_epoch = self.loss = self.values = None
        self._consider(loss)

    def _consider(self, loss):
        if math.isfinite(loss) and (self.loss is None or loss < self.loss):
            self.loss, self.best_epoch = loss, self.epoch
            self.values = [np.array(v.numpy(), copy=True)
                           for v in self.variables]

    def update(self, loss):
        self.epoch += 1
        self._consider(loss)

    def restore(self):
        """Puts the best values back; returns their epoch (`None`, and
        nothing restored, when no loss was finite)."""
        if self.values is not None:
            for variable, value in zip(self.variables, self.values):
                variable.assign(value)
        return self.best_epoch


def best_per_batch_and_step(recorded):
    """The recorded tree with the lowest loss at each (batch, step).

    Args:
        recorded: `[(losses, trees), ...]`, one pair per search epoch:
            losses `(batches, steps)`, trees `(batches, steps, iterations,
            5)`. On a tie the earlier epoch's tree is kept.

    Returns:
        An int array `(batches, steps, iterations, 5)`.
    """
    losses = np.stack([np.asarray(r[0]) for r in recorded])
    trees = np.stack([np.asarray(r[1]) for r in recorded])
    best = np.argmin(losses, axis=0)  # (batches, steps), first on ties
    return np.take_along_axis(
        trees, best[None, :, :, None, None], axis=0
    )[0]


def _per_batch_and_step(model, trees_model, x, y, loss, batch_size):
    """Each fixed batch's most frequent tree and mean task loss per step:
    `(trees (batches, steps, iterations, 5), losses (batches, steps))`."""
    import keras
    from keras import ops

    first = loss[0] if isinstance(loss, (list, tuple)) else loss
    first = keras.losses.get(first)
    predicted = model.predict(x, batch_size=batch_size, verbose=0)
    if isinstance(predicted, (list, tuple)):
        predicted = predicted[0]
    trees = np.asarray(
        trees_model.predict(x, batch_size=batch_size, verbose=0)
    )
    unreduced = first.call if isinstance(first, keras.losses.Loss) else first
    per_step = ops.convert_to_numpy(
        unreduced(ops.convert_to_tensor(y), ops.convert_to_tensor(predicted))
    )
    if per_step.ndim != 2 or trees.ndim != 4:
        raise ValueError(
            "Argument `replay='batch_step'` needs a model whose first output "
            "is a per-step prediction and an RRNN with return_sequences=True"
            f", received: per-step loss shape {per_step.shape}, trees shape "
            f"{trees.shape}"
        )
    step_trees, step_losses = [], []
    for start in range(0, len(x), batch_size):
        batch = trees[start : start + batch_size]
        step_trees.append(np.stack([
            np.array(most_frequent_tree(batch[:, t]))
            for t in range(batch.shape[1])
        ]))
        step_losses.append(per_step[start : start + batch_size].mean(0))
    return np.stack(step_trees), np.stack(step_losses)


def _evaluate(model, x, y, batch_size):
    result = model.evaluate(x, y, batch_size=batch_size, verbose=0)
    return float(result[0] if isinstance(result, (list, tuple)) else result)


class replaying:
    """Runs `cell` as forced trees inside a `with` block.

    The fixing stage of `fit_search_and_fix` trains inside it; use it to
    evaluate a model with the tree that stage replayed (build the model or
    its predictor afresh inside the block: a function Keras has already
    traced keeps the search).

    Args:
        cell: An `RRNNCell` (`layer.cell`) with `variant="rrnn"`.
        tree: One tree, `cell.iterations` merges `(i, j, k, op, act)`
            (names or indices), e.g. `fit_search_and_fix(...)["best_tree"]`,
            run at every step; or one such tree per time step, an array
            `(steps, iterations, 5)`: step `t` of the sequence runs tree
            `t` (the layer unrolls its loop; inputs must have `steps`
            steps).
    """

    def __init__(self, cell, tree):
        self.cell = cell
        per_step = np.asarray(tree, dtype=object).ndim == 3
        trees = tree if per_step else [tree]
        self.trees = tuple(
            tuple(
                normalize_tree(
                    t,
                    iterations=cell.iterations,
                    tuples=cell.tuples,
                    operations=cell.operations,
                    activations=cell.activations,
                    pool=cell.pool,
                )
            )
            for t in trees
        )
        self.per_step = per_step

    def __enter__(self):
        cell = self.cell
        self.saved = (cell.selection, cell.tree, cell.step_trees)
        cell.selection = "forced"
        cell.tree = list(self.trees[0])
        cell.step_trees = self.trees if self.per_step else None
        return self

    def __exit__(self, *exc):
        (self.cell.selection, self.cell.tree,
         self.cell.step_trees) = self.saved
        return False
