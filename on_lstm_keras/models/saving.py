"""A trained model as one directory: `model.keras`, `vocab.json`, `run.json`.

`run.json` records how text becomes tokens (the tokenizer), what the model
was trained on and its results, so a later run (`parse`, `evaluate`) needs
nothing but the directory.
"""

import collections
import json
import os
import zipfile

import keras

from on_lstm_keras.utils.atomic import replacing
from on_lstm_keras.utils.atomic import write_text
from on_lstm_keras.data.tokenizers import get_tokenizer
from on_lstm_keras.data.vocabulary import Vocabulary
# Registers the model (and, through it, its layers) with Keras, for
# `keras.saving.load_model`.
from on_lstm_keras.models.language_model import ONLSTMLanguageModel  # noqa: F401

__all__ = [
    "LoadedRun",
    "MODEL_FILE",
    "RUN_FILE",
    "VOCAB_FILE",
    "has_run",
    "load_run",
    "read_run_info",
    "save_atomically",
    "update_run_info",
    "write_json",
]

MODEL_FILE = "model.keras"
VOCAB_FILE = "vocab.json"
RUN_FILE = "run.json"

LoadedRun = collections.namedtuple("LoadedRun", "model vocab tokenizer info")


def save_atomically(model, path):
    """`model.save(path)` atomically (see `replacing`), so `path` is never
    left half-written."""
    with replacing(path, suffix=".keras") as tmp:
        model.save(tmp)


def write_json(path, data):
    """Writes JSON atomically (see `replacing`)."""
    write_text(path, json.dumps(data, ensure_ascii=False, indent=2))


def has_run(directory):
    """Whether `directory` holds a run's `RUN_FILE` (`run.json`)."""
    return os.path.isfile(os.path.join(directory, RUN_FILE))


def read_run_info(directory):
    """The `run.json` of a model directory (`{}` if there is none)."""
    path = os.path.join(directory, RUN_FILE)
    if not os.path.exists(path):
        return {}
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except ValueError as e:
        raise ValueError(f"Corrupt run file {path}: {e}") from None


def update_run_info(directory, **fields):
    """Merges `fields` into `run.json`."""
    info = read_run_info(directory)
    info.update(fields)
    write_json(os.path.join(directory, RUN_FILE), info)
    return info


def load_run(directory):
    """Loads a model directory written by training.

    Returns:
        `LoadedRun(model, vocab, tokenizer, info)`; `tokenizer` is `None`
        when the run recorded none.

    Raises:
        FileNotFoundError: The directory or one of its files is missing.
        ValueError: A file is corrupt (the message names it).
    """
    if not os.path.isdir(directory):
        raise FileNotFoundError(f"No model directory at {directory}")
    model_path = os.path.join(directory, MODEL_FILE)
    if not os.path.exists(model_path):
        raise FileNotFoundError(
            f"{directory} holds no {MODEL_FILE}: not a trained model "
            "directory, or training ended before its first epoch"
        )
    vocab = Vocabulary.load(os.path.join(directory, VOCAB_FILE))
    info = read_run_info(directory)
    if not zipfile.is_zipfile(model_path):
        raise ValueError(
            f"Corrupt model file {model_path}: not a complete .keras archive "
            "(cut short or overwritten); train the model again, or put back "
            "a good copy of the file"
        )
    try:
        model = keras.saving.load_model(model_path)
    except Exception as e:  # Keras raises many types for a bad archive.
        raise ValueError(
            f"Corrupt model file {model_path}: Keras cannot load it "
            f"({type(e).__name__}: {e}); train the model again, or put back "
            "a good copy of the file"
        ) from None
    if model.vocab_size != len(vocab):
        raise ValueError(
            f"{directory}: the model has {model.vocab_size} words but "
            f"{VOCAB_FILE} has {len(vocab)}"
        )
    tokenizer = None
    if info.get("tokenizer"):
        tokenizer = get_tokenizer(info["tokenizer"])
    return LoadedRun(model, vocab, tokenizer, info)
