"""Embedding with word-level (row) dropout, as AWD-LSTM's embedding dropout."""

import keras
from keras import ops

from on_lstm_keras.utils import validation as check

__all__ = ["WordDropoutEmbedding"]


@keras.saving.register_keras_serializable(package="on_lstm_keras")
class WordDropoutEmbedding(keras.layers.Embedding):
    """`keras.layers.Embedding` that drops whole words in training.

    Each call draws one keep/drop decision per vocabulary row: every
    occurrence of a dropped word in the batch gets a zero vector, and the
    kept rows are scaled by `1 / (1 - word_dropout)` (Gal & Ghahramani's
    embedding dropout, AWD-LSTM's `dropoute`). At inference it is a plain
    embedding.

    Args:
        input_dim: Vocabulary size.
        output_dim: Embedding size.
        word_dropout: Float in [0, 1), the fraction of vocabulary rows to
            drop per call. Default 0.
        seed: Random seed.
        **kwargs: Passed to `keras.layers.Embedding` (e.g. `mask_zero`).

    Example:

    >>> import numpy as np
    >>> layer = WordDropoutEmbedding(10, 4, word_dropout=0.5, seed=1)
    >>> out = layer(np.array([[3, 3, 5]]), training=True)
    >>> bool(np.all(out[0, 0] == out[0, 1]))  # one decision per word
    True
    """

    def __init__(self, input_dim, output_dim, word_dropout=0.0, seed=None,
                 **kwargs):
        super().__init__(input_dim, output_dim, **kwargs)
        self.word_dropout = check.rate("word_dropout", word_dropout)
        self.seed = seed
        self.seed_generator = keras.random.SeedGenerator(seed)

    def call(self, inputs, training=False):
        outputs = super().call(inputs)
        if training and self.word_dropout > 0:
            keep = keras.random.dropout(
                ops.ones((self.input_dim,), dtype=outputs.dtype),
                rate=self.word_dropout,
                seed=self.seed_generator,
            )
            rows = ops.take(keep, ops.cast(inputs, "int32"), axis=0)
            outputs = outputs * ops.expand_dims(rows, -1)
        return outputs

    def get_config(self):
        return {
            **super().get_config(),
            "word_dropout": self.word_dropout,
            "seed": self.seed,
        }
