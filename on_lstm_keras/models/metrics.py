"""Perplexity as a Keras metric, and the unigram plateau: the perplexity
of predicting each word by its frequency, where a language model that has
not learned to use its context stays."""

import keras
import numpy as np
from keras import ops

__all__ = ["OFF_PLATEAU", "Perplexity", "on_unigram_plateau",
           "unigram_perplexity"]

OFF_PLATEAU = 0.9
"""A language model has left the unigram plateau once its validation
perplexity is at most this many times the unigram model's."""


def unigram_perplexity(train_ids, valid_ids, vocab_size):
    """The perplexity of a token stream under the training stream's word
    frequencies (add-one smoothed, id 0, `<pad>`, left out): the plateau a
    language model sits on while it predicts no more than how common each
    word is.

    Args:
        train_ids: The training token ids (the frequencies).
        valid_ids: The token ids scored; the first is not predicted, as in
            a language model's stream.
        vocab_size: The vocabulary size.

    Example:

    >>> round(unigram_perplexity([3, 3, 4], [3, 4], 5), 4)  # 1 / (2 / 7)
    3.5
    """
    counts = np.bincount(np.asarray(train_ids, dtype="int64"),
                         minlength=vocab_size).astype("float64")
    counts += 1.0
    counts[0] = 0.0  # <pad> is never a target
    with np.errstate(divide="ignore"):  # log 0 for <pad>, never read
        logp = np.log(counts / counts.sum())
    return float(np.exp(-logp[np.asarray(valid_ids[1:])].mean()))


def on_unigram_plateau(perplexity, unigram):
    """Whether a validation `perplexity` is still on the plateau of the
    `unigram` model's (above `OFF_PLATEAU` times it)."""
    return bool(perplexity > OFF_PLATEAU * unigram)


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
