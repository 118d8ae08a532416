"""Controls of a run's trees (Dyer, Melis and Blunsom 2019): the same
architecture at initialisation, read through the same parser."""

import os

import keras

from on_lstm_keras.config import ModelConfig
from on_lstm_keras.config import TrainingConfig
from on_lstm_keras.data.vocabulary import Vocabulary
from on_lstm_keras.models.language_model import ONLSTMLanguageModel
from on_lstm_keras.models.saving import MODEL_FILE
from on_lstm_keras.models.saving import RUN_FILE
from on_lstm_keras.models.saving import VOCAB_FILE
from on_lstm_keras.models.saving import has_run
from on_lstm_keras.models.saving import read_run_info
from on_lstm_keras.models.saving import save_atomically
from on_lstm_keras.models.saving import write_json
from on_lstm_keras.runs.defaults import DEFAULT_READING
from on_lstm_keras.runs.layout import BACKWARD_DIR
from on_lstm_keras.runs.layout import LSTM_DIR
from on_lstm_keras.utils import validation as check

UNTRAINED = "untrained"
"""The `run.json` field of an untrained copy: the run it copies (`from`)
and the `seed` of its weights."""

# What a run learned, left out of its untrained copy's `run.json`.
LEARNED_FIELDS = ("results", DEFAULT_READING)


def untrained_model(run_dir, seed=None):
    """The model of the run in `run_dir` as it is before training: its
    architecture (`run.json` `model`) and vocabulary size, weights freshly
    drawn.

    Args:
        run_dir: A run directory (`run.json` and `vocab.json` are read; the
            trained weights are not).
        seed: The seed of the weights (`keras.utils.set_random_seed`, then
            `ONLSTMLanguageModel.from_model_config(..., seed=seed)`, as
            `train_run` draws a model); default the run's training seed.

    Returns:
        `(model, seed)`: a built, stateless `ONLSTMLanguageModel`.

    Like training, it seeds every global generator
    (`keras.utils.set_random_seed`: Python's, NumPy's and the backend's).
    """
    info = read_run_info(run_dir)
    if not info.get("model"):
        raise FileNotFoundError(f"{run_dir} holds no run (no {RUN_FILE})")
    if seed is None:
        seed = TrainingConfig.from_dict(info.get("training") or {}).seed
    seed = check.non_negative_int("seed", seed)
    vocab = Vocabulary.load(os.path.join(run_dir, VOCAB_FILE))
    keras.utils.set_random_seed(seed)
    model = ONLSTMLanguageModel.from_model_config(
        ModelConfig.from_dict(info["model"]), len(vocab), seed=seed)
    model.build_for(1)
    return model, seed


def untrained_copy(run_dir, output_dir, seed=None):
    """Writes a run directory that holds the run's architecture untrained:
    the control that shows how much of a run's F1 the parser and the
    architecture give before any training.

    The copy has the run's `vocab.json`, and its `run.json` less what the
    training learned (`results`, `default_reading`), with an `untrained`
    field naming the run and the seed; its `model.keras` holds the weights
    of `untrained_model`. A backward run (`RUN/backward`) and an LSTM run
    (`RUN/lstm`) inside `run_dir` are copied the same way into
    `output_dir`, so the copy reads in every direction the run does. It
    is a run like any other for `parse`, `evaluate_treebank`,
    `evaluate_readings`, `choose_reading` and the `on-lstm` commands
    (`on-lstm evaluate --untrained` makes one in a temporary folder).

    Args:
        run_dir: The trained run's directory.
        output_dir: Where the copy goes: a new directory, or one without a
            run.
        seed: The seed of the weights; default each run's training seed
            (see `untrained_model`).

    Returns:
        The copy's `run.json` as a dict.

    Raises:
        FileNotFoundError: `run_dir` holds no run.
        ValueError: `output_dir` is `run_dir`, or holds a run already.
    """
    if os.path.abspath(output_dir) == os.path.abspath(run_dir):
        raise ValueError(
            "Argument `output_dir` must be another directory than the run's, "
            f"received: output_dir={output_dir!r}")
    if has_run(output_dir):
        raise ValueError(
            "Argument `output_dir` holds a run already; give a new "
            f"directory, received: output_dir={output_dir!r}")
    model, drawn_with = untrained_model(run_dir, seed)
    info = read_run_info(run_dir)
    os.makedirs(output_dir, exist_ok=True)
    Vocabulary.load(os.path.join(run_dir, VOCAB_FILE)).save(
        os.path.join(output_dir, VOCAB_FILE))
    save_atomically(model, os.path.join(output_dir, MODEL_FILE))
    copied = {k: v for k, v in info.items() if k not in LEARNED_FIELDS}
    copied[UNTRAINED] = {"from": os.path.abspath(run_dir), "seed": drawn_with}
    write_json(os.path.join(output_dir, RUN_FILE), copied)
    for inner in (BACKWARD_DIR, LSTM_DIR):
        if has_run(os.path.join(run_dir, inner)):
            untrained_copy(os.path.join(run_dir, inner),
                           os.path.join(output_dir, inner), seed)
    return copied
