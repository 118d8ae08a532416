"""The whole job in a few calls: corpus → tokens → trained model → trees.

The command line (`on-lstm train | parse | evaluate`) and the example
scripts are thin wrappers around these functions. This module only
coordinates: the corpus comes from `data.corpus`, the settings are the two
configs of `config`, the model and its training live in `models`, parsing
in `parsing`.

A script that builds and trains the model itself (as
`examples/lm_chinese.py` does) records its run with the steps `train` uses,
so that its directory is the one `train` writes: `record_run` (vocabulary
and `run.json`), `resume_configs` and `prepare_resume` (continuing a run),
`finished_run`, `score_run` (the best model's results), and `output_lock`
(one training process per directory).
"""

import contextlib
import dataclasses
import numbers
import os
import time
import warnings

import numpy as np

from on_lstm_keras.utils.lock import DirectoryLocked  # noqa: F401 (public here)
from on_lstm_keras.utils.lock import output_lock
from on_lstm_keras.config import ModelConfig
from on_lstm_keras.config import TrainingConfig
from on_lstm_keras.config import check_setting_names
from on_lstm_keras.config import configs_of_run
from on_lstm_keras.config import flat_settings
from on_lstm_keras.config import split_settings
from on_lstm_keras.data.corpus import LANGUAGES  # noqa: F401 (re-export)
from on_lstm_keras.data.corpus import Corpus  # noqa: F401
from on_lstm_keras.data.corpus import load_corpus  # noqa: F401
from on_lstm_keras.data.corpus import in_reading_order
from on_lstm_keras.data.corpus import load_corpus_of_run  # noqa: F401
from on_lstm_keras.data.vocabulary import Vocabulary
from on_lstm_keras.models.saving import VOCAB_FILE
from on_lstm_keras.models.saving import has_run
from on_lstm_keras.models.saving import load_run
from on_lstm_keras.models.saving import read_run_info
from on_lstm_keras.models.saving import update_run_info
from on_lstm_keras.parsing.parse import Parse  # noqa: F401 (re-export)
from on_lstm_keras.runs.evaluation import evaluate_treebank  # noqa: F401
from on_lstm_keras.runs.parse import parse  # noqa: F401

# What a resumed run may change: how long it trains and its learning rate
# (lower it to continue after a divergence).
RESUME_SETTINGS = ("epochs", "learning_rate")


def __getattr__(name):
    # The flat defaults of older versions, now the configs' fields.
    if name in ("MODEL_DEFAULTS", "TRAINING_DEFAULTS"):
        warnings.warn(
            f"workflow.{name} is deprecated; use on_lstm_keras.config."
            f"{'ModelConfig' if name == 'MODEL_DEFAULTS' else 'TrainingConfig'}()",
            DeprecationWarning, stacklevel=2,
        )
        if name == "MODEL_DEFAULTS":
            defaults = ModelConfig().to_dict()
            del defaults["recurrent"]
            return defaults
        return TrainingConfig().to_dict()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def check_settings(settings):
    """Checks flat settings; raises a `ValueError` naming the first bad one.

    `train` calls it before it writes anything.

    Args:
        settings: A dict of fields of `ModelConfig` and `TrainingConfig`
            (`cell` is the old name of `recurrent`).

    Returns:
        `(ModelConfig, TrainingConfig)`: the defaults with `settings`.
    """
    return split_settings(settings)


def check_resume_settings(recorded, settings, output_dir):
    """Raises a `ValueError` for a setting that a resumed run may not change
    (all but `RESUME_SETTINGS`) given with a value other than the run's.

    Args:
        recorded: The run's `run.json`.
        settings: The settings given for the resumed run (flat).
        output_dir: The run's directory (for the message).
    """
    was = flat_settings(*configs_of_run(recorded))
    for key, value in settings.items():
        if key not in was:
            continue  # not a setting of the run (e.g. data_parallel)
        if key not in RESUME_SETTINGS and value != was[key]:
            raise ValueError(
                f"Argument `{key}` cannot change when a run is resumed (the "
                f"run in {output_dir} has {key}={was[key]!r}), received: "
                f"{key}={value!r}"
            )


def resume_configs(output_dir, settings=None):
    """The configs that continue the run in `output_dir`: those recorded in
    its `run.json`, with `epochs` and `learning_rate` from `settings` (the
    only ones a resumed run may change, `RESUME_SETTINGS`).

    Args:
        output_dir: The run's directory.
        settings: The flat settings given for the resumed run (fields of
            either config); each, but `RESUME_SETTINGS`, must equal the
            run's.

    Returns:
        `(ModelConfig, TrainingConfig)`.

    Raises:
        FileNotFoundError: `output_dir` holds no run (no `run.json`).
        ValueError: A setting other than `RESUME_SETTINGS` differs from the
            run's (the message names it and both values).
    """
    recorded = read_run_info(output_dir)
    if not recorded.get("model"):
        raise FileNotFoundError(
            f"--resume: {output_dir} holds no run to resume (no run.json)"
        )
    settings = check_setting_names(settings or {})
    check_resume_settings(recorded, settings, output_dir)
    model_config, training_config = configs_of_run(recorded)
    return model_config, dataclasses.replace(training_config, **{
        k: settings[k] for k in RESUME_SETTINGS if k in settings})


def prepare_resume(output_dir, training_config):
    """Readies the run in `output_dir` to continue with `training_config`
    (from `resume_configs`): records it in `run.json` if it differs from the
    recorded one, and returns the callbacks `train_language_model` needs.

    Args:
        output_dir: The run's directory.
        training_config: The `TrainingConfig` the run continues with.

    Returns:
        A list of Keras callbacks: a `LearningRateScheduler` to the new
        learning rate if it changed (the checkpoint restores the old rate
        with the optimizer's state), else none. A run with a warm-up
        (`warmup_steps` > 0) needs none: its rate is a schedule of the
        optimizer's step count, made anew from `training_config`, and the
        checkpoint restores only the step count, so the schedule continues
        where it stopped, to the new rate.
    """
    import keras

    _, recorded = configs_of_run(read_run_info(output_dir))
    callbacks = []
    if (training_config.learning_rate != recorded.learning_rate
            and not training_config.warmup_steps):
        new_lr = float(training_config.optimizer_learning_rate)
        callbacks.append(keras.callbacks.LearningRateScheduler(
            lambda epoch, lr: new_lr))
    if training_config != recorded:
        update_run_info(output_dir, training=training_config.to_dict())
    return callbacks


def finished_run(output_dir, epochs):
    """The `run.json` of the run in `output_dir` if it has nothing left to
    do: its checkpoint holds `epochs` epochs or more and its best model was
    scored; else `None`.

    Args:
        output_dir: The run's directory.
        epochs: The number of epochs asked for.

    Raises:
        CorruptCheckpoint: The checkpoint cannot be read.
    """
    from on_lstm_keras.models.checkpoints import checkpoint_epoch

    info = read_run_info(output_dir)
    if info.get("results") and checkpoint_epoch(output_dir) >= epochs:
        return info
    return None


def record_run(output_dir, corpus, vocab, model_config, training_config,
               **info):
    """Starts the record of a new run in `output_dir`: its vocabulary
    (`vocab.json`) and `run.json` with both configs and how the corpus was
    read (tokenizer, source, settings, summary, script), which is all
    `load_run`, `load_corpus_of_run` and a resumed run need.

    Args:
        output_dir: The run directory (created if missing).
        corpus: The `Corpus` the run trains on.
        vocab: The run's `Vocabulary`.
        model_config: The run's `ModelConfig`.
        training_config: The run's `TrainingConfig`.
        **info: More fields for `run.json` (e.g. `language="zh"`); they
            replace fields of the same name.

    Returns:
        `run.json` as a dict.

    Raises:
        FileExistsError: `output_dir` holds a training checkpoint, which a
            new run would overwrite (nothing is written).
    """
    from on_lstm_keras.models.checkpoints import refuse_to_overwrite

    refuse_to_overwrite(output_dir)
    os.makedirs(output_dir, exist_ok=True)
    vocab.save(os.path.join(output_dir, VOCAB_FILE))
    return update_run_info(output_dir, **{
        "model": model_config.to_dict(),
        "training": training_config.to_dict(),
        "tokenizer": corpus.tokenizer, "corpus": corpus.source,
        "corpus_settings": corpus.settings,
        "corpus_summary": corpus.summary(), "vocabulary": len(vocab),
        "script": getattr(corpus, "script", None), **info,
    })


def score_run(output_dir, valid_ids, test_ids, train_seconds):
    """Scores the best model of the run in `output_dir` (`model.keras`)
    and records the results in its `run.json`.

    Args:
        output_dir: The run directory, trained by `train_language_model`.
        valid_ids: The validation token stream.
        test_ids: The test token stream.
        train_seconds: How long this call's training took (seconds).

    Returns:
        `run.json` as a dict, with `results`: `valid_perplexity`,
        `test_perplexity` (with the run's `eval_batch_size` and `bptt`),
        `train_seconds_this_call`, `parameters` (trainable) and
        `unknown_rate_test` (the share of `<unk>` in `test_ids`).
    """
    from on_lstm_keras.models.training import evaluate_perplexity

    best, vocab, _, info = load_run(output_dir)
    _, training = configs_of_run(info)
    batch, bptt = training.eval_batch_size, training.bptt

    def perplexity(ids):
        return evaluate_perplexity(best, ids, batch, bptt, xla=training.xla)

    results = {
        "valid_perplexity": perplexity(valid_ids),
        "test_perplexity": perplexity(test_ids),
        "train_seconds_this_call": round(train_seconds, 1),
        "parameters": int(sum(np.prod(w.shape) for w in best.trainable_weights)),
        "unknown_rate_test": float(np.mean(np.asarray(test_ids) == vocab.unk_id)),
    }
    return update_run_info(output_dir, results=results)


def _given(model_config, training_config, settings):
    """What a caller gave, as flat settings (configs: all their fields)."""
    given = {}
    for part in (model_config, training_config):
        if part is not None:
            given.update(part.to_dict())
    given.update(settings)
    return check_setting_names(given)


def _deprecated_keyword(old, new):
    warnings.warn(
        f"The keyword `{old}` is deprecated; use `{new}`",
        DeprecationWarning, stacklevel=3,
    )


def train(corpus, output_dir, cell=None, resume=False, verbose=1,
          callbacks=(), info=None, data_parallel=False, *, model_config=None,
          training_config=None, **settings):
    """Trains a language model on `corpus` into `output_dir` and tests it.

    Args:
        corpus: A `Corpus` (from `load_corpus`).
        output_dir: The run directory: `model.keras` (best by validation
            perplexity), `vocab.json`, `run.json` (both configs, tokenizer,
            corpus, results), `history.csv`, `checkpoint/`.
        cell: Deprecated: `model_config.recurrent` (or `recurrent=`).
        resume: Continue the run in `output_dir` from its last epoch
            checkpoint, with the configs recorded in its `run.json`; only
            `epochs` and `learning_rate` may be given anew (by default the
            run trains to the epoch count it recorded); other settings, if
            given, must equal the run's.
        verbose: Keras progress output.
        callbacks: More Keras callbacks for `fit`.
        info: Extra fields for `run.json` (e.g. what the corpus was).
        data_parallel: Train on every device (GPUs, else logical CPUs) with
            the backend's data parallelism (`models.distribute`).
        model_config: A `ModelConfig`; default: the paper's model.
        training_config: A `TrainingConfig`; default: the paper's training
            (one epoch).
        **settings: Fields of either config, applied over them (e.g.
            `epochs=3`).

    A model with `direction="backward"` (in `model_config` or
    `settings`) is trained, validated and tested on every sentence
    reversed (`data.corpus.in_reading_order`); its vocabulary is the one a
    forward model of the corpus gets.

    Returns:
        `run.json` as a dict, with `results`: validation and test perplexity
        of the best model and the training time.
    """
    import keras

    from on_lstm_keras.models import ONLSTMLanguageModel
    from on_lstm_keras.models.distribute import data_parallel as parallel
    from on_lstm_keras.models.training import compile_language_model
    from on_lstm_keras.models.training import make_optimizer
    from on_lstm_keras.models.training import train_language_model

    if cell is not None:
        _deprecated_keyword("cell", "model_config.recurrent")
        settings["recurrent"] = cell
    # Every setting is checked, by its name, before anything is written.
    if resume:
        given = _given(model_config, training_config, settings)
        model_cfg, training_cfg = resume_configs(output_dir, given)
        vocab = Vocabulary.load(os.path.join(output_dir, VOCAB_FILE))
        callbacks = [*callbacks, *prepare_resume(output_dir, training_cfg)]
    else:
        model_cfg, training_cfg = split_settings(
            settings, model_config, training_config)
        vocab = Vocabulary.build(corpus.train, training_cfg.min_count,
                                 training_cfg.max_vocab)
        record_run(output_dir, corpus, vocab, model_cfg, training_cfg,
                   **(info or {}))

    keras.utils.set_random_seed(training_cfg.seed)
    # A backward model reads (and is scored on) every sentence reversed.
    train_ids, valid_ids, test_ids = (
        vocab.encode_sentences(in_reading_order(split, model_cfg.direction))
        for split in (corpus.train, corpus.valid, corpus.test))
    started = time.time()
    with parallel() if data_parallel else contextlib.nullcontext():
        model = ONLSTMLanguageModel.from_model_config(
            model_cfg, len(vocab), stateful=True, seed=training_cfg.seed)
        model.build_for(training_cfg.batch_size)
        compile_language_model(model, make_optimizer(
            training_cfg.optimizer, training_cfg.learning_rate,
            training_cfg.clipnorm, training_cfg.weight_decay,
            training_cfg.warmup_steps,
        ), xla=training_cfg.xla)
        train_language_model(
            model, train_ids, valid_ids, output_dir,
            batch_size=training_cfg.batch_size, bptt=training_cfg.bptt,
            epochs=training_cfg.epochs,
            variable_length=training_cfg.variable_length,
            eval_batch_size=training_cfg.eval_batch_size, resume=resume,
            seed=training_cfg.seed, verbose=verbose, callbacks=callbacks,
        )
    return score_run(output_dir, valid_ids, test_ids, time.time() - started)


LSTM_DIR = "lstm"
BACKWARD_DIR = "backward"
"""Where `train_runs(direction="both")` trains the backward model (the
folder the parser looks in, `runs.BACKWARD_DIR`)."""
TRAIN_DIRECTIONS = ("forward", "backward", "both")


def check_train_direction(direction):
    """`direction` of `train_runs` checked: `"forward"`, `"backward"` or
    `"both"`; `None` stays `None` (the run's recorded one, or forward)."""
    if direction is None:
        return None
    if direction not in TRAIN_DIRECTIONS:
        raise ValueError(
            "Argument `direction` (--direction) must be one of "
            + ", ".join(map(repr, TRAIN_DIRECTIONS))
            + f", received: direction={direction!r}")
    return direction


def recorded_direction(output_dir):
    """Which reading directions the run in `output_dir` trains
    (`run.json` `train_direction`; runs that record none: their model's
    direction), or `None` when it holds no run."""
    info = read_run_info(output_dir)
    if not info.get("model"):
        return None
    return info.get("train_direction") or info["model"].get(
        "direction", "forward")


def planned_runs(output_dir, direction="forward", with_lstm=False):
    """The runs `train_runs` makes, in order.

    Args:
        output_dir: The main run's directory.
        direction: `"forward"`, `"backward"` (the main run reads reversed
            sentences) or `"both"` (a forward main run, and a backward one
            in `output_dir/backward`).
        with_lstm: Also the same-size LSTM, in `output_dir/lstm`, read in
            the main run's direction.

    Returns:
        A list of `(name, directory, recurrent, reading direction)`.
    """
    main = "backward" if direction == "backward" else "forward"
    runs = [("onlstm", output_dir, "onlstm", main)]
    if direction == "both":
        runs.append(("onlstm backward", os.path.join(output_dir, BACKWARD_DIR),
                     "onlstm", "backward"))
    if with_lstm:
        runs.append(("lstm", os.path.join(output_dir, LSTM_DIR), "lstm", main))
    return runs


def check_resume_direction(output_dir, direction):
    """Raises a `ValueError` naming `--direction` unless the run in
    `output_dir` (resumed) has a model that reads the way `direction`
    (`"forward"`, `"backward"` or `"both"`) needs for it."""
    info = read_run_info(output_dir)
    has = info.get("model", {}).get("direction", "forward")
    wants = "backward" if direction == "backward" else "forward"
    if has != wants:
        raise ValueError(
            f"--direction {direction} needs a {wants} model in {output_dir}, "
            f"but the run there reads {has}; received: direction={direction!r}")


def check_backward_epochs(backward_epochs, direction, resumed=None):
    """`backward_epochs` of `train_runs` checked: `None` or a positive
    integer, given with `direction="both"` only; on resume (`resumed`, the
    run's directory) a missing one is the run's recorded one.

    Returns:
        The backward model's epochs, or `None` for those of `epochs`.
    """
    if backward_epochs is None:
        if resumed is not None and has_run(resumed):
            return read_run_info(resumed).get("backward_epochs")
        return None
    if (isinstance(backward_epochs, bool)
            or not isinstance(backward_epochs, numbers.Integral)
            or backward_epochs < 1):
        raise ValueError(
            "Argument `backward_epochs` (--backward-epochs) must be a "
            f"positive integer, received: backward_epochs={backward_epochs!r}")
    if direction != "both":
        raise ValueError(
            "Argument `backward_epochs` (--backward-epochs) sets the backward "
            "model's epochs of direction 'both', received: backward_epochs="
            f"{backward_epochs!r} with direction={direction!r}")
    return int(backward_epochs)


def check_side_by_side(side_by_side):
    """`side_by_side` of `train_runs` checked: `True`, `False` or
    `"auto"`."""
    if not (isinstance(side_by_side, bool) or side_by_side == "auto"):
        raise ValueError(
            "Argument `side_by_side` (--side-by-side) must be True, False or "
            f"'auto', received: side_by_side={side_by_side!r}")
    return side_by_side


def resolve_side_by_side(side_by_side, runs, data_parallel=False):
    """Whether `runs` runs are trained side by side: `True` and `False` as
    given; `"auto"` when there are two or more, the process may use at
    least two CPU cores, it trains on no accelerator (two processes would
    each take a GPU's memory) and not data-parallel."""
    import keras

    from on_lstm_keras._side_by_side import cpu_cores

    side_by_side = check_side_by_side(side_by_side)
    if runs < 2:
        return False
    if side_by_side != "auto":
        return side_by_side
    accelerators = [d for d in keras.distribution.list_devices()
                    if not d.lower().startswith("cpu")]
    return cpu_cores() >= 2 and not accelerators and not data_parallel


def train_runs(corpus, output_dir, with_lstm=False, resume=False, verbose=1,
               info=None, callbacks=(), data_parallel=False, *,
               model_config=None, training_config=None, baseline=None,
               direction=None, side_by_side=False, backward_epochs=None,
               **settings):
    """Trains the ON-LSTM into `output_dir`; with `direction="both"` a
    backward ON-LSTM (trained on reversed sentences) into
    `output_dir/backward`; with `with_lstm=True` the same-size LSTM into
    `output_dir/lstm` (see `train`).

    With `resume=True` each run continues from its own last checkpoint (a
    run that has not started yet starts, with the configs of the run in
    `output_dir`), so a `"both"` run stopped in its backward half continues
    there. Ctrl-C stops training between two checkpoints: a message says
    how to resume, and `KeyboardInterrupt` is raised again. `output_dir` is
    locked meanwhile: another process training into it gets
    `DirectoryLocked` at once.

    Args:
        corpus, output_dir, resume, verbose, info, callbacks, data_parallel,
        model_config, training_config, **settings: As for `train`.
        with_lstm: Also train the same-size LSTM baseline.
        baseline: Deprecated name of `with_lstm`.
        direction: `"forward"`, `"backward"` or `"both"` (see
            `planned_runs`); recorded in `run.json` (`train_direction`).
            Default: forward, or on resume the run's recorded one (a
            resumed forward run may be given `"both"` to add its backward
            model).
        side_by_side: Train the runs that are left at the same time, each
            in a process of its own with a share of the CPU threads
            (`True`, `False` or `"auto"`: see `resolve_side_by_side`); their
            output is printed line by line with the run's name in front
            (Keras' one line per epoch instead of a progress bar), and
            `corpus`, the configs and `callbacks` must be picklable. On two
            CPU cores the `small` preset's two directions trained in 0.63
            of the time they took one after the other.
        backward_epochs: With `direction="both"`, the backward model's
            epoch count where it differs from the forward one's (`epochs`);
            recorded in `run.json` (`backward_epochs`), so that a resumed
            run keeps it. Default: `epochs`, or on resume the recorded one.

    Returns:
        `{"onlstm": run_info, "onlstm backward": run_info, "lstm":
        run_info}`, with the runs made.
    """
    import sys

    from on_lstm_keras.models.checkpoints import checkpoint_epoch

    if baseline is not None:
        _deprecated_keyword("baseline", "with_lstm")
        with_lstm = with_lstm or baseline
    direction = check_train_direction(direction)
    check_side_by_side(side_by_side)
    given = asked = _given(model_config, training_config, settings)
    if resume and has_run(output_dir):
        direction = direction or recorded_direction(output_dir)
        check_resume_direction(output_dir, direction)
    # A model_config that reads backward, with no `direction`: its own.
    direction = direction or given.get("direction", "forward")
    backward_epochs = check_backward_epochs(
        backward_epochs, direction, output_dir if resume else None)
    main_info = {**(info or {}), "train_direction": direction}
    if backward_epochs is not None:
        main_info["backward_epochs"] = backward_epochs
    common = dict(verbose=verbose, callbacks=callbacks,
                  data_parallel=data_parallel)
    results = {}
    jobs, messages = {}, {}
    with output_lock(output_dir):
        if resume and has_run(output_dir):
            recorded = read_run_info(output_dir)
            if recorded.get("train_direction") != direction:
                update_run_info(output_dir, train_direction=direction)
            if (backward_epochs is not None
                    and recorded.get("backward_epochs") != backward_epochs):
                update_run_info(output_dir, backward_epochs=backward_epochs)
        for kind, directory, recurrent, reading in planned_runs(
                output_dir, direction, with_lstm):
            given = dict(asked)
            if kind == "onlstm backward" and backward_epochs is not None:
                given["epochs"] = backward_epochs
            again = resume and has_run(directory)
            done = checkpoint_epoch(directory) if again else 0
            if again:
                recorded = read_run_info(directory)
                ours = dict(given)
                if "recurrent" in ours:
                    ours["recurrent"] = recurrent
                if "direction" in ours:
                    ours["direction"] = reading
                check_resume_settings(recorded, ours, directory)
                epochs = given.get("epochs", recorded["training"]["epochs"])
                if finished_run(directory, epochs):
                    print(f"{kind}: done, {done} epochs trained (pass an "
                          f"--epochs above {done} to train more); "
                          f"{perplexity_summary(recorded)} (model in "
                          f"{directory})")
                    results[kind] = recorded
                    continue
                state = (f"{done} epochs are trained, {epochs} asked: testing "
                         "the best model" if done >= epochs else
                         f"resuming after epoch {done} of {epochs}")
                starting = f"Training {kind} into {directory} ({state})"
                run = dict(resume=True, **ours)
            else:
                starting = f"Training {kind} into {directory}"
                base = ()
                if resume and has_run(output_dir):
                    # Not started yet: the ON-LSTM run's configs.
                    base = configs_of_run(read_run_info(output_dir))
                model, training = split_settings(given, *base)
                run = dict(model_config=dataclasses.replace(
                    model, recurrent=recurrent, direction=reading),
                    training_config=training)
            jobs[kind] = dict(
                corpus=corpus, output_dir=directory, **common, **run,
                info=main_info if directory == output_dir else info)
            messages[kind] = starting
        if resolve_side_by_side(side_by_side, len(jobs), data_parallel):
            print("\n".join(messages.values()))
            _train_side_by_side(jobs, results)
        for kind, job in jobs.items():
            if kind not in results:
                print(messages[kind])
                try:
                    results[kind] = train_job(job)
                except KeyboardInterrupt:
                    print("\n" + interrupted_message(job["output_dir"]),
                          file=sys.stderr)
                    raise
            print(f"{kind}: {perplexity_summary(results[kind])} "
                  f"(model in {job['output_dir']})")
    return results


def train_job(job):
    """`train` on one of `train_runs`' jobs, a dict of its arguments: the
    corpus and the directory go positionally, as `train` names them."""
    rest = {k: v for k, v in job.items() if k not in ("corpus", "output_dir")}
    return train(job["corpus"], job["output_dir"], **rest)


def _train_side_by_side(jobs, results):
    """Trains `jobs` (`{name: train's arguments}`) side by side into
    `results`."""
    import sys

    from on_lstm_keras._side_by_side import thread_share
    from on_lstm_keras._side_by_side import train_side_by_side

    threads = thread_share(len(jobs))
    print(f"Training {', '.join(jobs)} side by side, {threads} thread"
          f"{'s' if threads > 1 else ''} each")
    # Keras' one line per epoch: a progress bar's redraws do not relay.
    quieter = [dict(job, verbose=2 if job["verbose"] else 0)
               for job in jobs.values()]
    try:
        trained = train_side_by_side(quieter, list(jobs), threads)
    except KeyboardInterrupt as stop:
        for kind in getattr(stop, "unfinished", jobs):
            print("\n" + interrupted_message(jobs[kind]["output_dir"]),
                  file=sys.stderr)
        raise
    results.update(zip(jobs, trained))


def interrupted_message(directory):
    """What to tell a user who stopped training into `directory` (Ctrl-C):
    which epoch is saved and how to continue.

    Args:
        directory: The run directory.

    Returns:
        One line of text.
    """
    from on_lstm_keras.models.checkpoints import checkpoint_epoch

    try:
        saved = checkpoint_epoch(directory)
    except ValueError:  # a checkpoint cut short: nothing to continue from
        saved = 0
    if saved:
        return (f"Interrupted: epoch {saved}, the last finished, is saved in "
                f"{directory}; run again with --resume to continue.")
    return (f"Interrupted before the first epoch ended: no epoch was saved in "
            f"{directory}; run the command again to start training.")


def perplexity_summary(info):
    """One line with a run's perplexities, for printing."""
    r = info.get("results", {})
    if not r:
        return "no results yet"
    return (f"validation perplexity {r['valid_perplexity']:.2f}, "
            f"test perplexity {r['test_perplexity']:.2f}")

