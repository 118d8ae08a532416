"""Node values of different widths brought to one width.

The `x_t` leaf has `input_dim` features and every other node `units`; the
nodes output and the tree distance pad them with zeros to a common width.
"""

from keras import ops


def pad_to_width(value, width):
    """Zero-pads the last axis of `value` up to `width` (no copy if equal).

    Args:
        value: A tensor `(..., w)` with `w <= width`.
        width: The width to reach.

    Returns:
        A tensor `(..., width)`.
    """
    extra = width - value.shape[-1]
    if not extra:
        return value
    padding = [[0, 0]] * (len(value.shape) - 1) + [[0, extra]]
    return ops.pad(value, padding)

