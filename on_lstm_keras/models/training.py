"""Truncated-BPTT training of a stateful language model with `model.fit`.

`train_language_model` wires the pieces that make `fit` behave like the
paper's training loop: windows in order with the state carried between
them (`BPTTSequence`, as arrays, `shuffle=False`), states reset at every
epoch, gradient clipping, validation perplexity on a separate stateful copy
with its own batch size, a checkpoint every epoch
(`models.checkpoints`), the best model by validation perplexity and a CSV
log (`models.callbacks`). Since it is plain `fit`, any Keras callback can
be added.

Nothing is lost on a crash: every file is written atomically, and a
resumed run starts from the last whole epoch checkpoint. A run whose loss
turns to inf or NaN stops at once (`TrainingDiverged`) without
checkpointing or logging the bad epoch.
"""

import math
import os

import keras

from on_lstm_keras.utils import validation as check
from on_lstm_keras.config import DEFAULT_LEARNING_RATES
from on_lstm_keras.config import OPTIMIZERS
from on_lstm_keras.config import TrainingConfig
from on_lstm_keras.data.batching import BPTTSequence
from on_lstm_keras.models.callbacks import BestModel
from on_lstm_keras.models.callbacks import EpochStart
from on_lstm_keras.models.callbacks import HistoryLog
from on_lstm_keras.models.callbacks import StopOnDivergence
from on_lstm_keras.models.callbacks import best_logged
from on_lstm_keras.models.callbacks import read_history
from on_lstm_keras.models.checkpoints import BACKUP_DIR
from on_lstm_keras.models.checkpoints import EpochCheckpoint
from on_lstm_keras.models.checkpoints import checkpoint_epoch
from on_lstm_keras.models.checkpoints import refuse_to_overwrite
from on_lstm_keras.models.checkpoints import remove_leftovers
from on_lstm_keras.models.checkpoints import restore_checkpoint
from on_lstm_keras.models.distribute import num_replicas
from on_lstm_keras.models.metrics import Perplexity
from on_lstm_keras.models.saving import MODEL_FILE
from on_lstm_keras.models.schedules import LinearWarmup

__all__ = [
    "ARRAY_TOKENS",
    "HISTORY",
    "TrainingDiverged",
    "ValidationPerplexity",
    "compile_language_model",
    "data_arguments",
    "evaluate_perplexity",
    "fitting_batch_size",
    "make_optimizer",
    "train_language_model",
]

HISTORY = "history.csv"

# Every default is `TrainingConfig`'s (the paper's), written once there.
_DEFAULT = TrainingConfig()


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
    history_path = os.path.join(output_dir, HISTORY)
    if not resume:
        refuse_to_overwrite(output_dir, "resume=True (--resume)")
    if not model.built:
        model.build_for(batch_size)
    if not model.compiled:
        compile_language_model(model, optimizer or make_optimizer())

    remove_leftovers(output_dir)
    start = restore_checkpoint(model, output_dir) if resume else 0
    rows = read_history(history_path, start) if resume else []
    data = BPTTSequence(
        train_ids, batch_size, bptt, variable_length=variable_length, seed=seed
    )
    divergence = StopOnDivergence()
    history = model.fit(
        **data_arguments(data),
        epochs=epochs,
        initial_epoch=start,
        shuffle=False,
        callbacks=[
            EpochStart(data, seed),
            ValidationPerplexity(valid_ids, eval_batch_size, bptt, verbose),
            divergence,
            *_saving_callbacks(output_dir, rows),
            *callbacks,
        ],
        verbose=verbose,
    )
    if divergence.epoch is not None:
        raise _diverged(output_dir, divergence.epoch)
    return history


def _saving_callbacks(output_dir, rows):
    """The best model, the CSV log (after `rows`, the epochs already
    logged) and the epoch checkpoint of a run in `output_dir`; the
    checkpoint last, so that an epoch is only checkpointed once it is
    logged."""
    return [
        BestModel(os.path.join(output_dir, MODEL_FILE), best_logged(rows)),
        HistoryLog(os.path.join(output_dir, HISTORY), rows),
        EpochCheckpoint(os.path.join(output_dir, BACKUP_DIR)),
    ]


def _diverged(output_dir, epoch):
    """The `TrainingDiverged` of a run in `output_dir` that diverged in
    `epoch` (from 0), saying what is kept and what to do."""
    saved = checkpoint_epoch(output_dir)
    kept = (
        f"The checkpoint of epoch {saved} is kept: continue from it with "
        "--resume and a lower --lr" if saved else
        "No epoch was saved: train again with a lower --lr"
    )
    return TrainingDiverged(
        f"Training diverged in epoch {epoch + 1}: the loss or perplexity "
        f"became inf or NaN, so training stopped. {kept}.",
        epoch + 1, saved,
    )
