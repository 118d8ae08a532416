"""GRU as a special case of RRNN: its tree and its weights.

`gru_tree` is the list of merges that computes a GRU (`reset_after=False`)
cell; `rrnn_from_gru` builds the `RRNN` that equals a given
`keras.layers.GRU` (it is `RRNN.from_gru`).
"""

import keras
import numpy as np
from keras import ops

from on_lstm_keras.rrnn.trees import tree_expression  # noqa: F401 (doctest)


def gru_tree():
    """The 9 merges that make a GRU (`reset_after=False`) cell.

    With tuples `0, 1, 2 = (W_z, U_z, b_z), (W_r, U_r, b_r), (W_h, U_h, b_h)`
    and tuple `3 = (I, I, 0)`:

    ```
    slot  merge                                  value
    3     (0, 1, 1, add, sigmoid)                r = σ(x L1 + h R1 + b1)
    4     (1, 3, 3, multiply, identity)          h ⊙ r
    5     (0, 4, 2, add, tanh)                   h̃ = tanh(x L2 + (r⊙h) R2 + b2)
    6     (0, 1, 0, add, sigmoid)                z = σ(x L0 + h R0 + b0)
    7     (2, 6, 3, add, one_minus)              1 − (0·I + z·I + 0) = 1 − z
    8     (5, 7, 3, multiply, identity)          h̃ ⊙ (1 − z)
    9     (0, 1, 0, add, sigmoid)                z again
    10    (1, 9, 3, multiply, identity)          h ⊙ z
    11    (8, 10, 3, add, identity)              h_t = (1 − z)⊙h̃ + z⊙h
    ```

    `1 − z` merges the zero leaf (left, `0 · L3 = 0`) with `z` (right) by
    addition and the one-minus activation. `z` is made twice, once for each
    of its two parents, so that the list is a valid tree for both pools:
    with `pool="roots"` a generated node can be a child only once.

    Returns:
        A list of 9 tuples `(i, j, k, op, act)` with `op`, `act` names.

    Example:

    >>> tree_expression(gru_tree(), identity_tuples=(3,))
    'h_t = tanh(x·L2 + (h ⊙ σ(x·L1 + h·R1 + b1))·R2 + b2) ⊙ (1 − σ(x·L0 + h·R0 + b0)) + h ⊙ σ(x·L0 + h·R0 + b0)'
    """  # noqa: E501
    return [
        (0, 1, 1, "add", "sigmoid"),
        (1, 3, 3, "multiply", "identity"),
        (0, 4, 2, "add", "tanh"),
        (0, 1, 0, "add", "sigmoid"),
        (2, 6, 3, "add", "one_minus"),
        (5, 7, 3, "multiply", "identity"),
        (0, 1, 0, "add", "sigmoid"),
        (1, 9, 3, "multiply", "identity"),
        (8, 10, 3, "add", "identity"),
    ]


def rrnn_from_gru(cls, gru, selection="forced", **kwargs):
    """Builds `cls` (`RRNN` or a subclass) equal to a built GRU.

    The body of `RRNN.from_gru`, which documents the arguments.
    """
    if not isinstance(gru, keras.layers.GRU):
        raise ValueError(
            "Argument `gru` must be a keras.layers.GRU, "
            f"received: gru={gru!r}"
        )
    if not gru.built:
        raise ValueError(
            "Argument `gru` must be built (call it once or build it), "
            f"received an unbuilt layer: gru={gru.name!r}"
        )
    if gru.reset_after:
        raise ValueError(
            "Argument `gru` must have reset_after=False (the reset gate "
            "applied before the recurrent matmul), received: "
            "reset_after=True"
        )
    for name, expected in (
        ("activation", "tanh"),
        ("recurrent_activation", "sigmoid"),
    ):
        got = keras.activations.serialize(getattr(gru, name))
        got = got if isinstance(got, str) else got.get("config", got)
        if got != expected:
            raise ValueError(
                f"Argument `gru` must use {name}={expected!r}, "
                f"received: {name}={got!r}"
            )
    tuples = kwargs.get("tuples", 4)
    if isinstance(tuples, int) and tuples < 4:
        raise ValueError(
            "Argument `tuples` must be at least 4 for the GRU tree, "
            f"received: tuples={tuples}"
        )
    kwargs.setdefault("return_sequences", gru.return_sequences)
    kwargs.setdefault("return_state", gru.return_state)
    kwargs.setdefault("go_backwards", gru.go_backwards)
    kwargs.setdefault("dtype", gru.dtype_policy)
    if selection == "forced":
        kwargs.setdefault("tree", gru_tree())
    layer = cls(gru.units, selection=selection, **kwargs)
    kernel = ops.convert_to_numpy(gru.cell.kernel)
    recurrent = ops.convert_to_numpy(gru.cell.recurrent_kernel)
    input_dim, units = kernel.shape[0], gru.units
    layer.build((None, None, input_dim))
    cell = layer.cell
    if cell.tie_input_kernel:
        gru_blocks = [("left_kernel", kernel)]
    else:
        gru_blocks = [("kernel", kernel), ("left_kernel", None)]
    gru_blocks.append(("right_kernel", recurrent))
    for name, gru_value in gru_blocks:
        variable = getattr(cell, name)
        value = ops.convert_to_numpy(variable).copy()
        if gru_value is not None:
            value[:, : 3 * units] = gru_value
        value[:, 3 * units : 4 * units] = np.eye(value.shape[0], units)
        variable.assign(value)
    bias = ops.convert_to_numpy(cell.bias).copy()
    if gru.use_bias:
        bias[: 3 * units] = ops.convert_to_numpy(gru.cell.bias)
    else:
        bias[: 3 * units] = 0.0
    bias[3 * units : 4 * units] = 0.0
    cell.bias.assign(bias)
    return layer
