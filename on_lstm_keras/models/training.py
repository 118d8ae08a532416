"""Truncated-BPTT training of a stateful language model with `model.fit`.

`train_language_model` wires the pieces that make `fit` behave like the
paper's training loop: windows in order with the state carried between
them (`BPTTSequence`, as arrays, `shuffle=False`), states reset at every
epoch, gradient clipping, validation perplexity on a separate stateful copy
with its own batch size, a checkpoint every epoch, the best model by
validation perplexity and a CSV log. Since it is plain `fit`, any Keras
callback can be added.

Nothing is lost on a crash: every file is written atomically (temporary
file, fsync, rename), and an epoch checkpoint is a weights file plus
`training_metadata.json` naming it, written last, so a crash at any moment
(even `kill -9` in the middle of a write) leaves the previous epoch's
checkpoint whole. A run whose loss turns to inf or NaN stops at once
(`TrainingDiverged`) without checkpointing or logging the bad epoch.
"""

import csv
import io
import json
import math
import numbers
import os

import keras

from on_lstm_keras.utils import validation as check
from on_lstm_keras.utils.atomic import replacing
from on_lstm_keras.utils.atomic import write_text
from on_lstm_keras.config import DEFAULT_LEARNING_RATES
from on_lstm_keras.config import OPTIMIZERS
from on_lstm_keras.config import TrainingConfig
from on_lstm_keras.data.batching import BPTTSequence
from on_lstm_keras.models.distribute import num_replicas
from on_lstm_keras.models.metrics import Perplexity
from on_lstm_keras.models.saving import MODEL_FILE
from on_lstm_keras.models.saving import save_atomically
from on_lstm_keras.models.saving import write_json
from on_lstm_keras.models.schedules import LinearWarmup

BACKUP_DIR = "checkpoint"
CHECKPOINT_FILE = "training_metadata.json"
HISTORY = "history.csv"

# Every default is `TrainingConfig`'s (the paper's), written once there.
_DEFAULT = TrainingConfig()


class CorruptCheckpoint(ValueError):
    """An epoch checkpoint that cannot be read back (the message names it)."""


class TrainingDiverged(RuntimeError):
    """The loss or the perplexity became inf or NaN.

    Attributes:
        epoch: The epoch (from 1) in which it happened.
        saved_epoch: The last epoch whose checkpoint is kept (0: none).
    """

    def __init__(self, message, epoch, saved_epoch):
        super().__init__(message)
        self.epoch = epoch
        self.saved_epoch = saved_epoch


def make_optimizer(name=_DEFAULT.optimizer, learning_rate=_DEFAULT.learning_rate,
                   clipnorm=_DEFAULT.clipnorm,
                   weight_decay=_DEFAULT.weight_decay,
                   warmup_steps=_DEFAULT.warmup_steps):
    """SGD (the paper: lr 30, clip 0.25, L2 1.2e-6) or Adam (lr 0.002).

    With plain SGD, Keras' decoupled `weight_decay` equals the paper's L2
    penalty. The defaults are `TrainingConfig`'s; `learning_rate=None`
    takes the optimizer's from `config.DEFAULT_LEARNING_RATES`.

    Args:
        name: `"sgd"` or `"adam"`.
        learning_rate: The learning rate (after the warm-up, if any).
        clipnorm: Gradient-norm clipping of each variable (`None`: none).
        weight_decay: Decoupled weight decay (0 or `None`: none).
        warmup_steps: With N > 0, the rate rises linearly over the first N
            optimizer steps (`models.schedules.LinearWarmup`); the rate is
            then a schedule of the optimizer's `iterations`, not a
            variable, so it cannot be set afterwards (a resumed run gets
            its new rate from a new optimizer). 0: a constant rate.
    """
    name = check.choice("optimizer", name, OPTIMIZERS)
    if learning_rate is None:
        learning_rate = DEFAULT_LEARNING_RATES[name]
    learning_rate = check.positive_float("learning_rate", learning_rate)
    if clipnorm is not None:
        clipnorm = check.positive_float("clipnorm", clipnorm)
    if check.non_negative_int("warmup_steps", warmup_steps) > 0:
        learning_rate = LinearWarmup(learning_rate, warmup_steps)
    if name == "sgd":
        return keras.optimizers.SGD(
            learning_rate, clipnorm=clipnorm, weight_decay=weight_decay or None
        )
    return keras.optimizers.Adam(
        learning_rate, clipnorm=clipnorm, weight_decay=weight_decay or None
    )


def compile_language_model(model, optimizer, xla=False):
    """Compiles with token cross-entropy (from logits) and perplexity.

    Perplexity is a *weighted* metric: Keras passes `sample_weight` only to
    those, and the batches give the `<pad>` targets of a stream's last
    window weight 0, so they must not count.

    Args:
        model: The language model.
        optimizer: A Keras optimizer, or its name.
        xla: Compile the steps with XLA (`jit_compile=True`); otherwise
            Keras chooses (`"auto"`: XLA on JAX, not on a TensorFlow CPU).
    """
    model.compile(
        optimizer=optimizer,
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        weighted_metrics=[Perplexity()],
        jit_compile=True if xla else "auto",
    )
    return model


def fitting_batch_size(ids, batch_size):
    """`batch_size`, reduced for a stream too short to fill that many rows
    with two tokens each (and kept a multiple of the data-parallel
    replicas)."""
    replicas = num_replicas()
    if len(ids) < 2 * replicas:
        raise ValueError(
            f"A held-out token stream needs at least {2 * replicas} tokens, "
            f"received {len(ids)}"
        )
    rows = min(batch_size, len(ids) // 2)
    return max(replicas, rows - rows % replicas)


# Up to this many tokens, a stream cut into windows of one length goes to
# `fit` and `evaluate` as arrays (`BPTTSequence.arrays`, 12 bytes a token);
# a longer one, or variable windows, through the `PyDataset` itself.
ARRAY_TOKENS = 20_000_000


def data_arguments(data):
    """The `fit` / `evaluate` arguments that read the batches of `data`, a
    `BPTTSequence`, in order: its arrays with its batch size, or itself."""
    if data.variable_length or data.tokens > ARRAY_TOKENS:
        return {"x": data}
    x, y, w = data.arrays()
    return {"x": x, "y": y, "sample_weight": w, "batch_size": data.batch_size}


def evaluate_perplexity(model, ids, batch_size=_DEFAULT.eval_batch_size,
                        bptt=_DEFAULT.bptt, verbose=0, xla=False):
    """Perplexity of `model` on the token stream `ids`.

    The stream is cut into `batch_size` rows (fewer for a very short
    stream) read left to right with the state carried (a stateful copy of
    `model` with that batch size); every token but each row's first is
    predicted once. `xla`: as for `compile_language_model`.
    """
    batch_size = fitting_batch_size(ids, batch_size)
    evaluator = model.clone(stateful=True, batch_size=batch_size)
    compile_language_model(evaluator, "sgd", xla=xla)
    evaluator.reset_rnn_states()
    data = BPTTSequence(ids, batch_size, bptt)
    result = evaluator.evaluate(**data_arguments(data), verbose=verbose,
                                return_dict=True)
    return float(result["perplexity"])


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


class ValidationPerplexity(keras.callbacks.Callback):
    """Adds `val_perplexity` and `val_loss` to the epoch logs.

    The model is copied into a stateful evaluator of `batch_size` rows
    (built once, weights refreshed every epoch) that reads the validation
    stream from a zero state, as the paper's evaluation does. It is
    compiled with XLA when the model is.
    """

    def __init__(self, ids, batch_size=_DEFAULT.eval_batch_size,
                 bptt=_DEFAULT.bptt, verbose=1):
        super().__init__()
        self.batch_size = fitting_batch_size(ids, batch_size)
        # The same windows every epoch: cut once.
        self.windows = data_arguments(
            BPTTSequence(ids, self.batch_size, bptt))
        self.verbose = verbose
        self.evaluator = None

    def on_epoch_end(self, epoch, logs=None):
        if self.evaluator is None:
            self.evaluator = self.model.clone(
                stateful=True, batch_size=self.batch_size
            )
            compile_language_model(self.evaluator, "sgd",
                                   xla=self.model.jit_compile is True)
        else:
            self.evaluator.copy_weights_from(self.model)
        self.evaluator.reset_rnn_states()
        result = self.evaluator.evaluate(**self.windows, verbose=0,
                                         return_dict=True)
        perplexity = float(result["perplexity"])
        if self.verbose:
            print(f"Epoch {epoch + 1}: validation perplexity {perplexity:.2f}")
        if logs is not None:
            logs["val_perplexity"] = perplexity
            logs["val_loss"] = math.log(perplexity)


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


def _finite(logs):
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
        if not _finite(logs):
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
        if not _finite(logs):
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


def _best_logged(rows, key="val_perplexity"):
    """Best (lowest) value of `key` in CSV-log rows, or `None`."""
    values = []
    for row in rows:
        try:
            values.append(float(row[key]))
        except (KeyError, TypeError, ValueError):
            pass
    return min(values) if values else None


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
        if not _finite(logs):
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


def _remove_leftovers(directory):
    """Removes temporary files left by a process killed while writing."""
    if not os.path.isdir(directory):
        return
    for name in os.listdir(directory):
        path = os.path.join(directory, name)
        if name.startswith(".") and ".tmp" in name and os.path.isfile(path):
            os.remove(path)


def train_language_model(
    model,
    train_ids,
    valid_ids,
    output_dir,
    batch_size=_DEFAULT.batch_size,
    bptt=_DEFAULT.bptt,
    epochs=_DEFAULT.epochs,
    optimizer=None,
    variable_length=_DEFAULT.variable_length,
    eval_batch_size=_DEFAULT.eval_batch_size,
    resume=False,
    seed=_DEFAULT.seed,
    verbose=1,
    callbacks=(),
):
    """Trains a stateful `ONLSTMLanguageModel` with `model.fit`.

    Args:
        model: A stateful `ONLSTMLanguageModel`; it is built for
            `batch_size` here if needed.
        train_ids: Training token stream (sentences joined by `<eos>`).
        valid_ids: Validation token stream.
        output_dir: Folder for the checkpoint (`checkpoint/`), the best
            model (`model.keras`, stateless, by validation perplexity) and
            the log (`history.csv`).
        batch_size: Rows of the training stream read in parallel.
        bptt: Truncated-BPTT window length.
        epochs: Total number of epochs (a resumed run counts the epochs it
            already did).
        optimizer: A Keras optimizer; default `make_optimizer()`.
        variable_length: AWD-LSTM's random window lengths, see
            `BPTTSequence`.
        eval_batch_size: Rows of the validation stream.
        resume: Continue from the last epoch checkpoint in `output_dir`
            (the log keeps the rows of the epochs it holds). If `False` and
            a checkpoint exists there, an error is raised rather than
            overwriting it.
        seed: Seed of the dropout masks and of the variable window lengths;
            with the same seed, a resumed run equals an uninterrupted one.
        verbose: Keras progress output (0, 1 or 2).
        callbacks: More Keras callbacks.

    Returns:
        The Keras `History` of this call.

    Raises:
        TrainingDiverged: The loss became inf or NaN; the last good epoch's
            checkpoint, log and best model are kept.
        CorruptCheckpoint: `resume=True` and the checkpoint cannot be read.
        FileExistsError: `resume=False` and `output_dir` holds a checkpoint.
    """
    if not model.stateful:
        raise ValueError(
            "Argument `model` must be stateful for truncated BPTT, received "
            "a model with stateful=False; build it with "
            "ONLSTMLanguageModel(..., stateful=True)"
        )
    batch_size = check.positive_int("batch_size", batch_size)
    epochs = check.positive_int("epochs", epochs)
    os.makedirs(output_dir, exist_ok=True)
    backup_dir = os.path.join(output_dir, BACKUP_DIR)
    history_path = os.path.join(output_dir, HISTORY)
    if not resume:
        refuse_to_overwrite(output_dir, "resume=True (--resume)")
    if not model.built:
        model.build_for(batch_size)
    if not model.compiled:
        compile_language_model(model, optimizer or make_optimizer())

    _remove_leftovers(output_dir)
    start = restore_checkpoint(model, output_dir) if resume else 0
    rows = read_history(history_path, start) if resume else []
    data = BPTTSequence(
        train_ids, batch_size, bptt, variable_length=variable_length, seed=seed
    )
    divergence = StopOnDivergence()
    all_callbacks = [
        EpochStart(data, seed),
        ValidationPerplexity(valid_ids, eval_batch_size, bptt, verbose),
        divergence,
        BestModel(os.path.join(output_dir, MODEL_FILE), _best_logged(rows)),
        HistoryLog(history_path, rows),
        # Last, so that an epoch is only checkpointed once it is logged.
        EpochCheckpoint(backup_dir),
        *callbacks,
    ]
    history = model.fit(
        **data_arguments(data),
        epochs=epochs,
        initial_epoch=start,
        shuffle=False,
        callbacks=all_callbacks,
        verbose=verbose,
    )
    if divergence.epoch is not None:
        saved = checkpoint_epoch(output_dir)
        kept = (
            f"The checkpoint of epoch {saved} is kept: continue from it with "
            "--resume and a lower --lr" if saved else
            "No epoch was saved: train again with a lower --lr"
        )
        raise TrainingDiverged(
            f"Training diverged in epoch {divergence.epoch + 1}: the loss or "
            "perplexity became inf or NaN, so training stopped. "
            f"{kept}.",
            divergence.epoch + 1, saved,
        )
    return history
