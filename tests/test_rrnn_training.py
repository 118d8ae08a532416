"""Tests of the RRNN training helper: two optimisers, search and fix stages.

Tiny model and data (a few samples, 2 units, 3 merges): what is checked is
which weights each stage moves and which tree the fixing stage replays.
"""

import collections

import keras
import numpy as np
import pytest
from keras import ops

from on_lstm_keras.rrnn import RRNN
from on_lstm_keras.rrnn import SearchConfig
from on_lstm_keras.rrnn import TreeConfig
from on_lstm_keras.rrnn import fit_search_and_fix
from on_lstm_keras.rrnn import replaying
from on_lstm_keras.rrnn import split_weights
from on_lstm_keras.rrnn.replay import best_per_batch_and_step
from on_lstm_keras.rrnn.replay import most_frequent_tree



def _setup(seed=0, samples=8, steps=3, iterations=3):
    keras.utils.set_random_seed(seed)
    rng = np.random.RandomState(seed)
    x = rng.normal(size=(samples, steps, 2)).astype("float32")
    y = rng.normal(size=(samples, steps, 2)).astype("float32")
    inputs = keras.Input((steps, 2))
    layer = RRNN(
        2,
        tree_config=TreeConfig(iterations=iterations, tuples=2),
        search_config=SearchConfig(score_units=2),
        return_sequences=True,
        return_trees=True,
    )
    hidden, trees = layer(inputs)
    model = keras.Model(inputs, keras.layers.Dense(2)(hidden))
    trees_model = keras.Model(inputs, trees)
    return x, y, layer, model, trees_model


def _values(variables):
    return [ops.convert_to_numpy(v).copy() for v in variables]


def test_split_weights():
    _, _, layer, _, _ = _setup()
    scoring, cell = split_weights(layer)
    names = sorted(v.path.split("/")[-1] for v in scoring)
    assert names == ["merge_prior", "score_hidden_bias",
                     "score_hidden_kernel", "score_kernel"]
    assert len(scoring) + len(cell) == len(layer.weights)


def test_most_frequent_tree_ignores_padding():
    a = np.zeros((3, 5), int)
    b = np.ones((3, 5), int)
    pad = -np.ones((3, 5), int)
    assert most_frequent_tree(np.stack([a, b, b, pad, pad, pad])) == tuple(
        map(tuple, b))
    assert most_frequent_tree(np.stack([pad])) is None


@pytest.mark.backend  # the JAX trainer reads trainable flags its own way
def test_stages_train_the_right_weights_and_replay_the_best_tree():
    x, y, layer, model, trees_model = _setup(samples=4, steps=2,
                                             iterations=2)
    scoring, cell = split_weights(layer)
    recorded, replayed = [], []
    original_fit = model.fit

    def fit(*args, **kwargs):
        # Snapshot before every epoch, so each epoch's moves can be checked;
        # in the fixing stage, the trees the layer computes.
        recorded.append((_values(scoring), _values(cell), layer.selection))
        if layer.selection == "forced":
            replayed.append(ops.convert_to_numpy(trees_model(x)))
        return original_fit(*args, **kwargs)

    model.fit = fit
    result = fit_search_and_fix(
        model, layer, x, y, trees_model, validation_data=(x, y),
        score_optimizer=keras.optimizers.SGD(0.5),
        cell_optimizer=keras.optimizers.SGD(0.5), loss="mse",
        batch_size=4, search_epochs=2, fix_epochs=1, cycles=1,
        switch_every=1, tree_sample=4,
    )
    recorded.append((_values(scoring), _values(cell), layer.selection))
    epochs = result["epochs"]
    assert [(e["stage"], e["trained"]) for e in epochs] == [
        ("search", "cell"), ("search", "score"), ("fix", "cell")]
    for n, epoch in enumerate(epochs):
        (score_before, cell_before, _), (score_after, cell_after, _) = (
            recorded[n], recorded[n + 1])
        score_moved = [not np.array_equal(a, b)
                       for a, b in zip(score_before, score_after)]
        cell_moved = [not np.array_equal(a, b)
                      for a, b in zip(cell_before, cell_after)]
        if epoch["trained"] == "cell":
            assert not any(score_moved) and any(cell_moved)
        else:
            assert any(score_moved) and not any(cell_moved)
    # The search epochs ran the search, the fixing epoch the forced tree.
    assert [r[2] for r in recorded] == ["hard", "hard", "forced", "hard"]
    best = min(epochs[:2], key=lambda e: e["val_loss"])["tree"]
    assert result["best_tree"] == best
    assert len(replayed) == 1 and (replayed[0] == np.array(best)).all()
    # Every weight's trainable flag is back.
    assert all(v.trainable for v in model.weights)


@pytest.mark.backend  # the JAX trainer reads trainable flags its own way
@pytest.mark.parametrize("rate", [0.05, 50.0])
def test_restore_best_keeps_the_fixing_epoch_of_lowest_validation_loss(
        rate):
    """With `restore_best`, the fixing stage ends with the weights, among
    those it started with and those after each of its epochs, whose
    validation MSE (computed here in NumPy from the replayed tree's
    predictions) is lowest. At rate 50 training diverges, so the weights
    kept are not the last ones."""
    x, y, layer, model, trees_model = _setup(samples=8, steps=3)
    vx, vy = x[:4] + 0.1, y[:4]
    snapshots = []
    original_fit = model.fit

    def fit(*args, **kwargs):
        if layer.selection == "forced" and not snapshots:
            snapshots.append(_values(model.weights))
        history = original_fit(*args, **kwargs)
        if layer.selection == "forced":
            snapshots.append(_values(model.weights))
        return history

    model.fit = fit
    result = fit_search_and_fix(
        model, layer, x, y, trees_model, validation_data=(vx, vy),
        score_optimizer=keras.optimizers.SGD(0.1),
        cell_optimizer=keras.optimizers.SGD(rate), loss="mse",
        batch_size=4, search_epochs=2, fix_epochs=4, restore_best=True,
    )
    assert len(snapshots) == 5
    final = _values(model.weights)
    errors = []
    with replaying(layer.cell, result["best_tree"]):
        inputs = keras.Input(x.shape[1:])
        predictor = keras.Model(inputs, model.layers[-1](layer(inputs)[0]))
        for values in snapshots:
            for variable, value in zip(model.weights, values):
                variable.assign(value)
            predicted = ops.convert_to_numpy(predictor(vx))
            with np.errstate(over="ignore", invalid="ignore"):
                error = float(np.mean((predicted - vy) ** 2))
            errors.append(error if np.isfinite(error) else np.inf)
    kept = int(np.argmin(errors))
    assert result["best_fix_epoch"] == kept
    for got, want in zip(final, snapshots[kept]):
        np.testing.assert_array_equal(got, want)
    fixed = [e["val_loss"] for e in result["epochs"] if e["stage"] == "fix"]
    np.testing.assert_allclose(fixed, errors[1:], rtol=1e-4)
    if rate == 50.0:  # diverged: the weights kept are not the last ones
        assert kept < len(errors) - 1


def test_restore_best_off_keeps_the_last_weights():
    x, y, layer, model, trees_model = _setup()
    result = fit_search_and_fix(
        model, layer, x, y, trees_model, validation_data=(x, y),
        score_optimizer=keras.optimizers.SGD(0.1),
        cell_optimizer=keras.optimizers.SGD(50.0), loss="mse",
        batch_size=4, search_epochs=2, fix_epochs=2,
    )
    assert result["best_fix_epoch"] is None


@pytest.mark.backend  # the JAX trainer reads trainable flags its own way
def test_replay_candidates_replays_the_tree_of_lowest_replayed_loss():
    """With `replay_candidates=3`, the candidates are the distinct trees
    among each search epoch's three most frequent on the sample (counted
    here by hand), each scored by the validation MSE of its replay with the
    weights the search ended with (computed here in NumPy), and the fixing
    stage replays the one of lowest MSE."""
    x, y, layer, model, trees_model = _setup(samples=8, steps=3)
    vx, vy = x[:4] + 0.1, y[:4]
    sampled, at_fix, replayed = [], [], []
    original_predict, original_fit = trees_model.predict, model.fit

    def predict(*args, **kwargs):
        sampled.append(original_predict(*args, **kwargs))
        return sampled[-1]

    def fit(*args, **kwargs):
        if layer.selection == "forced" and not at_fix:
            at_fix.append(_values(model.weights))
            replayed.append(ops.convert_to_numpy(trees_model(x)))
        return original_fit(*args, **kwargs)

    trees_model.predict, model.fit = predict, fit
    result = fit_search_and_fix(
        model, layer, x, y, trees_model, validation_data=(vx, vy),
        score_optimizer=keras.optimizers.SGD(0.5),
        cell_optimizer=keras.optimizers.SGD(0.5), loss="mse",
        batch_size=4, search_epochs=2, fix_epochs=1, tree_sample=8,
        replay_candidates=3,
    )
    expected = []
    for trees in sampled:
        counts = collections.Counter(
            tuple(map(tuple, t)) for t in trees.reshape(-1, 3, 5))
        for tree, _ in counts.most_common(3):
            if tree not in expected:
                expected.append(tree)
    got = result["candidates"]
    assert [tree for tree, _ in got] == expected and len(expected) > 1
    errors = []
    for tree in expected:
        with replaying(layer.cell, tree):
            inputs = keras.Input(x.shape[1:])
            predictor = keras.Model(inputs,
                                    model.layers[-1](layer(inputs)[0]))
            for variable, value in zip(model.weights, at_fix[0]):
                variable.assign(value)
            predicted = ops.convert_to_numpy(predictor(vx))
            errors.append(float(np.mean((predicted - vy) ** 2)))
    np.testing.assert_allclose([loss for _, loss in got], errors, rtol=1e-4)
    best = expected[int(np.argmin(errors))]
    assert result["best_tree"] == best
    assert (replayed[0] == np.array(best)).all()


def test_bad_arguments_are_named():
    x, y, layer, model, trees_model = _setup()
    common = dict(validation_data=(x, y), score_optimizer="sgd",
                  cell_optimizer="sgd", loss="mse")
    with pytest.raises(ValueError, match="search_epochs=0"):
        fit_search_and_fix(model, layer, x, y, trees_model,
                           search_epochs=0, **common)
    forced = RRNN(2, TreeConfig(
        iterations=3, selection="forced",
        tree=[(0, 1, 0, "add", "tanh"), (0, 3, 0, "add", "tanh"),
              (1, 4, 0, "add", "tanh")],
    ))
    with pytest.raises(ValueError, match="replay_candidates=0"):
        fit_search_and_fix(model, layer, x, y, trees_model,
                           replay_candidates=0, **common)
    with pytest.raises(ValueError, match="restore_best='yes'"):
        fit_search_and_fix(model, layer, x, y, trees_model,
                           restore_best="yes", **common)
    with pytest.raises(ValueError, match="selection='forced'"):
        fit_search_and_fix(model, forced, x, y, trees_model, **common)


# -- replay per batch and step (the authors' fixing stage) -------------------

TREE_A = [(0, 1, 0, "add", "tanh"), (1, 3, 1, "multiply", "sigmoid")]
TREE_B = [(0, 1, 0, "add", "sigmoid"), (0, 3, 1, "add", "tanh")]


def _np_tree(tree, weights, x, h, units=2):
    """One forced tree in NumPy (names as in `TREE_A`)."""
    unary = {"tanh": np.tanh, "sigmoid": lambda v: 1 / (1 + np.exp(-v))}
    binary = {"add": np.add, "multiply": np.multiply}
    nodes = [x, h, np.zeros_like(h)]
    for i, j, k, op, act in tree:
        block = slice(k * units, (k + 1) * units)
        left = (weights["kernel"] if i == 0 else weights["left_kernel"])
        pre = binary[op](nodes[i] @ left[:, block],
                         nodes[j] @ weights["right_kernel"][:, block])
        nodes.append(unary[act](pre + weights["bias"][block]))
    return nodes[-1]


@pytest.mark.backend  # the unrolled loop of each backend
@pytest.mark.parametrize("go_backwards", [False, True])
def test_replaying_one_tree_per_step(go_backwards):
    """Step t runs the t-th replayed tree (in time order, also when the
    layer reads backwards), checked against the trees run in NumPy."""
    x = np.random.RandomState(3).normal(size=(2, 2, 2)).astype("float32")
    layer = RRNN(
        2,
        tree_config=TreeConfig(iterations=2, tuples=2),
        search_config=SearchConfig(score_units=2),
        return_sequences=True,
        return_trees=True,
        go_backwards=go_backwards,
    )
    layer.build((None, 2, 2))
    weights = {v.name: ops.convert_to_numpy(v) for v in layer.cell.weights}
    with replaying(layer.cell, [TREE_A, TREE_B]):
        output, trees = (ops.convert_to_numpy(v) for v in layer(x))
    assert layer.selection == "hard" and layer.cell.step_trees is None
    order = [1, 0] if go_backwards else [0, 1]
    h = np.zeros((2, 2), "float32")
    for position, t in enumerate(order):
        h = _np_tree((TREE_A, TREE_B)[t], weights, x[:, t], h)
        np.testing.assert_allclose(output[:, position], h, atol=1e-5)
        want = [[i, j, k, layer.operations.index(o),
                 layer.activations.index(a)]
                for i, j, k, o, a in (TREE_A, TREE_B)[t]]
        assert (trees[:, position] == want).all()
    with pytest.raises(ValueError, match="2 steps, received inputs with 3"):
        with replaying(layer.cell, [TREE_A, TREE_B]):
            layer(np.zeros((1, 3, 2), "float32"))


def test_best_per_batch_and_step_by_hand():
    trees = [np.full((2, 2, 1, 5), epoch) for epoch in range(3)]
    losses = [np.array([[1.0, 3.0], [2.0, 2.0]]),
              np.array([[2.0, 1.0], [2.0, 5.0]]),
              np.array([[1.5, 2.0], [9.0, 0.5]])]
    best = best_per_batch_and_step(list(zip(losses, trees)))
    # (0, 0): epoch 0; (0, 1): epoch 1; (1, 0): a tie, the earlier epoch 0;
    # (1, 1): epoch 2.
    assert best[..., 0, 0].tolist() == [[0, 1], [0, 2]]


def test_fixing_stage_replays_each_batch_and_steps_best_tree():
    """Search epochs record, per fixed batch and step, the batch's most
    frequent tree and mean task loss (recomputed here from the predictions
    by hand); the fixing stage trains batch b with the trees of the lowest
    recorded loss of (b, t), in order, and only the cell weights."""
    x, y, layer, model, trees_model = _setup(samples=4, steps=2,
                                             iterations=2)
    seen = {"trees": [], "predicted": [], "fixed": []}
    scoring, cell = split_weights(layer)
    original = (trees_model.predict, model.predict, model.train_on_batch)

    def trees_predict(*args, **kwargs):
        seen["trees"].append(original[0](*args, **kwargs))
        return seen["trees"][-1]

    def predict(*args, **kwargs):
        seen["predicted"].append(original[1](*args, **kwargs))
        return seen["predicted"][-1]

    def train_on_batch(batch_x, batch_y):
        seen["fixed"].append((batch_x.copy(), layer.cell.step_trees,
                              _values(scoring)))
        return original[2](batch_x, batch_y)

    trees_model.predict, model.predict = trees_predict, predict
    model.train_on_batch = train_on_batch
    result = fit_search_and_fix(
        model, layer, x, y, trees_model, validation_data=(x, y),
        score_optimizer=keras.optimizers.SGD(0.5),
        cell_optimizer=keras.optimizers.SGD(0.5), loss="mse",
        batch_size=2, search_epochs=2, fix_epochs=1, replay="batch_step",
    )
    search = [e for e in result["epochs"] if e["stage"] == "search"]
    assert len(search) == 2 and len(seen["trees"]) == 2
    for record, trees, predicted in zip(search, seen["trees"],
                                        seen["predicted"]):
        for b in range(2):
            for t in range(2):
                rows = trees[2 * b : 2 * b + 2, t]
                count = collections.Counter(
                    tuple(map(tuple, r)) for r in rows)
                top = max(count.values())
                assert count[tuple(map(tuple, record["step_trees"][b, t]))] \
                    == top
                want = np.mean((predicted[2 * b : 2 * b + 2, t]
                                - y[2 * b : 2 * b + 2, t]) ** 2)
                assert record["step_losses"][b, t] == pytest.approx(
                    want, rel=1e-5)
    # The fixing stage: batch 0 then batch 1, each with its best trees.
    assert [f[0].tolist() for f in seen["fixed"]] == [
        x[:2].tolist(), x[2:].tolist()]
    for b, (_, step_trees, scores) in enumerate(seen["fixed"]):
        for t in range(2):
            pick = min(range(2), key=lambda e: (
                search[e]["step_losses"][b, t], e))
            assert np.array_equal(step_trees[t],
                                  search[pick]["step_trees"][b, t])
            assert np.array_equal(result["best_trees"][b, t], step_trees[t])
    # Only the cell weights move in the fixing stage.
    for before, after in zip(seen["fixed"][0][2], _values(scoring)):
        np.testing.assert_array_equal(before, after)
    assert result["epochs"][-1]["stage"] == "fix"
    assert layer.selection == "hard" and layer.cell.step_trees is None
    assert all(v.trainable for v in model.weights)
