"""The named distance columns and `master_distances`, against NumPy.

A parser that reads `distances[..., DISTANCE_FORGET]` must get the paper's
`d_f = 1 − mean(f̃)`, on the fused path and on the step-by-step path alike.
"""

import numpy as np
import pytest

import keras

import onlstm_reference as ref
from on_lstm_keras import ONLSTM
from on_lstm_keras.layers import DISTANCE_FORGET
from on_lstm_keras.layers import DISTANCE_INPUT
from on_lstm_keras.ops import master_distances

pytestmark = pytest.mark.backend


def test_columns_are_the_two_positions_of_a_pair():
    assert sorted([DISTANCE_FORGET, DISTANCE_INPUT]) == [0, 1]
    assert DISTANCE_FORGET == 0  # the column parsers have always read


def test_master_distances_by_hand():
    master_forget = np.array([[0.0, 0.5, 1.0, 1.0], [0.25, 0.25, 0.5, 1.0]])
    master_input = np.array([[1.0, 1.0, 0.0, 0.0], [1.0, 0.75, 0.5, 0.0]])
    d = keras.ops.convert_to_numpy(
        master_distances(master_forget, master_input)
    )
    assert d.shape == (2, 2)
    np.testing.assert_allclose(d[:, DISTANCE_FORGET], [0.375, 0.5])
    np.testing.assert_allclose(d[:, DISTANCE_INPUT], [0.5, 0.5625])


@pytest.mark.parametrize("fused", [True, False])
def test_layer_columns_match_the_reference_by_name(fused):
    rng = np.random.default_rng(7)
    units, chunk, features = 8, 2, 3
    width = 4 * units + 2 * (units // chunk)
    layer = ONLSTM(units, chunk, return_distances=True)
    layer.build((None, None, features))
    weights = [
        rng.normal(0, 0.8, (features, width)).astype("float32"),
        rng.normal(0, 0.8, (units, width)).astype("float32"),
        rng.normal(0, 0.8, (width,)).astype("float32"),
    ]
    layer.set_weights(weights)
    layer.use_fused_recurrence = fused
    x = rng.normal(size=(2, 5, features)).astype("float32")
    _, dist = layer(x)
    dist = keras.ops.convert_to_numpy(dist)
    # The reference, written independently of the layer's stacking order.
    h = c = np.zeros((2, units))
    for t in range(5):
        z = x[:, t].astype(np.float64) @ weights[0] + h @ weights[1]
        z = z + weights[2]
        f_master, i_master = ref.master_gates(
            z[:, 4 * units : 4 * units + units // chunk],
            z[:, 4 * units + units // chunk :],
        )
        np.testing.assert_allclose(
            dist[:, t, DISTANCE_FORGET], 1.0 - f_master.mean(-1), atol=1e-5
        )
        np.testing.assert_allclose(
            dist[:, t, DISTANCE_INPUT], i_master.mean(-1), atol=1e-5
        )
        h, c, _ = ref.step(
            x[:, t], h, c, *weights, chunk, "cumax"
        )
