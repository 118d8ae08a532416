"""The RRNN subpackage layout: old `.keras` files still load and the
public names are kept.

`tests/data/rrnn_v0_1_0.keras` was saved by version 0.1.0, while the classes
lived in `on_lstm_keras.layers.rrnn` (its config names that module); the
`.npz` beside it holds the input and the outputs that version computed on it.
Its config states the search options (`break_symmetry`, `unique_roots`,
`merge_prior`) and the distance options (`internal_only`, `isomorphic`) that
version ran with, all off, since the layers read no option from its absence.
"""

import copy
import json
import os
import subprocess
import sys
import warnings
import zipfile

import keras
import numpy as np
import pytest

import on_lstm_keras
from on_lstm_keras import rrnn

DATA = os.path.join(os.path.dirname(__file__), "data")
OLD_MODEL = os.path.join(DATA, "rrnn_v0_1_0.keras")
OLD_OUTPUTS = os.path.join(DATA, "rrnn_v0_1_0_outputs.npz")

def _old_config():
    with zipfile.ZipFile(OLD_MODEL) as archive:
        return json.loads(archive.read("config.json"))


@pytest.fixture
def saving_keras():
    """Skips where the installed Keras is older than the one that saved the
    fixture: Keras reads the configs of newer versions only as far as they
    kept their arguments (3.10 rejects 3.15's initializer configs)."""
    from packaging.version import Version

    with zipfile.ZipFile(OLD_MODEL) as archive:
        saved = json.loads(archive.read("metadata.json"))["keras_version"]
    if Version(keras.__version__) < Version(saved):
        pytest.skip(f"{OLD_MODEL} was saved by Keras {saved}, newer than the "
                    f"installed Keras {keras.__version__}")
    return saved


def _rrnn_layer_configs(config):
    return [
        layer for layer in config["config"]["layers"]
        if layer.get("module", "").startswith("on_lstm_keras")
    ]


def test_fixture_was_saved_under_the_old_module_path():
    """Guards the test below: the file really names the old module."""
    layers = _rrnn_layer_configs(_old_config())
    names = sorted(layer["registered_name"] for layer in layers)
    assert names == ["on_lstm_keras>RRNN", "on_lstm_keras>RRNN",
                     "on_lstm_keras>RRNNTreeDistance"]
    assert {layer["module"] for layer in layers} == {
        "on_lstm_keras.layers.rrnn"
    }


def test_keras_file_saved_before_the_move_loads(saving_keras):
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)  # no shim needed
        model = keras.models.load_model(OLD_MODEL)  # no custom_objects
    by_name = {layer.name: layer for layer in model.layers}
    assert isinstance(by_name["searched"], rrnn.RRNN)
    assert isinstance(by_name["target"], rrnn.RRNN)
    assert by_name["target"].selection == "forced"
    # Saved with the GRU tree of 0.1.0 (r made before z); `gru_tree()` now
    # makes z first, so the two lists differ in order but not in what they
    # compute: the same expression, merge for merge.
    saved_tree = by_name["target"].tree
    assert saved_tree == rrnn.normalize_tree([
        (0, 1, 1, "add", "sigmoid"), (1, 3, 3, "multiply", "identity"),
        (0, 4, 2, "add", "tanh"), (0, 1, 0, "add", "sigmoid"),
        (2, 6, 3, "add", "one_minus"), (5, 7, 3, "multiply", "identity"),
        (0, 1, 0, "add", "sigmoid"), (1, 9, 3, "multiply", "identity"),
        (8, 10, 3, "add", "identity"),
    ])
    assert rrnn.tree_expression(saved_tree) == rrnn.tree_expression(
        rrnn.gru_tree()
    )
    assert isinstance(by_name["distance"], rrnn.RRNNTreeDistance)
    assert isinstance(by_name["cell_rnn"].cell, rrnn.RRNNCell)
    saved = np.load(OLD_OUTPUTS)
    outputs = model(saved["x"])
    assert len(outputs) == 4
    for i, output in enumerate(outputs):
        np.testing.assert_allclose(
            keras.ops.convert_to_numpy(output), saved[f"out{i}"],
            rtol=1e-5, atol=1e-6,
        )


def test_config_with_the_old_module_path_deserializes(tmp_path, saving_keras):
    """A `.keras` zip written here with the old module path in every entry."""
    model = keras.models.load_model(OLD_MODEL)
    config = json.loads(model.to_json())
    layers = _rrnn_layer_configs(config)
    assert len(layers) == 3  # RRNN x2, RRNNTreeDistance; RRNNCell below
    assert {layer["module"] for layer in layers} == {
        "on_lstm_keras.rrnn.layer", "on_lstm_keras.rrnn.distance"
    }
    for layer in layers:
        layer["module"] = "on_lstm_keras.layers.rrnn"
    cell = next(
        layer["config"]["cell"] for layer in config["config"]["layers"]
        if layer["class_name"] == "RNN"
    )
    assert cell["registered_name"] == "on_lstm_keras>RRNNCell"
    cell["module"] = "on_lstm_keras.layers.rrnn"
    # (deserializing consumes the dict it is given)
    clone = keras.saving.deserialize_keras_object(copy.deepcopy(config))
    assert [type(layer) for layer in clone.layers] == [
        type(layer) for layer in model.layers
    ]
    clone.set_weights(model.get_weights())
    path = os.path.join(tmp_path, "old_paths.keras")
    clone.save(path)
    with zipfile.ZipFile(path) as archive:
        files = {name: archive.read(name) for name in archive.namelist()}
    files["config.json"] = json.dumps(config).encode()
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    loaded = keras.models.load_model(path)
    x = np.load(OLD_OUTPUTS)["x"]
    for a, b in zip(model(x), loaded(x)):
        np.testing.assert_array_equal(
            keras.ops.convert_to_numpy(a), keras.ops.convert_to_numpy(b)
        )


def test_registered_names_are_unchanged():
    for name in ("RRNN", "RRNNCell", "RRNNTreeDistance"):
        cls = getattr(rrnn, name)
        assert keras.saving.get_registered_name(cls) == f"on_lstm_keras>{name}"
        assert keras.saving.get_registered_object(
            f"on_lstm_keras>{name}"
        ) is cls


def test_package_exports_are_kept():
    assert on_lstm_keras.RRNN is rrnn.RRNN
    assert on_lstm_keras.RRNNCell is rrnn.RRNNCell
    assert on_lstm_keras.RRNNTreeDistance is rrnn.RRNNTreeDistance
    from on_lstm_keras import layers

    # RRNN stands beside `layers`, not inside it.
    assert not hasattr(layers, "RRNN")


def test_no_rrnn_module_over_600_lines():
    folder = os.path.dirname(rrnn.__file__)
    for name in os.listdir(folder):
        if name.endswith(".py"):
            with open(os.path.join(folder, name), encoding="utf-8") as f:
                assert sum(1 for _ in f) <= 600, name


def test_fresh_process_loads_the_old_file_after_import(saving_keras):
    """`import on_lstm_keras` alone registers the classes for loading."""
    code = (
        "import on_lstm_keras, keras, warnings;"
        "warnings.simplefilter('error', DeprecationWarning);"
        f"m = keras.models.load_model({OLD_MODEL!r});"
        "import sys;"
        "assert 'on_lstm_keras.layers.rrnn' not in sys.modules;"
        "print(type(m.get_layer('searched')).__module__)"
    )
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True,
        env=env, timeout=300,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip().splitlines()[-1] == "on_lstm_keras.rrnn.layer"
