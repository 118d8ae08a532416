"""The ordered-neuron activations, written with `keras.ops` only.

`cumax(x) = cumsum(softmax(x))` (Shen et al., 2019, eq. 6) turns a vector of
scores into a monotone non-decreasing vector in [0, 1] that ends at 1: a soft
version of the binary gate `(0, ..., 0, 1, ..., 1)` whose split point `d` has
the categorical distribution `softmax(x)`.

The two master gates also give, per step, two distances, the columns of the
`(batch, timesteps, 2)` tensor that `ONLSTM(return_distances=True)` returns:
column `DISTANCE_FORGET` holds `d_f = 1 − mean(f̃)` (the one the unsupervised
parser splits on) and column `DISTANCE_INPUT` holds `d_i = mean(ĩ)`.
"""

import keras
from keras import ops

DISTANCE_FORGET = 0
"""Column of the master-forget distance `d_f = 1 − mean(f̃)`."""

DISTANCE_INPUT = 1
"""Column of the master-input distance `d_i = mean(ĩ)`."""


@keras.saving.register_keras_serializable(package="on_lstm_keras")
def cumax(x, axis=-1):
    """Cumulative softmax: `cumsum(softmax(x, axis), axis)`.

    Args:
        x: Tensor of scores.
        axis: Axis along which to normalise and accumulate. Default: -1.

    Returns:
        Tensor of the same shape, non-decreasing along `axis`, with values in
        [0, 1] and last value 1 (up to rounding).

    Example:

    >>> import numpy as np
    >>> y = cumax(np.array([[0.0, 0.0, 0.0, 0.0]], dtype="float32"))
    >>> np.round(keras.ops.convert_to_numpy(y), 2).tolist()
    [[0.25, 0.5, 0.75, 1.0]]
    """
    x = ops.convert_to_tensor(x)
    if x.shape[axis] == 1:  # one level: exactly 1 (softmax would warn)
        return ops.ones_like(x)
    return ops.cumsum(ops.softmax(x, axis=axis), axis=axis)


@keras.saving.register_keras_serializable(package="on_lstm_keras")
def reverse_cumax(x, axis=-1):
    """Right-to-left cumulative softmax: `cs←(softmax(x))`.

    Element `k` is the sum of the softmax over positions `k, k+1, ..., n`, so
    the result is non-increasing, starts at 1 and ends at the last softmax
    probability. This is Su Jianlin's symmetric choice for the master input
    gate; the paper's choice is `1 - cumax(x)`, which excludes position `k`
    itself (it starts at `1 - p_0` and ends at 0).

    Args:
        x: Tensor of scores.
        axis: Axis along which to normalise and accumulate. Default: -1.

    Returns:
        Tensor of the same shape, non-increasing along `axis`, in [0, 1].

    Example:

    >>> import numpy as np
    >>> y = reverse_cumax(np.array([[0.0, 0.0, 0.0, 0.0]], dtype="float32"))
    >>> np.round(keras.ops.convert_to_numpy(y), 2).tolist()
    [[1.0, 0.75, 0.5, 0.25]]
    """
    x = ops.convert_to_tensor(x)
    if x.shape[axis] == 1:  # one level: exactly 1 (softmax would warn)
        return ops.ones_like(x)
    p = ops.softmax(x, axis=axis)
    return ops.flip(ops.cumsum(ops.flip(p, axis), axis), axis)


def master_distances(master_forget, master_input):
    """The per-step distances of the two master gates, stacked on a new last
    axis: `d_f = 1 − mean(f̃)` in column `DISTANCE_FORGET`, `d_i = mean(ĩ)`
    in column `DISTANCE_INPUT`.

    Args:
        master_forget: Tensor `(..., levels)`, the master forget gate `f̃`.
        master_input: Tensor `(..., levels)`, the master input gate `ĩ`.

    Returns:
        Tensor `(..., 2)`.

    Example:

    >>> import numpy as np
    >>> d = master_distances(np.array([[0.0, 0.5, 1.0, 1.0]]),
    ...                      np.array([[1.0, 1.0, 0.0, 0.0]]))
    >>> keras.ops.convert_to_numpy(d)[0, DISTANCE_FORGET].item()
    0.375
    >>> keras.ops.convert_to_numpy(d)[0, DISTANCE_INPUT].item()
    0.5
    """
    columns = [None, None]
    columns[DISTANCE_FORGET] = 1.0 - ops.mean(master_forget, axis=-1)
    columns[DISTANCE_INPUT] = ops.mean(master_input, axis=-1)
    return ops.stack(columns, axis=-1)
