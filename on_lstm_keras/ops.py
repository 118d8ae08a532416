"""The ordered-neuron activations, written with `keras.ops` only.

`cumax(x) = cumsum(softmax(x))` (Shen et al., 2019, eq. 6) turns a vector of
scores into a monotone non-decreasing vector in [0, 1] that ends at 1: a soft
version of the binary gate `(0, ..., 0, 1, ..., 1)` whose split point `d` has
the categorical distribution `softmax(x)`.
"""

import keras
from keras import ops


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
