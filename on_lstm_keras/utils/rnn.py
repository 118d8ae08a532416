"""Helpers shared by the package's RNN layers (`ONLSTM`, `RRNN`).

Both layers are thin `keras.layers.RNN` subclasses that forward attributes
to their cell and can return extra per-step tensors (distances, trees,
node values). The extras stand right after the output and before any
states, and carry the input sequence's mask.
"""


def cell_property(name):
    """A read-only layer property that returns the cell's `name`."""
    return property(
        lambda self: getattr(self.cell, name),
        doc=f"The cell's `{name}`.",
    )


def check_sequence_rank(layer_name, shape):
    """Raises a `ValueError` unless `shape` is `(batch, timesteps, features)`."""
    if len(shape) != 3:
        raise ValueError(
            f"Argument `inputs` of {layer_name} must be a 3D tensor "
            f"(batch, timesteps, features), received: shape={tuple(shape)}"
        )


def insert_extras(result, extras, return_state):
    """`result` of `RNN.call` (or its shapes) with `extras` after the output.

    With `return_state`, `result` is `[output, *states]` and the answer
    `(output, *extras, *states)`; otherwise `(output, *extras)`. No extras
    give `result` back unchanged.
    """
    extras = list(extras)
    if not extras:
        return result
    if return_state:
        return (result[0], *extras, *result[1:])
    return (result, *extras)


def insert_extra_masks(output_mask, sequence_mask, count, return_state):
    """The masks of `insert_extras`' answer: each extra gets `sequence_mask`."""
    if not count:
        return output_mask
    if return_state:
        return [output_mask[0]] + [sequence_mask] * count + list(output_mask[1:])
    return [output_mask] + [sequence_mask] * count
