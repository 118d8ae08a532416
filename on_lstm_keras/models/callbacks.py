"""The Keras callbacks of `train_language_model`: each epoch's start (states,
windows, dropout seeds), the best model, stopping on divergence, and the
CSV log."""

import csv
import io
import math
import numbers
import os

import keras

from on_lstm_keras.utils.atomic import write_text
from on_lstm_keras.models.saving import save_atomically

__all__ = [
    "BestModel",
    "EpochStart",
    "HistoryLog",
    "StopOnDivergence",
    "best_logged",
    "finite_logs",
    "read_history",
]


class EpochStart(keras.callbacks.Callback):
    """Resets the carried states, draws the epoch's BPTT windows and
    re-seeds every dropout of the model from `(seed, epoch)`.

    The dropout masks of an epoch then depend on nothing but the seed and
    the epoch number, so a run resumed from an epoch checkpoint draws the
    very masks the uninterrupted run would have drawn (Keras does not save
    random-generator states with the weights).
    """

    def __init__(self, data, seed=0):
        super().__init__()
        self.data = data
        self.seed = seed

    def on_epoch_begin(self, epoch, logs=None):
        self.model.reset_rnn_states()
        self.data.set_epoch(epoch)
        generators = [
            v for v in self.model.non_trainable_variables
            if v.name == "seed_generator_state"
        ]
        for k, state in enumerate(generators):
            # [seed, counter]: the counter advances by one per draw.
            value = [(self.seed * 7919 + k) % 2**31, epoch * 2**22]
            state.assign(keras.ops.cast(value, state.dtype))


class BestModel(keras.callbacks.Callback):
    """Saves a stateless copy of the model whenever `val_perplexity` improves.

    The copy (`stateful=False`, no carried states) is what parsing and
    evaluation load; it is written through a temporary file.
    """

    def __init__(self, path, best=None):
        super().__init__()
        self.path = path
        self.best = math.inf if best is None else best
        self.export = None

    def on_epoch_end(self, epoch, logs=None):
        value = (logs or {}).get("val_perplexity")
        if value is None or not value < self.best:
            return
        self.best = value
        if self.export is None:
            self.export = self.model.clone(stateful=False)
        else:
            self.export.copy_weights_from(self.model)
        save_atomically(self.export, self.path)


def finite_logs(logs):
    """False if any number in the epoch logs is inf or NaN."""
    return all(
        math.isfinite(v) for v in (logs or {}).values()
        if isinstance(v, numbers.Real)
    )


class StopOnDivergence(keras.callbacks.Callback):
    """Stops training at the first inf/NaN loss (batch or epoch logs) and
    remembers the epoch, for `TrainingDiverged`."""

    def __init__(self):
        super().__init__()
        self.epoch = None

    def on_train_batch_end(self, batch, logs=None):
        loss = (logs or {}).get("loss")
        if loss is not None and not math.isfinite(float(loss)):
            self.model.stop_training = True

    def on_epoch_end(self, epoch, logs=None):
        if not finite_logs(logs):
            self.epoch = epoch
            self.model.stop_training = True


class HistoryLog(keras.callbacks.Callback):
    """The CSV log (`epoch` then the sorted log keys, one row an epoch),
    rewritten atomically after every epoch. An epoch with an inf/NaN value
    is not logged (it is not checkpointed either).

    Args:
        path: The CSV file.
        rows: Rows already logged (dicts), kept first.
    """

    def __init__(self, path, rows=()):
        super().__init__()
        self.path = path
        self.rows = [dict(r) for r in rows]

    def on_epoch_end(self, epoch, logs=None):
        if not finite_logs(logs):
            return
        self.rows.append({"epoch": epoch, **(logs or {})})
        keys = sorted({k for row in self.rows for k in row} - {"epoch"})
        text = io.StringIO()
        writer = csv.DictWriter(text, ["epoch", *keys], restval="",
                                lineterminator="\n")
        writer.writeheader()
        writer.writerows(self.rows)
        write_text(self.path, text.getvalue())


def read_history(path, before_epoch=None):
    """The rows of a CSV log (dicts of strings), only those of epochs
    `< before_epoch` if given: after a crash between logging an epoch and
    checkpointing it, the resumed run logs that epoch again, once."""
    if not os.path.exists(path):
        return []
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    kept = []
    for row in rows:
        try:
            epoch = int(row["epoch"])
        except (KeyError, TypeError, ValueError):
            continue  # a torn row of an older log
        if before_epoch is None or epoch < before_epoch:
            kept.append(row)
    return kept


def best_logged(rows, key="val_perplexity"):
    """Best (lowest) value of `key` in CSV-log rows, or `None`."""
    values = []
    for row in rows:
        try:
            values.append(float(row[key]))
        except (KeyError, TypeError, ValueError):
            pass
    return min(values) if values else None

