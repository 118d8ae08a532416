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

import math

import numpy as np

from on_lstm_keras.utils import validation as check
from on_lstm_keras.rrnn.replay import best_per_batch_and_step
from on_lstm_keras.rrnn.replay import most_frequent_tree
from on_lstm_keras.rrnn.replay import most_frequent_trees
from on_lstm_keras.rrnn.replay import per_batch_and_step
from on_lstm_keras.rrnn.replay import replaying

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


def _evaluate(model, x, y, batch_size):
    result = model.evaluate(x, y, batch_size=batch_size, verbose=0)
    return float(result[0] if isinstance(result, (list, tuple)) else result)


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
    run = _SearchAndFix(
        model, layer, (x, y), trees_model, validation_data,
        (score_optimizer, cell_optimizer), loss, batch_size, verbose,
    )
    try:
        for _ in range(cycles):
            for epoch in range(search_epochs):
                phase = (epoch // switch_every) % 2
                run.search_epoch("cell" if phase == 0 else "score", replay,
                                 tree_sample, replay_candidates)
            if not fix_epochs:
                continue
            if replay == "tree":
                run.fix_tree(run.choose_tree(replay_candidates), fix_epochs,
                             restore_best)
            else:
                run.fix_batch_steps(fix_epochs, restore_best)
    finally:
        run.restore_trainable()
    return run.result(replay)


class _SearchAndFix:
    """The state of one `fit_search_and_fix` run: the two weight groups,
    the records of its epochs and the trees recorded for the fixing stage.
    """

    def __init__(self, model, layer, data, trees_model, validation_data,
                 optimizers, loss, batch_size, verbose):
        self.model, self.cell, self.loss = model, layer.cell, loss
        self.x, self.y = data
        self.val_x, self.val_y = validation_data
        self.trees_model = trees_model
        self.score_optimizer, self.cell_optimizer = optimizers
        self.batch_size, self.verbose = batch_size, verbose
        self.trainable = {id(v): v.trainable for v in model.weights}
        scoring, _ = split_weights(layer)
        scoring_ids = {id(v) for v in scoring}
        self.cell_weights = [
            v for v in model.weights
            if self.trainable[id(v)] and id(v) not in scoring_ids
        ]
        self.scoring = [v for v in scoring if self.trainable[id(v)]]
        self.records, self.recorded = [], []
        self.best_tree = self.best_trees = self.best_fix_epoch = None
        self.candidates = None

    def restore_trainable(self):
        for variable in self.model.weights:
            variable.trainable = self.trainable[id(variable)]

    def _fit_epoch(self):
        history = self.model.fit(
            self.x, self.y, batch_size=self.batch_size, epochs=1,
            verbose=self.verbose,
        )
        return float(history.history["loss"][-1])

    def _val_loss(self):
        return _evaluate(self.model, self.val_x, self.val_y, self.batch_size)

    def _train_cell(self, eager=False):
        _train_only(self.model, self.cell_weights, self.cell_optimizer,
                    self.loss, eager=eager)

    def search_epoch(self, trained, replay, tree_sample, replay_candidates):
        """One search epoch training the `trained` weights ("cell" or
        "score"), then the trees it picks recorded for `replay`."""
        if trained == "cell":
            self._train_cell()
        else:
            _train_only(self.model, self.scoring, self.score_optimizer,
                        self.loss)
        record = {"stage": "search", "trained": trained,
                  "loss": self._fit_epoch()}
        record["val_loss"] = val_loss = self._val_loss()
        if replay == "tree":
            frequent = most_frequent_trees(
                self.trees_model.predict(
                    self.x[:tree_sample], batch_size=self.batch_size,
                    verbose=0,
                ),
                replay_candidates,
            )
            record["tree"] = frequent[0] if frequent else None
            if replay_candidates > 1:
                record["trees"] = frequent
            self.recorded.append((val_loss, frequent))
        else:
            step_trees, step_losses = per_batch_and_step(
                self.model, self.trees_model, self.x, self.y, self.loss,
                self.batch_size,
            )
            record["tree"] = most_frequent_tree(step_trees)
            record["step_trees"] = step_trees
            record["step_losses"] = step_losses
            self.recorded.append((step_losses, step_trees))
        self.records.append(record)

    def choose_tree(self, replay_candidates):
        """The recorded tree that the fixing stage replays."""
        if replay_candidates > 1:
            self.candidates = self._replayed_losses()
            return min(
                self.candidates, key=lambda c: _finite_or_inf(c[1])
            )[0]
        return min(
            (r for r in self.recorded if r[1]), key=lambda r: r[0]
        )[1][0]

    def _replayed_losses(self):
        """`[(tree, validation loss)]` of every distinct recorded tree,
        each replayed with the current weights, in order of first
        recording."""
        trees = []
        for _, frequent in self.recorded:
            trees.extend(t for t in frequent if t not in trees)
        losses = []
        for tree in trees:
            with replaying(self.cell, tree):
                # Compiled afresh so that the evaluation traces the tree.
                self._train_cell()
                losses.append((tree, self._val_loss()))
        return losses

    def _best_weights(self, restore_best):
        if not restore_best:
            return None
        return _BestWeights(self.cell_weights, self._val_loss())

    def _end_fix(self, best):
        if best is not None:
            self.best_fix_epoch = best.restore()

    def _record_fix(self, loss, tree, best):
        self.records.append({
            "stage": "fix", "trained": "cell", "loss": loss,
            "val_loss": self._val_loss(), "tree": tree,
        })
        if best is not None:
            best.update(self.records[-1]["val_loss"])

    def fix_tree(self, tree, fix_epochs, restore_best):
        """A fixing stage that replays `tree` at every step."""
        self.best_tree = tree
        with replaying(self.cell, tree):
            self._train_cell()
            best = self._best_weights(restore_best)
            for _ in range(fix_epochs):
                self._record_fix(self._fit_epoch(), tree, best)
            self._end_fix(best)

    def fix_batch_steps(self, fix_epochs, restore_best):
        """A fixing stage that replays, at each step of each fixed batch,
        the recorded tree of lowest loss there."""
        self.best_trees = best_per_batch_and_step(self.recorded)
        best = self._best_weights(restore_best)
        for _ in range(fix_epochs):
            losses = []
            self._train_cell(eager=True)
            for b, start in enumerate(range(0, len(self.x), self.batch_size)):
                with replaying(self.cell, self.best_trees[b]):
                    result = self.model.train_on_batch(
                        self.x[start : start + self.batch_size],
                        self.y[start : start + self.batch_size],
                    )
                losses.append(float(np.ravel(result)[0]))
            self._train_cell()
            self._record_fix(float(np.mean(losses)),
                             most_frequent_tree(self.best_trees), best)
        self._end_fix(best)

    def result(self, replay):
        result = {
            "epochs": self.records,
            "best_tree": self.best_tree,
            "best_fix_epoch": self.best_fix_epoch,
        }
        if self.candidates is not None:
            result["candidates"] = self.candidates
        if replay == "batch_step":
            result["best_trees"] = self.best_trees
        return result


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
