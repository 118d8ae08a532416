"""Split scores from a left-to-right model, a right-to-left model, or both.

A forward language model's master-forget distance `d_f` at word `w_i` says
how much of its history it erases on reading `w_i`: the strength of the
boundary between `w_(i-1)` and `w_i`, seen from the left. A backward model
(trained on reversed sentences) reads `w_(i-1)` just after `w_i`, so its
`d_f` at `w_(i-1)` is the strength of the same boundary seen from the right.
Here both are indexed by boundary (`model_parser.boundary_distances`):
boundary `j` lies before word `j`, boundary 0 is the sentence start and
boundary `n` its end; each model reads all `n + 1` of them (the outer ones
at the `<eos>` that frames the sentence).

The score of a boundary combines the views chosen:

- one layer of one model: its `d_f`, as it is (the trees are exactly the
  ones built from that layer's distances);
- the mean over layers: each layer's `d_f` is z-scored over the sentence's
  boundaries first, then the layers are averaged;
- both readings: each model's view (one layer, or the mean over
  layers) is z-scored over the sentence's `n + 1` boundaries, and the two
  are averaged, boundary by boundary.

Why a per-sentence z-score: the two models (and the layers of one model)
put `d_f` on different scales. A layer whose distances span 0.2–0.9 would
outvote one that spans 0.45–0.55 in a plain average, though both rank the
boundaries with the same confidence relative to their own spread. The
z-score (subtract the sentence's mean, divide by its population standard
deviation) is an increasing affine map per sentence, so it leaves each
view's own tree unchanged and puts every view on the same scale before they
are averaged. Unlike a rank transform, it keeps the size of a gap: a clear
boundary in one view can outweigh a near-tie in the other. A view that is
constant over a sentence carries no preference and becomes all zeros. The
statistics are taken over the same `n + 1` boundaries for every view, so
the two directions are treated alike (each sees one outer boundary at its
closing `<eos>`).

The scores go to `distances_to_tree`, one per word: word `i`'s score is
boundary `i`'s (the one before it), so the last boundary (the sentence end)
is dropped.
"""

import numpy as np

from on_lstm_keras.utils import validation as check

READINGS = ("forward", "backward", "both")
"""Where split scores come from: the forward model, the backward model, or
the two combined."""

LAYER_MEAN = "mean"
"""`layer=` value: the mean over layers of the z-scored distances."""


def default_layer(num_layers):
    """The middle layer, numbered from 1 (the lower one for an even count).

    Example:

    >>> default_layer(3), default_layer(2), default_layer(1)
    (2, 1, 1)
    """
    return (num_layers + 1) // 2


def check_layer(layer, num_layers, mean=False):
    """Returns `layer` (1-based; `None`: the middle one) or raises a
    `ValueError` naming it. With `mean=True`, `"mean"` is taken too."""
    if layer is None:
        return default_layer(num_layers)
    if mean and layer == LAYER_MEAN:
        return layer
    if (isinstance(layer, bool) or not isinstance(layer, (int, np.integer))
            or not 1 <= layer <= num_layers):
        alternative = " or 'mean'" if mean else ""
        raise ValueError(
            f"Argument `layer` must be an integer in 1..{num_layers} (the "
            f"model has {num_layers} layer{'s' if num_layers != 1 else ''})"
            f"{alternative}, received: layer={layer!r}"
        )
    return int(layer)


def zscore(values):
    """`(values - mean) / std` along the last axis (population standard
    deviation); all zeros where the values are constant.

    Example:

    >>> zscore([1.0, 3.0, 1.0, 3.0]).tolist()
    [-1.0, 1.0, -1.0, 1.0]
    >>> zscore([2.0, 2.0]).tolist()
    [0.0, 0.0]
    """
    x = np.asarray(values, dtype=np.float64)
    centred = x - x.mean(axis=-1, keepdims=True)
    std = x.std(axis=-1, keepdims=True)
    # Constant means max == min: the mean of equal values can be off by an
    # ulp, which leaves a tiny std that would turn "no preference" into -1s.
    varies = (np.ptp(x, axis=-1, keepdims=True) > 0) & (std > 0)
    safe = np.where(varies, std, 1.0)
    return np.where(varies, centred / safe, 0.0)


def _boundaries_arg(name, boundaries):
    b = np.asarray(boundaries, dtype=np.float64)
    if b.ndim != 2 or b.shape[1] < 2 or not np.all(np.isfinite(b)):
        raise ValueError(
            f"Argument `{name}` must be a finite array (layers, words + 1) "
            f"of boundary distances, received shape {b.shape}")
    return b


def layer_view(boundaries, layer=None, name="boundaries"):
    """One model's boundary scores: one layer's `d_f` as it is, or the mean
    over layers of the z-scored `d_f`.

    Args:
        boundaries: Array `(layers, n + 1)` (`boundary_distances`).
        layer: Layer number from 1 (default: the middle one) or `"mean"`.
        name: The argument's name in error messages.

    Returns:
        A float64 array of `n + 1` boundary scores.

    Example:

    >>> layer_view([[1.0, 3.0, 1.0], [0.0, 0.0, 3.0]], layer=2).tolist()
    [0.0, 0.0, 3.0]
    """
    b = _boundaries_arg(name, boundaries)
    layer = check_layer(layer, b.shape[0], mean=True)
    if layer == LAYER_MEAN:
        return zscore(b).mean(axis=0)
    return b[layer - 1]


def split_scores(forward=None, backward=None, layer=None):
    """One split score per word, for `distances_to_tree`.

    Args:
        forward: Boundary distances `(layers, n + 1)` of a forward model
            (`boundary_distances`), or `None`.
        backward: Those of a backward model, or `None`. At least one of the
            two; with both, they must cover the same sentence.
        layer: Layer number from 1 (default: each model's middle layer) or
            `"mean"`; with both directions the same choice applies to each.

    Returns:
        A float64 array of `n` scores: word `i`'s is boundary `i`'s. With
        one direction and one layer these are that layer's `d_f` as it is;
        otherwise see the module docstring.

    Example (forward boundaries z-score to [-1, 1, -1, 1], backward ones to
    [-1, 1, 1, -1]; their mean without the sentence end):

    >>> split_scores([[1.0, 3.0, 1.0, 3.0]], [[0.0, 2.0, 2.0, 0.0]]).tolist()
    [-1.0, 1.0, 0.0]
    """
    views = [layer_view(b, layer, name)
             for name, b in (("forward", forward), ("backward", backward))
             if b is not None]
    if not views:
        raise ValueError("Give `forward` or `backward` boundary distances (or "
                         "both), received neither")
    if len(views) == 2 and len(views[0]) != len(views[1]):
        raise ValueError(
            "Arguments `forward` and `backward` must cover the same sentence, "
            f"received {len(views[0])} and {len(views[1])} boundaries")
    if len(views) == 1:
        return views[0][:-1]
    return np.mean([zscore(v) for v in views], axis=0)[:-1]


def reading_arg(reading):
    """`reading` checked: `"forward"`, `"backward"` or `"both"`."""
    return check.choice("reading", reading, READINGS)
