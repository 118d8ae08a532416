"""Truncated-BPTT training of a stateful language model with `model.fit`.

`train_language_model` wires the pieces that make `fit` behave like the
paper's training loop: windows in order with the state carried between
them (`BPTTSequence`, `shuffle=False`), states reset at every epoch,
gradient clipping, validation perplexity on a separate stateful copy with
its own batch size, a checkpoint every epoch (Keras' `BackupAndRestore`,
double-buffered so an interrupted write leaves the previous one), the best
model by validation perplexity (`ModelCheckpoint`) and a CSV log. Since it
is plain `fit`, any Keras callback can be added.
"""

import csv
import math
import os

import keras

from on_lstm_keras import _validation as check
from on_lstm_keras.data.batching import BPTTSequence
from on_lstm_keras.models.distribute import num_replicas
from on_lstm_keras.models.metrics import Perplexity
from on_lstm_keras.models.saving import MODEL_FILE
from on_lstm_keras.models.saving import save_atomically

BACKUP_DIR = "checkpoint"
HISTORY = "history.csv"


def make_optimizer(name="sgd", learning_rate=None, clipnorm=0.25,
                   weight_decay=1.2e-6):
    """SGD (the paper: lr 30, clip 0.25, L2 1.2e-6) or Adam (lr 0.002).

    With plain SGD, Keras' decoupled `weight_decay` equals the paper's L2
    penalty.
    """
    name = check.choice("optimizer", name, ("sgd", "adam"))
    if learning_rate is None:
        learning_rate = 30.0 if name == "sgd" else 2e-3
    if name == "sgd":
        return keras.optimizers.SGD(
            learning_rate, clipnorm=clipnorm, weight_decay=weight_decay or None
        )
    return keras.optimizers.Adam(
        learning_rate, clipnorm=clipnorm, weight_decay=weight_decay or None
    )


def compile_language_model(model, optimizer):
    """Compiles with token cross-entropy (from logits) and perplexity."""
    model.compile(
        optimizer=optimizer,
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=[Perplexity()],
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


def evaluate_perplexity(model, ids, batch_size=10, bptt=70, verbose=0):
    """Perplexity of `model` on the token stream `ids`.

    The stream is cut into `batch_size` rows (fewer for a very short
    stream) read left to right with the state carried (a stateful copy of
    `model` with that batch size); every token but each row's first is
    predicted once.
    """
    batch_size = fitting_batch_size(ids, batch_size)
    evaluator = model.clone(stateful=True, batch_size=batch_size)
    compile_language_model(evaluator, "sgd")
    evaluator.reset_rnn_states()
    data = BPTTSequence(ids, batch_size, bptt)
    result = evaluator.evaluate(data, verbose=verbose, return_dict=True)
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
    stream from a zero state, as the paper's evaluation does.
    """

    def __init__(self, ids, batch_size=10, bptt=70, verbose=1):
        super().__init__()
        self.batch_size = fitting_batch_size(ids, batch_size)
        self.data = BPTTSequence(ids, self.batch_size, bptt)
        self.verbose = verbose
        self.evaluator = None

    def on_epoch_end(self, epoch, logs=None):
        if self.evaluator is None:
            self.evaluator = self.model.clone(
                stateful=True, batch_size=self.batch_size
            )
            compile_language_model(self.evaluator, "sgd")
        else:
            self.evaluator.copy_weights_from(self.model)
        self.evaluator.reset_rnn_states()
        result = self.evaluator.evaluate(self.data, verbose=0, return_dict=True)
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


def _best_logged(history_path, key="val_perplexity"):
    """Best (lowest) value of `key` in a CSV log, or `None`."""
    if not os.path.exists(history_path):
        return None
    with open(history_path, newline="") as f:
        values = [float(row[key]) for row in csv.DictReader(f) if row.get(key)]
    return min(values) if values else None


def train_language_model(
    model,
    train_ids,
    valid_ids,
    output_dir,
    batch_size,
    bptt=70,
    epochs=1,
    optimizer=None,
    variable_length=False,
    eval_batch_size=10,
    resume=False,
    seed=0,
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
        resume: Continue from the last epoch checkpoint in `output_dir`. If
            `False` and a checkpoint exists there, an error is raised rather
            than overwriting it.
        seed: Seed of the dropout masks and of the variable window lengths;
            with the same seed, a resumed run equals an uninterrupted one.
        verbose: Keras progress output (0, 1 or 2).
        callbacks: More Keras callbacks.

    Returns:
        The Keras `History` of this call.
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
    if not resume and os.path.exists(os.path.join(backup_dir, "training_metadata.json")):
        raise FileExistsError(
            f"{output_dir} holds a training checkpoint; pass resume=True "
            "(--resume) to continue it, or choose another output directory"
        )
    if not model.built:
        model.build_for(batch_size)
    if not model.compiled:
        compile_language_model(model, optimizer or make_optimizer())

    data = BPTTSequence(
        train_ids, batch_size, bptt, variable_length=variable_length, seed=seed
    )
    best = _best_logged(history_path) if resume else None
    all_callbacks = [
        EpochStart(data, seed),
        ValidationPerplexity(valid_ids, eval_batch_size, bptt, verbose),
        keras.callbacks.TerminateOnNaN(),
        BestModel(os.path.join(output_dir, MODEL_FILE), best),
        keras.callbacks.CSVLogger(history_path, append=bool(resume)),
        # Last, so that an epoch is only checkpointed once it is logged.
        keras.callbacks.BackupAndRestore(
            backup_dir, double_checkpoint=True, delete_checkpoint=False
        ),
        *callbacks,
    ]
    return model.fit(
        data,
        epochs=epochs,
        shuffle=False,
        callbacks=all_callbacks,
        verbose=verbose,
    )

