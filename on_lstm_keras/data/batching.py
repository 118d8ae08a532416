"""Token streams cut into truncated-BPTT batches for a stateful model."""

import math

import keras
import numpy as np

from on_lstm_keras.utils import validation as check


def batchify(ids, batch_size):
    """Cuts a token stream into `batch_size` contiguous rows.

    Row `b` holds the `b`-th slice of the stream, so window `k` of row `b`
    continues window `k - 1` of the same row: a stateful model carries its
    state across batches. The tail that does not fill a row is dropped.

    Example:

    >>> batchify(list(range(10)), 3)
    array([[0, 1, 2],
           [3, 4, 5],
           [6, 7, 8]])
    """
    batch_size = check.positive_int("batch_size", batch_size)
    ids = np.asarray(ids, dtype="int64")
    steps = len(ids) // batch_size
    if steps < 2:
        raise ValueError(
            f"Argument `ids` is too short for batch_size={batch_size}: "
            f"received {len(ids)} tokens, need at least {2 * batch_size}"
        )
    return ids[: steps * batch_size].reshape(batch_size, steps)


class BPTTSequence(keras.utils.PyDataset):
    """Truncated-BPTT windows over a token stream, as a Keras data source.

    Item `k` is `(x, y, sample_weight)`, each `(batch_size, bptt)`: `x` is
    window `k` of every row of `batchify(ids, batch_size)`, `y` the same
    window shifted one token ahead. The last window is padded to `bptt`
    with id 0 (`<pad>`, which the language model masks, so the state is not
    disturbed) and weight 0, so every batch has the same shape and padding
    never counts in losses or metrics. Pass `shuffle=False` to `model.fit`:
    a stateful model needs the windows in order.

    With `variable_length=True` the window boundaries change every epoch
    (AWD-LSTM's variable BPTT: a length of `bptt`, or `bptt / 2` with
    probability 0.05, plus Gaussian noise of sd 5, at least 5), drawn from
    `seed` and the epoch number (`set_epoch`), so a run is reproducible and a
    resumed run sees the same windows. The number of windows per epoch is
    kept fixed (the positions are rescaled to cover the stream), and
    lengths are rounded to a multiple of 5 so that compiled backends see
    only a few shapes.

    Args:
        ids: The token-id stream.
        batch_size: Rows per batch.
        bptt: Window length.
        variable_length: See above. Default `False`.
        seed: Seed of the variable lengths.

    Example:

    >>> data = BPTTSequence(list(range(22)), batch_size=2, bptt=4)
    >>> len(data)
    3
    >>> x, y, w = data[2]
    >>> x.tolist(), y.tolist(), w.tolist()
    ([[8, 9, 0, 0], [19, 20, 0, 0]], [[9, 10, 0, 0], [20, 21, 0, 0]], [[1.0, 1.0, 0.0, 0.0], [1.0, 1.0, 0.0, 0.0]])
    """

    def __init__(self, ids, batch_size, bptt, variable_length=False, seed=0,
                 **kwargs):
        super().__init__(**kwargs)
        self.bptt = check.positive_int("bptt", bptt)
        self.data = batchify(ids, batch_size)
        self.batch_size = batch_size
        self.variable_length = bool(variable_length)
        self.seed = seed
        self.tokens = self.data.shape[0] * (self.data.shape[1] - 1)
        self.set_epoch(0)

    def set_epoch(self, epoch):
        """Draws the window boundaries of `epoch` (variable length only)."""
        usable = self.data.shape[1] - 1  # the last token is never an input
        count = math.ceil(usable / self.bptt)
        if not self.variable_length:
            starts = [k * self.bptt for k in range(count)]
        else:
            rng = np.random.default_rng([self.seed, epoch])
            base = np.where(rng.random(count) < 0.95, self.bptt, self.bptt / 2)
            lengths = np.maximum(5, rng.normal(base, 5))
            edges = np.concatenate([[0], np.cumsum(lengths)])
            edges = np.round(edges / edges[-1] * usable).astype(int)
            starts = list(edges[:-1])
            self._ends = list(edges[1:])
        self.epoch = epoch
        self._starts = starts

    def __len__(self):
        return len(self._starts)

    def window(self, index):
        """`(start, length)` of window `index`."""
        start = self._starts[index]
        if self.variable_length:
            end = self._ends[index]
        else:
            end = min(start + self.bptt, self.data.shape[1] - 1)
        return start, end - start

    def arrays(self):
        """The epoch's windows as three arrays, `(x, y, sample_weight)`.

        Each is `(len(self) * batch_size, bptt)`, window after window:
        rows `k * batch_size` to `(k + 1) * batch_size - 1` are item `k`.
        `model.fit(x, y, sample_weight=w, batch_size=batch_size,
        shuffle=False)` then reads the very batches `fit(self)` reads, in
        the same order, without calling Python for each batch (on
        TensorFlow, Keras reads a `PyDataset` through
        `tf.data.Dataset.from_generator`, which cost about a tenth of a
        training step of the `small` preset on one core). The arrays hold
        12 bytes per token. Windows of one length only.

        Example:

        >>> x, y, w = BPTTSequence(list(range(22)), 2, 4).arrays()
        >>> x.tolist()[4:]
        [[8, 9, 0, 0], [19, 20, 0, 0]]
        """
        if self.variable_length:
            raise ValueError(
                "BPTTSequence.arrays() needs windows of one length, received "
                "a sequence with variable_length=True: pass the sequence "
                "itself to `fit`"
            )
        rows, count = self.batch_size, len(self)
        usable = self.data.shape[1] - 1
        x = np.zeros((rows, count * self.bptt), dtype="int32")
        y = np.zeros((rows, count * self.bptt), dtype="int32")
        w = np.zeros((rows, count * self.bptt), dtype="float32")
        x[:, :usable] = self.data[:, :usable]
        y[:, :usable] = self.data[:, 1:]
        w[:, :usable] = 1.0

        def windows(a):
            a = a.reshape(rows, count, self.bptt).transpose(1, 0, 2)
            return a.reshape(count * rows, self.bptt)

        return windows(x), windows(y), windows(w)

    def __getitem__(self, index):
        start, length = self.window(index)
        width = self.bptt
        if self.variable_length:
            width = max(5, 5 * math.ceil(length / 5))
        x = np.zeros((self.batch_size, width), dtype="int32")
        y = np.zeros((self.batch_size, width), dtype="int32")
        w = np.zeros((self.batch_size, width), dtype="float32")
        x[:, :length] = self.data[:, start:start + length]
        y[:, :length] = self.data[:, start + 1:start + 1 + length]
        w[:, :length] = 1.0
        return x, y, w
