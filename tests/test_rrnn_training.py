"""Tests of the RRNN training helper: two optimisers, search and fix stages.

Tiny model and data (a few samples, 2 units, 3 merges): what is checked is
which weights each stage moves and which tree the fixing stage replays.
"""

import keras
import numpy as np
import pytest
from keras import ops

from on_lstm_keras.rrnn import RRNN
from on_lstm_keras.rrnn.training import fit_search_and_fix
from on_lstm_keras.rrnn.training import most_frequent_tree
from on_lstm_keras.rrnn.training import split_weights

pytestmark = pytest.mark.backend


def _setup(seed=0):
    keras.utils.set_random_seed(seed)
    rng = np.random.RandomState(seed)
    x = rng.normal(size=(8, 3, 2)).astype("float32")
    y = rng.normal(size=(8, 3, 2)).astype("float32")
    inputs = keras.Input((3, 2))
    layer = RRNN(2, iterations=3, tuples=2, score_units=2,
                 return_sequences=True, return_trees=True)
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


def test_stages_train_the_right_weights_and_replay_the_best_tree():
    x, y, layer, model, trees_model = _setup()
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
        batch_size=8, search_epochs=2, fix_epochs=1, cycles=1,
        switch_every=1, tree_sample=8,
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


def test_bad_arguments_are_named():
    x, y, layer, model, trees_model = _setup()
    common = dict(validation_data=(x, y), score_optimizer="sgd",
                  cell_optimizer="sgd", loss="mse")
    with pytest.raises(ValueError, match="search_epochs=0"):
        fit_search_and_fix(model, layer, x, y, trees_model,
                           search_epochs=0, **common)
    forced = RRNN(2, iterations=3, selection="forced",
                  tree=[(0, 1, 0, "add", "tanh"), (0, 3, 0, "add", "tanh"),
                        (1, 4, 0, "add", "tanh")])
    with pytest.raises(ValueError, match="selection='forced'"):
        fit_search_and_fix(model, forced, x, y, trees_model, **common)
