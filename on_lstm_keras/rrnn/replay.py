"""Recording the trees an RRNN search picks, and replaying them.

`replaying` runs a cell as forced trees inside a `with` block: one tree at
every step, or one tree per time step. The other functions read the trees
a search picked: the most frequent ones, or, per fixed batch and step, the
most frequent tree and the task loss there (`per_batch_and_step`) and the
recorded tree of lowest loss (`best_per_batch_and_step`).
"""

import collections

import keras
import numpy as np
from keras import ops

from on_lstm_keras.rrnn.trees import normalize_tree


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


def per_batch_and_step(model, trees_model, x, y, loss, batch_size):
    """Each fixed batch's most frequent tree and mean task loss per step:
    `(trees (batches, steps, iterations, 5), losses (batches, steps))`."""
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
