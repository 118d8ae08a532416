"""Looking into a language model that does not learn: the gradient that
reaches each of its parts, and how saturated the gates of each recurrent
layer are.

`gradient_norms` gives the global norm of the loss gradient per part
(embedding, each recurrent layer, softmax); `gate_saturation` the share of
gate activations near 0 or 1 per layer. The gates are recomputed from each
layer's weights, its input and its output sequence (`gate_activations`),
with the layers called one after another, so the layers' own code is left
as it is. Dropout is off throughout.

`benchmarks/lstm_search.py --diagnose` prints both for the best trial of
each cell.
"""

import math

import keras
import numpy as np
from keras import ops

from on_lstm_keras.utils import validation as check
from on_lstm_keras.ops import cumax
from on_lstm_keras.ops import reverse_cumax

__all__ = [
    "GRADIENT_BACKENDS",
    "gate_activations",
    "gate_saturation",
    "gradient_norms",
    "model_parts",
]

GRADIENT_BACKENDS = ("tensorflow", "jax")


def model_parts(model):
    """`{name: trainable weights}` of an `ONLSTMLanguageModel`, in order:
    `embedding`, each recurrent layer by its name, `softmax` (the decoder,
    or the output bias of a tied model)."""
    parts = {"embedding": model.embedding.trainable_weights}
    for layer in model.rnn_layers:
        parts[layer.name] = layer.trainable_weights
    parts["softmax"] = (model.decoder.trainable_weights if model.decoder
                        else [model.output_bias])
    return parts


def _gradients(model, variables, x, y, w):
    """The gradients of the mean token cross-entropy (dropout off) with
    respect to `variables`, as NumPy arrays."""
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    if keras.backend.backend() == "tensorflow":
        import tensorflow as tf

        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=False), sample_weight=w)
        grads = tape.gradient(loss, variables)
    else:
        import jax

        fixed = [v.value for v in model.non_trainable_variables]

        def loss_of(values):
            logits, _ = model.stateless_call(values, fixed, x, training=False)
            return loss_fn(y, logits, sample_weight=w)

        grads = jax.grad(loss_of)([v.value for v in variables])
    return [np.asarray(ops.convert_to_numpy(g), dtype="float64") for g in grads]


def gradient_norms(model, batches):
    """The global norm of the loss gradient of each part of a language
    model, averaged over batches, and the part's weight norm.

    Args:
        model: An `ONLSTMLanguageModel`, built (a stateless one: each batch
            is read from a zero state).
        batches: `(x, y, sample_weight)` triples, e.g. items of a
            `BPTTSequence` (`sample_weight` may be `None`).

    Returns:
        `{part: {"gradient_norm": ..., "weight_norm": ...}}` for the parts
        of `model_parts`, in that order.

    Raises:
        ValueError: The Keras backend is neither TensorFlow nor JAX (the
            message names it), or `batches` is empty.
    """
    backend = keras.backend.backend()
    if backend not in GRADIENT_BACKENDS:
        raise ValueError(
            "gradient_norms needs the tensorflow or the jax backend, "
            f"received: KERAS_BACKEND={backend!r}")
    batches = list(batches)
    if not batches:
        raise ValueError("Argument `batches` must hold at least one batch, "
                         "received none")
    variables = list(model.trainable_variables)
    where = {name: [k for k, v in enumerate(variables)
                    if any(v is p for p in part)]
             for name, part in model_parts(model).items()}
    norms = {name: [] for name in where}
    for x, y, w in batches:
        grads = _gradients(model, variables, x, y, w)
        for name, indices in where.items():
            norms[name].append(math.sqrt(sum(
                float((grads[k] ** 2).sum()) for k in indices)))
    result = {}
    for name, indices in where.items():
        weights = [np.asarray(ops.convert_to_numpy(variables[k]), "float64")
                   for k in indices]
        result[name] = {
            "gradient_norm": float(np.mean(norms[name])),
            "weight_norm": math.sqrt(sum(float((w ** 2).sum())
                                         for w in weights)),
        }
    return result


def gate_activations(cell, inputs, outputs):
    """The gates an `ONLSTMCell` used at every step, recomputed from its
    weights, its input sequence and its output sequence.

    `h₋₁` of step t is `outputs[:, t - 1]` (zero at the first step), so the
    sequence must have been read from a zero state with no padding before
    its last real step.

    Args:
        cell: The `ONLSTMCell` (an `ONLSTM` layer's `cell`).
        inputs: The layer's input, `(batch, time, features)`.
        outputs: The layer's output sequence `h`, `(batch, time, units)`.

    Returns:
        A dict of NumPy arrays: `forget`, `input`, `output` (the gates
        `f, i, o`) and `candidate` (`c̃`), `(batch, time, units)`;
        `master_forget` and `master_input`, `(batch, time, levels)` (both
        constantly 1 in the language model's LSTM, a one-level ON-LSTM
        with the reverse-cumsum master input).
    """
    units, levels = cell.units, cell.levels
    inputs = ops.cast(inputs, cell.compute_dtype)
    outputs = ops.cast(outputs, cell.compute_dtype)
    previous = ops.concatenate(
        [ops.zeros_like(outputs[:, :1]), outputs[:, :-1]], axis=1)
    z = cell.input_projection(inputs) + ops.matmul(previous,
                                                   cell.recurrent_kernel)
    z_i, z_f, z_c, z_o, z_mf, z_mi = ops.split(
        z, [units, 2 * units, 3 * units, 4 * units, 4 * units + levels],
        axis=-1)
    master_input = (1.0 - cumax(z_mi) if cell.master_input == "cumax"
                    else reverse_cumax(z_mi))
    gates = {
        "forget": cell.recurrent_activation(z_f),
        "input": cell.recurrent_activation(z_i),
        "output": cell.recurrent_activation(z_o),
        "candidate": cell.activation(z_c),
        "master_forget": cumax(z_mf),
        "master_input": master_input,
    }
    return {k: np.asarray(ops.convert_to_numpy(v)) for k, v in gates.items()}


def gate_saturation(model, batches, low=0.05, high=0.95):
    """How saturated the gates of each recurrent layer of a language model
    are, over the real (not padded) steps of some batches.

    Args:
        model: An `ONLSTMLanguageModel`, built; its layers are called one
            after another on each batch from a zero state, dropout off.
        batches: `(x, y, sample_weight)` triples (only `x` is read).
        low, high: A gate activation counts as saturated below `low` or
            above `high`; a candidate when `|c̃| > high`.

    Returns:
        `{layer name: {"forget" | "input" | "output": {"below", "above",
        "mean"}, "candidate": {"saturated"}, "master_forget" |
        "master_input": {"mean"}}}`, the shares and means over every unit
        of every real step.

    Raises:
        ValueError: `low` or `high` is not in (0, 1), or `low >= high`.
    """
    low = check.positive_float("low", low)
    high = check.positive_float("high", high)
    if not low < high < 1:
        raise ValueError(
            "Arguments `low` and `high` must satisfy 0 < low < high < 1, "
            f"received: low={low!r}, high={high!r}")
    sums = {}
    for x, _, _ in batches:
        mask = ops.not_equal(x, 0)
        real = np.asarray(ops.convert_to_numpy(mask))
        h = model.embedding(x, training=False)
        for layer in model.rnn_layers:
            outputs = layer(h, mask=mask, training=False)[0]
            gates = gate_activations(layer.cell, h, outputs)
            stats = sums.setdefault(layer.name, {})
            for name, values in gates.items():
                values = values[real].astype("float64")
                part = stats.setdefault(name, [0.0, 0.0, 0.0, 0])
                if name == "candidate":
                    part[1] += float((np.abs(values) > high).sum())
                else:
                    part[0] += float((values < low).sum())
                    part[1] += float((values > high).sum())
                part[2] += float(values.sum())
                part[3] += values.size
            h = outputs
    result = {}
    for layer, stats in sums.items():
        row = {}
        for name, (below, above, total, count) in stats.items():
            count = max(count, 1)
            if name in ("forget", "input", "output"):
                row[name] = {"below": below / count, "above": above / count,
                             "mean": total / count}
            elif name == "candidate":
                row[name] = {"saturated": above / count}
            else:
                row[name] = {"mean": total / count}
        result[layer] = row
    return result
