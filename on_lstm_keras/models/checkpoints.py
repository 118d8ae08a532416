"""Epoch checkpoints of a training run, safe against a crash at any moment.

An epoch checkpoint is a weights file (weights and optimizer state) plus
`training_metadata.json` naming it, both written atomically (temporary
file, fsync, rename), the metadata last: that rename commits the
checkpoint, so a crash at any moment (even `kill -9` in the middle of a
write) leaves the previous epoch's checkpoint whole.
"""

import json
import os

import keras

from on_lstm_keras.utils import validation as check
from on_lstm_keras.utils.atomic import replacing
from on_lstm_keras.models.callbacks import finite_logs
from on_lstm_keras.models.saving import MODEL_FILE
from on_lstm_keras.models.saving import write_json

__all__ = [
    "BACKUP_DIR",
    "CHECKPOINT_FILE",
    "CorruptCheckpoint",
    "EpochCheckpoint",
    "checkpoint_epoch",
    "has_checkpoint",
    "refuse_to_overwrite",
    "remove_leftovers",
    "restore_checkpoint",
]

BACKUP_DIR = "checkpoint"
CHECKPOINT_FILE = "training_metadata.json"


class CorruptCheckpoint(ValueError):
    """An epoch checkpoint that cannot be read back (the message names it)."""


class EpochCheckpoint(keras.callbacks.Callback):
    """Saves the weights and the optimizer state after every epoch.

    `epoch-N.weights.h5` is written atomically, then
    `training_metadata.json` (`{"epoch": N, "weights": "epoch-N.weights.h5"}`),
    also atomically: that rename commits the checkpoint. Older weights are
    removed only after it. A crash at any moment leaves a whole checkpoint.
    An epoch with an inf/NaN value is not checkpointed.

    Args:
        directory: The checkpoint folder (created when first needed).
    """

    def __init__(self, directory):
        super().__init__()
        self.directory = directory

    def on_epoch_end(self, epoch, logs=None):
        if not finite_logs(logs):
            return
        os.makedirs(self.directory, exist_ok=True)
        name = f"epoch-{epoch + 1}.weights.h5"
        with replacing(os.path.join(self.directory, name),
                       suffix=".weights.h5") as tmp:
            self.model.save_weights(tmp)
        write_json(os.path.join(self.directory, CHECKPOINT_FILE),
                   {"epoch": epoch + 1, "weights": name})
        for other in os.listdir(self.directory):
            if other not in (name, CHECKPOINT_FILE):
                path = os.path.join(self.directory, other)
                if os.path.isfile(path):
                    os.remove(path)


def has_checkpoint(output_dir):
    """Whether `output_dir` holds an epoch checkpoint (its
    `BACKUP_DIR/CHECKPOINT_FILE`, written last, commits one)."""
    return os.path.isfile(os.path.join(output_dir, BACKUP_DIR, CHECKPOINT_FILE))


def refuse_to_overwrite(output_dir, how="--resume"):
    """Raises `FileExistsError` if `output_dir` holds a checkpoint, which a
    new run would overwrite; the message says to pass `how`."""
    if has_checkpoint(output_dir):
        raise FileExistsError(
            f"{output_dir} holds a training checkpoint; pass {how} to "
            "continue it, or choose another output directory"
        )


def _read_checkpoint(output_dir):
    """`(epoch, weights_path)` of the checkpoint in `output_dir`, or `None`."""
    if not has_checkpoint(output_dir):
        return None
    backup_dir = os.path.join(output_dir, BACKUP_DIR)
    path = os.path.join(backup_dir, CHECKPOINT_FILE)
    try:
        with open(path, encoding="utf-8") as f:
            meta = json.load(f)
        epoch = check.non_negative_int("epoch", meta["epoch"])
        # Keras' BackupAndRestore layout (older runs) has no "weights".
        weights = meta.get("weights", "latest.weights.h5")
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise CorruptCheckpoint(_corrupt_message(output_dir, path, e)) from None
    return epoch, os.path.join(backup_dir, weights)


def _corrupt_message(output_dir, path, error):
    return (
        f"Corrupt training checkpoint {path} ({type(error).__name__}: "
        f"{error}): the run cannot be resumed from it. The best model so far "
        f"({os.path.join(output_dir, MODEL_FILE)}) is still usable. To train "
        f"again, delete {os.path.join(output_dir, BACKUP_DIR)} and run "
        "without --resume, or choose another output directory."
    )


def checkpoint_epoch(output_dir):
    """Number of epochs the checkpoint in `output_dir` holds (0 if none).

    Raises:
        CorruptCheckpoint: `training_metadata.json` cannot be read.
    """
    found = _read_checkpoint(output_dir)
    return 0 if found is None else found[0]


def restore_checkpoint(model, output_dir):
    """Loads the epoch checkpoint of `output_dir` into `model` (weights and
    optimizer state).

    Returns:
        The number of epochs it holds (0 if there is no checkpoint).

    Raises:
        CorruptCheckpoint: A checkpoint file cannot be read; the message
            names it and says what to do.
    """
    found = _read_checkpoint(output_dir)
    if found is None:
        return 0
    epoch, weights = found
    if model.optimizer is not None and not model.optimizer.built:
        model.optimizer.build(model.trainable_variables)
    try:
        model.load_weights(weights)
    except Exception as e:  # h5py and Keras raise many types for a bad file.
        raise CorruptCheckpoint(_corrupt_message(output_dir, weights, e)) from None
    return epoch


def remove_leftovers(directory):
    """Removes temporary files left by a process killed while writing."""
    if not os.path.isdir(directory):
        return
    for name in os.listdir(directory):
        path = os.path.join(directory, name)
        if name.startswith(".") and ".tmp" in name and os.path.isfile(path):
            os.remove(path)

