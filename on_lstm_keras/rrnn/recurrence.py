"""The step function `RRNN` runs over a sequence, and its packed outputs.

`keras.layers.RNN`'s backend loop carries one output tensor per step. When
the layer also returns trees, nodes or a margin term, each step packs them
beside its output (`tree_step_function`) and `unpack_extras` takes them
apart after the loop. The step mask travels with the inputs
(`step_inputs`), so that `go_backwards` reverses it too, and is applied in
the step rather than by the backend loop, whose handling assumes the
output is as wide as the first state.
"""

from keras import ops


def step_inputs(x_proj, sequences, mask, with_nodes):
    """The per-step inputs: the projected inputs `x_proj`, then the raw
    inputs (`with_nodes`), then the mask as one float column."""
    parts = [x_proj]
    if with_nodes:
        parts.append(ops.cast(sequences, x_proj.dtype))
    if mask is not None:
        parts.append(ops.cast(ops.expand_dims(mask, -1), x_proj.dtype))
    return ops.concatenate(parts, axis=-1) if len(parts) > 1 else x_proj


def tree_step_function(cell, node_kernel, widths, masked, with_nodes, pack,
                       zero_output_for_mask, go_backwards):
    """The `step(inputs, states)` of the backend loop.

    Args:
        cell: The `RRNNCell`; with `cell.step_trees`, step `t` runs tree
            `t` (the loop must be unrolled: the step counts its calls).
        node_kernel: `cell.node_kernel()`, made once for the sequence.
        widths: `(projection width, input width)` of `step_inputs`.
        masked: Whether `step_inputs` ends with a mask column.
        with_nodes: Whether `step_inputs` holds the raw inputs, and the
            step returns every slot's value.
        pack: Whether the output packs `[h, margin, trees, nodes]`.
        zero_output_for_mask: A masked step outputs 0 (else the state).
        go_backwards: The loop reads the sequence backwards.
    """
    proj_size, input_size = widths
    step_trees = cell.step_trees
    counter = [0]

    def step(inputs, states):
        h_tm1 = states[0]
        if step_trees is not None:
            index = counter[0]
            counter[0] += 1
            if go_backwards:
                index = len(step_trees) - 1 - index
            cell.tree = step_trees[index]
        x = None
        if with_nodes:
            x = inputs[:, proj_size : proj_size + input_size]
        result = cell.tree_step(inputs[:, :proj_size], h_tm1, node_kernel,
                                x=x)
        h = result["h"]
        output = h
        trees = ops.cast(result["trees"], h.dtype)
        margin = result["margin"]
        nodes = result.get("nodes")
        if masked:
            keep = inputs[:, -1:] > 0.5  # (batch, 1)
            h = ops.where(keep, h, h_tm1)
            output = (
                ops.where(keep, output, ops.zeros_like(output))
                if zero_output_for_mask
                else h
            )
            margin = ops.where(keep[:, 0], margin, 0.0)
            trees = ops.where(keep[:, :, None], trees, -1.0)
            if with_nodes:
                nodes = ops.where(keep[:, :, None], nodes, 0.0)
        if pack:
            batch = ops.shape(h)[0]
            packed = [
                output,
                ops.expand_dims(margin, -1),
                ops.reshape(trees, (batch, -1)),
            ]
            if with_nodes:
                packed.append(ops.reshape(nodes, (batch, -1)))
            output = ops.concatenate(packed, axis=-1)
        return output, [h]

    return step


def unpack_extras(cell, outputs, last_output, with_nodes):
    """`(margin, trees, nodes, outputs, last_output)` from the packed
    outputs of the loop: margin `(batch, steps)`, int32 trees `(batch,
    steps, iterations, 5)`, nodes `(batch, steps, slots, width)` or
    `None`, and the outputs cut back to `units`."""
    units, iterations = cell.units, cell.iterations
    batch = ops.shape(outputs)[0]
    steps = ops.shape(outputs)[1]
    margin = outputs[..., units]
    trees = ops.reshape(
        outputs[..., units + 1 : units + 1 + 5 * iterations],
        (batch, steps, iterations, 5),
    )
    trees = ops.cast(ops.round(trees), "int32")
    nodes = None
    if with_nodes:
        nodes = ops.reshape(
            outputs[..., units + 1 + 5 * iterations :],
            (batch, steps, cell.num_slots, cell.node_width),
        )
    return margin, trees, nodes, outputs[..., :units], last_output[..., :units]
