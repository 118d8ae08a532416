"""The identity tuple of an RRNN cell: the last parameter tuple set to
`(I, I, 0)`, at initialisation (`identity_init`) or throughout training
(`fixed_identity`).

Weights are laid out as `K` blocks of `units` columns, one per tuple
(`(rows, K * units)` kernels, a `(K * units,)` bias); the identity tuple
is the last block.
"""

from keras import ops


def with_identity_block(initializer, tuples, rows, units, use_identity):
    """Initializer of `(rows, tuples * units)` whose last block is `I`."""
    if not use_identity:
        return initializer

    def init(shape, dtype=None):
        values = initializer(shape, dtype=dtype)
        eye = ops.cast(ops.eye(rows, units), values.dtype)
        return ops.concatenate([values[:, : (tuples - 1) * units], eye], 1)

    return init


def with_zero_block(initializer, tuples, units, use_identity):
    """Initializer of a `(tuples * units,)` bias whose last block is 0."""
    if not use_identity:
        return initializer

    def init(shape, dtype=None):
        values = initializer(shape, dtype=dtype)
        zeros = ops.zeros((units,), dtype=values.dtype)
        return ops.concatenate([values[: (tuples - 1) * units], zeros])

    return init


def fix_identity_block(weight, tuples, units):
    """`weight`, `(rows, tuples * units)` or `(tuples * units,)`, with its
    last block replaced by `I` (zeros for a bias)."""
    weight = ops.convert_to_tensor(weight)
    kept = (tuples - 1) * units
    if len(weight.shape) == 1:
        last = ops.zeros((units,), dtype=weight.dtype)
        return ops.concatenate([weight[:kept], last])
    last = ops.eye(weight.shape[0], units, dtype=weight.dtype)
    return ops.concatenate([weight[:, :kept], last], axis=1)
