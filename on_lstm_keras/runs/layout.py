"""A run directory on disk: where each model of a run lives, and what the
run recorded (its configs, its directions, its corpus).

A run directory holds one trained model (`model.keras`, `vocab.json`,
`run.json`, `history.csv`, `checkpoint/`); the backward model of a run
trained in both directions lives in its `BACKWARD_DIR`, the same-size LSTM
in its `LSTM_DIR`, each a run directory of its own.
"""

import collections
import os

from on_lstm_keras.config import ModelConfig
from on_lstm_keras.config import TrainingConfig
from on_lstm_keras.data.corpus import load_corpus
from on_lstm_keras.models.saving import read_run_info

BACKWARD_DIR = "backward"
"""The sub-directory of a run holding the run of its backward model."""

LSTM_DIR = "lstm"
"""The sub-directory of a run holding the LSTM trained beside the ON-LSTM."""

# What `directions` may be: the set of models a training run trains.
TRAIN_DIRECTIONS = ("forward", "backward", "both")

RunPlace = collections.namedtuple(
    "RunPlace", "name directory recurrent direction")
RunPlace.__doc__ = """One model of a run: its name (`"onlstm"`, `"onlstm
backward"`, `"lstm"`), its directory, its recurrent layers and the
direction it reads in."""


def planned_runs(output_dir, directions="forward", with_lstm=False):
    """The models a training run trains, in order.

    Args:
        output_dir: The main run's directory.
        directions: `"forward"`, `"backward"` (the main run reads reversed
            sentences) or `"both"` (a forward main run, and a backward one
            in `output_dir/BACKWARD_DIR`).
        with_lstm: Also the same-size LSTM, in `output_dir/LSTM_DIR`, read
            in the main run's direction.

    Returns:
        A list of `RunPlace(name, directory, recurrent, direction)`.
    """
    main = "backward" if directions == "backward" else "forward"
    places = [RunPlace("onlstm", output_dir, "onlstm", main)]
    if directions == "both":
        places.append(RunPlace(
            "onlstm backward", os.path.join(output_dir, BACKWARD_DIR),
            "onlstm", "backward"))
    if with_lstm:
        places.append(RunPlace(
            "lstm", os.path.join(output_dir, LSTM_DIR), "lstm", main))
    return places


def recorded_configs(output_dir):
    """The `(ModelConfig, TrainingConfig)` the run in `output_dir` recorded
    in its `run.json`.

    Raises:
        FileNotFoundError: `output_dir` holds no run (no `run.json`).
        ValueError: A recorded setting is unknown or bad.
    """
    info = read_run_info(output_dir)
    if not info.get("model"):
        raise FileNotFoundError(
            f"--resume: {output_dir} holds no run to resume (no run.json)")
    return (ModelConfig.from_dict(info["model"]),
            TrainingConfig.from_dict(info.get("training") or {}))


def recorded_directions(output_dir):
    """The directions the run in `output_dir` trains (`run.json`
    `train_directions`; a run that records none: its model's direction),
    or `None` when it holds no run."""
    info = read_run_info(output_dir)
    if not info.get("model"):
        return None
    return info.get("train_directions") or info["model"].get(
        "direction", "forward")


# The settings of `load_corpus` that a run records, and the flags that
# give them.
CORPUS_SETTINGS = {"corpus": "--corpus", "max_sentences": "--max-sentences",
                   "user_dict": "--user-dict", "lowercase": "--lowercase",
                   "script": "--script"}


def load_corpus_of_run(output_dir, progress=True, **given):
    """The corpus the run in `output_dir` was trained on, read again from
    the settings its `run.json` recorded (for a resumed run).

    Args:
        output_dir: The run's directory.
        progress: Show a progress bar while segmenting.
        **given: Settings of `load_corpus` given for the resumed run
            (`corpus`, `max_sentences`, `user_dict`, `lowercase`, `script`);
            `None` or `False` for one not given. Each given must be the
            run's: a resumed run reads its own corpus, so a setting that
            differs would otherwise be ignored. Paths compare as absolute
            paths.

    Raises:
        FileNotFoundError: `output_dir` holds no run.
        ValueError: A given setting differs from the run's (the message
            names its flag and both values).
    """
    info = read_run_info(output_dir)
    settings = info.get("corpus_settings")
    if settings is None:
        raise FileNotFoundError(
            f"--resume: {output_dir} holds no run to resume (no run.json "
            "with the corpus settings)"
        )
    unknown = sorted(set(given) - set(CORPUS_SETTINGS))
    if unknown:
        raise TypeError(f"load_corpus_of_run() got unexpected keyword "
                        f"arguments {unknown}")
    for key, value in given.items():
        if value is None or value is False:
            continue
        run = settings.get(key)
        if key in ("corpus", "user_dict") and run is not None:
            same = os.path.abspath(value) == os.path.abspath(run)
        else:
            same = value == run
        if not same:
            flag = CORPUS_SETTINGS[key]
            raise ValueError(
                f"--resume reads the run's own corpus: received {flag} "
                f"{value}, where the run in {output_dir} has {run!r}; leave "
                f"{flag} out")
    return load_corpus(**settings, progress=progress)
