"""A trained model as one directory: `model.keras`, `vocab.json`, `run.json`.

`run.json` records how text becomes tokens (the tokenizer), what the model
was trained on and its results, so a later run (`parse`, `evaluate`) needs
nothing but the directory.
"""

import collections
import json
import os

import keras

from on_lstm_keras.data.tokenizers import get_tokenizer
from on_lstm_keras.data.vocabulary import Vocabulary

MODEL_FILE = "model.keras"
VOCAB_FILE = "vocab.json"
RUN_FILE = "run.json"

LoadedRun = collections.namedtuple("LoadedRun", "model vocab tokenizer info")


def save_atomically(model, path):
    """`model.save(path)` through a temporary file, so `path` is never
    left half-written."""
    tmp = path + ".tmp.keras"
    model.save(tmp)
    os.replace(tmp, path)


def write_json(path, data):
    """Writes JSON atomically (temporary file, then rename)."""
    tmp = f"{path}.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(data, f, ensure_ascii=False, indent=2)
    os.replace(tmp, path)


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
    # Importing the package registers its layers and models.
    import on_lstm_keras.models  # noqa: F401

    try:
        model = keras.saving.load_model(model_path)
    except Exception as e:  # Keras raises many types for a bad archive.
        raise ValueError(
            f"Corrupt model file {model_path}: {type(e).__name__}: {e}"
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
