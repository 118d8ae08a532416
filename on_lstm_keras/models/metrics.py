"""Perplexity as a Keras metric."""

import keras
from keras import ops

__all__ = ["Perplexity"]


@keras.saving.register_keras_serializable(package="on_lstm_keras")
class Perplexity(keras.metrics.Metric):
    """`exp` of the mean per-token negative log-likelihood.

    Tokens are weighted by `sample_weight` (padding has weight 0) and by the
    model's output mask, so the result is the exact corpus perplexity over
    the real tokens, however they are batched.

    Args:
        from_logits: Whether predictions are logits (default) or
            probabilities.
        name: Metric name. Default `"perplexity"`.

    Example:

    >>> import numpy as np
    >>> m = Perplexity()
    >>> m.update_state(np.array([[0, 1]]), np.zeros((1, 2, 4)))
    >>> round(float(m.result()), 4)  # uniform over 4 words
    4.0
    """

    def __init__(self, from_logits=True, name="perplexity", **kwargs):
        super().__init__(name=name, **kwargs)
        self.from_logits = from_logits
        self.total_nll = self.add_variable(
            shape=(), initializer="zeros", name="total_nll"
        )
        self.count = self.add_variable(
            shape=(), initializer="zeros", name="count"
        )

    def update_state(self, y_true, y_pred, sample_weight=None):
        # The targets in the float dtype first, as Keras' loss classes take
        # them, so that a compiled training step computes exactly the
        # loss's cross-entropy here and XLA shares it between the two
        # instead of a second pass over the logits (2 to 5% of the `small`
        # preset's training step). Word ids up to 2**24 are exact in it.
        mask = getattr(y_pred, "_keras_mask", None)
        y_pred = ops.convert_to_tensor(y_pred, dtype=self.dtype)
        y_true = ops.convert_to_tensor(y_true, dtype=self.dtype)
        nll = keras.losses.sparse_categorical_crossentropy(
            y_true, y_pred, from_logits=self.from_logits
        )
        nll = ops.cast(nll, "float32")
        weight = ops.ones_like(nll)
        if mask is not None:
            weight = weight * ops.cast(mask, "float32")
        if sample_weight is not None:
            weight = weight * ops.cast(sample_weight, "float32")
        self.total_nll.assign_add(ops.sum(nll * weight))
        self.count.assign_add(ops.sum(weight))

    def result(self):
        return ops.exp(self.total_nll / ops.maximum(self.count, 1e-12))

    def get_config(self):
        return {**super().get_config(), "from_logits": self.from_logits}
