"""What a training run will do, decided and checked before anything is
written: `plan_training` gives a `TrainingPlan`, which `runs.train`
carries out."""

import dataclasses
import numbers
import os

from on_lstm_keras.config import ModelConfig
from on_lstm_keras.config import TrainingConfig
from on_lstm_keras.models.saving import has_run
from on_lstm_keras.models.saving import read_run_info
from on_lstm_keras.models.checkpoints import refuse_to_overwrite
from on_lstm_keras.runs.layout import TRAIN_DIRECTIONS
from on_lstm_keras.runs.layout import planned_runs
from on_lstm_keras.runs.layout import recorded_configs
from on_lstm_keras.runs.layout import recorded_directions

# What a resumed run may change: how long it trains and its learning rate
# (lower it to continue after a divergence).
RESUME_SETTINGS = ("epochs", "learning_rate")


@dataclasses.dataclass(frozen=True)
class PlannedRun:
    """One model of a `TrainingPlan`.

    Attributes:
        name: `"onlstm"`, `"onlstm backward"` or `"lstm"`.
        directory: Its run directory.
        model_config: Its `ModelConfig` (its `recurrent` and `direction`
            set).
        training_config: Its `TrainingConfig`.
        resume: Whether it continues the run recorded in `directory`.
    """

    name: str
    directory: str
    model_config: ModelConfig
    training_config: TrainingConfig
    resume: bool


@dataclasses.dataclass(frozen=True)
class TrainingPlan:
    """A training run, checked: made by `plan_training`, carried out by
    `runs.train`.

    Attributes:
        output_dir: The main run's directory.
        directions: `"forward"`, `"backward"` or `"both"`.
        with_lstm: Whether the same-size LSTM is trained too.
        resume: Whether the runs recorded in `output_dir` are continued.
        backward_epochs: The backward model's epochs where they differ
            from `epochs` (directions `"both"` only), else `None`.
        runs: The `PlannedRun`s, in training order.
    """

    output_dir: str
    directions: str
    with_lstm: bool
    resume: bool
    backward_epochs: int
    runs: tuple


def check_output_dir(output_dir):
    """Raises `ValueError` if `output_dir` (`--output`) cannot be a run
    directory: empty, a file, under a file, or not writable."""
    if not output_dir:
        raise ValueError("--output is empty: give a model directory, "
                         f"received {output_dir!r}")
    full = os.path.abspath(output_dir)
    if os.path.exists(full) and not os.path.isdir(full):
        raise ValueError(f"--output {output_dir} is a file, not a directory")
    parent = full
    while not os.path.exists(parent):
        parent = os.path.dirname(parent)
    if not os.path.isdir(parent):
        raise ValueError(
            f"--output {output_dir}: {parent} is a file, so no directory can "
            "be made under it")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ValueError(
            f"--output {output_dir}: the directory is not writable"
            if parent == full else
            f"--output {output_dir}: cannot create it, {parent} is not "
            "writable")


def check_directions(directions):
    """`directions` checked: `"forward"`, `"backward"` or `"both"`."""
    if directions not in TRAIN_DIRECTIONS:
        raise ValueError(
            "Argument `directions` (--directions) must be one of "
            + ", ".join(map(repr, TRAIN_DIRECTIONS))
            + f", received: directions={directions!r}")
    return directions


def check_backward_epochs(backward_epochs, directions):
    """`backward_epochs` checked: `None` or a positive integer, given with
    `directions="both"` only."""
    if backward_epochs is None:
        return None
    if (isinstance(backward_epochs, bool)
            or not isinstance(backward_epochs, numbers.Integral)
            or backward_epochs < 1):
        raise ValueError(
            "Argument `backward_epochs` (--backward-epochs) must be a "
            f"positive integer, received: backward_epochs={backward_epochs!r}")
    if directions != "both":
        raise ValueError(
            "Argument `backward_epochs` (--backward-epochs) sets the backward "
            "model's epochs of directions 'both', received: backward_epochs="
            f"{backward_epochs!r} with directions={directions!r}")
    return int(backward_epochs)


def check_resume_directions(output_dir, directions):
    """Raises a `ValueError` naming `--directions` unless the run in
    `output_dir` has a model that reads the way `directions` needs."""
    has = read_run_info(output_dir)["model"].get("direction", "forward")
    wants = "backward" if directions == "backward" else "forward"
    if has != wants:
        raise ValueError(
            f"--directions {directions} needs a {wants} model in "
            f"{output_dir}, but the run there reads {has}; received: "
            f"directions={directions!r}")


def check_resumed_configs(directory, model_config, training_config):
    """Raises a `ValueError` for a field, but `RESUME_SETTINGS`, `recurrent`
    and `direction` (set by the plan) and `lstm_warmup_steps`, in which the configs differ from
    those the run in `directory` recorded."""
    recorded = recorded_configs(directory)
    for given, was in zip((model_config, training_config), recorded):
        for key in given.field_names():
            value, old = getattr(given, key), getattr(was, key)
            # lstm_warmup_steps is the LSTM's; its warmup_steps is checked.
            if key in (*RESUME_SETTINGS, "recurrent", "direction",
                       "lstm_warmup_steps"):
                continue
            if value != old:
                raise ValueError(
                    f"Argument `{key}` cannot change when a run is resumed "
                    f"(the run in {directory} has {key}={old!r}), received: "
                    f"{key}={value!r}")


def _planned(place, model_config, training_config, resume, backward_epochs):
    """The `PlannedRun` of one `RunPlace`."""
    model = dataclasses.replace(model_config, recurrent=place.recurrent,
                                direction=place.direction)
    training = training_config
    if place.recurrent == "lstm":
        training = dataclasses.replace(
            training, warmup_steps=training.lstm_warmup_steps)
    if place.name == "onlstm backward" and backward_epochs is not None:
        training = dataclasses.replace(training, epochs=backward_epochs)
    again = resume and has_run(place.directory)
    if again:
        check_resumed_configs(place.directory, model, training)
        recorded_model, recorded_training = recorded_configs(place.directory)
        model, training = recorded_model, dataclasses.replace(
            recorded_training, epochs=training.epochs,
            learning_rate=training.learning_rate)
    else:
        refuse_to_overwrite(place.directory)
    return PlannedRun(place.name, place.directory, model, training, again)


def plan_training(output_dir, model_config=None, training_config=None, *,
                  directions=None, with_lstm=False, resume=False,
                  backward_epochs=None):
    """Checks a training run and says what it will do; writes nothing.

    Args:
        output_dir: The run directory (see `runs.train`).
        model_config: A `ModelConfig`; default: the paper's model, or on
            resume the recorded one. Its `recurrent` and `direction` are set
            for each model by the plan.
        training_config: A `TrainingConfig`; default: the paper's training,
            or on resume the recorded one.
        directions: `"forward"`, `"backward"` or `"both"` (a forward main
            run in `output_dir` and a backward one in
            `output_dir/backward`). Default: `model_config.direction`, or on
            resume the run's recorded directions (a resumed forward run may
            be given `"both"` to add its backward model).
        with_lstm: Also train the same-size LSTM, in `output_dir/lstm`,
            with the training config's `lstm_warmup_steps` as its
            `warmup_steps`.
        resume: Continue the runs in `output_dir` from their last
            checkpoints, with their recorded configs; the configs given may
            differ from those only in `epochs` and `learning_rate`. A model
            not started yet starts with the configs given.
        backward_epochs: With `directions="both"`, the backward model's
            epochs where they differ from `epochs`. Default: `epochs`, or
            on resume the recorded ones.

    Returns:
        A `TrainingPlan`.

    Raises:
        ValueError: An argument is bad, or a resumed run's config differs
            from the recorded one in another field (the message names the
            argument and the value).
        FileExistsError: A new run would overwrite a checkpoint.
        FileNotFoundError: `resume=True`, and `output_dir` holds no run.
    """
    check_output_dir(output_dir)
    if resume:
        recorded = recorded_configs(output_dir)  # FileNotFoundError if none
        model_config = model_config or recorded[0]
        training_config = training_config or recorded[1]
        directions = check_directions(
            directions or recorded_directions(output_dir))
        check_resume_directions(output_dir, directions)
        if backward_epochs is None and directions == "both":
            backward_epochs = read_run_info(output_dir).get("backward_epochs")
    else:
        model_config = model_config or ModelConfig()
        training_config = training_config or TrainingConfig()
        directions = check_directions(directions or model_config.direction)
    backward_epochs = check_backward_epochs(backward_epochs, directions)
    places = planned_runs(output_dir, directions, with_lstm)
    return TrainingPlan(
        output_dir=output_dir, directions=directions,
        with_lstm=bool(with_lstm), resume=bool(resume),
        backward_epochs=backward_epochs,
        runs=tuple(_planned(place, model_config, training_config, resume,
                            backward_epochs) for place in places))
