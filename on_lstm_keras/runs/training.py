"""Training the models of a `TrainingPlan`: each from its typed configs
into its run directory, resumed where it stopped, side by side where that
pays, scored on its held-out sentences.

`train` carries out a plan of `plan_training`; `train_run` trains one of
its models. The steps of one run are public so that a script can follow
them: `record_run` (a new run's vocabulary and `run.json`),
`prepare_resume` (continuing a run), `finished_run` and `score_run` (the
best model's perplexities).
"""

import contextlib
import os
import sys
import time

import keras
import numpy as np

from on_lstm_keras.data.corpus import in_reading_order
from on_lstm_keras.data.vocabulary import Vocabulary
from on_lstm_keras.models.distribute import data_parallel as parallel
from on_lstm_keras.models.language_model import ONLSTMLanguageModel
from on_lstm_keras.models.saving import VOCAB_FILE
from on_lstm_keras.models.saving import load_run
from on_lstm_keras.models.saving import read_run_info
from on_lstm_keras.models.saving import update_run_info
from on_lstm_keras.models.checkpoints import checkpoint_epoch
from on_lstm_keras.models.metrics import on_unigram_plateau
from on_lstm_keras.models.metrics import unigram_perplexity
from on_lstm_keras.models.training import compile_language_model
from on_lstm_keras.models.training import evaluate_perplexity
from on_lstm_keras.models.training import make_optimizer
from on_lstm_keras.models.checkpoints import refuse_to_overwrite
from on_lstm_keras.models.training import train_language_model
from on_lstm_keras.runs.layout import recorded_configs
from on_lstm_keras.runs.side_by_side import cpu_cores
from on_lstm_keras.runs.side_by_side import thread_share
from on_lstm_keras.runs.side_by_side import train_side_by_side
from on_lstm_keras.utils.lock import output_lock


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


def prepare_resume(output_dir, training_config):
    """Readies the run in `output_dir` to continue with `training_config`:
    records it in `run.json` if it differs from the recorded one, and
    returns the callbacks `train_language_model` needs.

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
    _, recorded = recorded_configs(output_dir)
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

    Raises:
        CorruptCheckpoint: The checkpoint cannot be read.
    """
    info = read_run_info(output_dir)
    if info.get("results") and checkpoint_epoch(output_dir) >= epochs:
        return info
    return None


def score_run(output_dir, train_ids, valid_ids, test_ids, train_seconds):
    """Scores the best model of the run in `output_dir` (`model.keras`)
    and records the results in its `run.json`.

    Args:
        output_dir: The run directory, trained by `train_language_model`.
        train_ids: The training token stream (for the unigram model).
        valid_ids: The validation token stream.
        test_ids: The test token stream.
        train_seconds: How long this call's training took (seconds).

    Returns:
        `run.json` as a dict, with `results`: `valid_perplexity`,
        `test_perplexity` (with the run's `eval_batch_size` and `bptt`),
        `train_seconds_this_call`, `parameters` (trainable),
        `unknown_rate_test` (the share of `<unk>` in `test_ids`),
        `unigram_valid_perplexity` (`models.metrics.unigram_perplexity`)
        and `on_unigram_plateau`: whether the model has not learned more
        than word frequencies (`on_unigram_plateau`), a stalled run.
    """
    best, vocab, _, _ = load_run(output_dir)
    _, training = recorded_configs(output_dir)
    batch, bptt = training.eval_batch_size, training.bptt

    def perplexity(ids):
        return evaluate_perplexity(best, ids, batch, bptt, xla=training.xla)

    results = {
        "valid_perplexity": perplexity(valid_ids),
        "test_perplexity": perplexity(test_ids),
        "train_seconds_this_call": round(train_seconds, 1),
        "parameters": int(sum(np.prod(w.shape) for w in best.trainable_weights)),
        "unknown_rate_test": float(np.mean(np.asarray(test_ids) == vocab.unk_id)),
        "unigram_valid_perplexity": unigram_perplexity(
            train_ids, valid_ids, len(vocab)),
    }
    results["on_unigram_plateau"] = on_unigram_plateau(
        results["valid_perplexity"], results["unigram_valid_perplexity"])
    return update_run_info(output_dir, results=results)


def train_run(run, corpus, *, data_parallel=False, callbacks=(), verbose=1,
              info=None):
    """Trains one model of a plan into its directory and tests it.

    A new run builds its vocabulary from `corpus.train` and records it
    (`record_run`); a resumed one reads its own and continues from its
    checkpoint (`prepare_resume`). A model that reads backward is trained,
    validated and tested on every sentence reversed (`in_reading_order`).

    Args:
        run: A `PlannedRun` (of `plan_training`).
        corpus: A `Corpus` (from `load_corpus`).
        data_parallel: Train on every device (GPUs, else logical CPUs) with
            the backend's data parallelism (`models.distribute`).
        callbacks: More Keras callbacks for `fit`.
        verbose: Keras progress output.
        info: More fields for a new run's `run.json`.

    Returns:
        `run.json` as a dict, with `results` (see `score_run`).
    """
    model_config, training_config = run.model_config, run.training_config
    if run.resume:
        vocab = Vocabulary.load(os.path.join(run.directory, VOCAB_FILE))
        callbacks = [*callbacks,
                     *prepare_resume(run.directory, training_config)]
    else:
        vocab = Vocabulary.build(corpus.train, training_config.min_count,
                                 training_config.max_vocab)
        record_run(run.directory, corpus, vocab, model_config,
                   training_config, **(info or {}))
    keras.utils.set_random_seed(training_config.seed)
    train_ids, valid_ids, test_ids = (
        vocab.encode_sentences(in_reading_order(split, model_config.direction))
        for split in (corpus.train, corpus.valid, corpus.test))
    started = time.time()
    with parallel() if data_parallel else contextlib.nullcontext():
        model = ONLSTMLanguageModel.from_model_config(
            model_config, len(vocab), stateful=True,
            seed=training_config.seed)
        model.build_for(training_config.batch_size)
        compile_language_model(model, make_optimizer(
            training_config.optimizer, training_config.learning_rate,
            training_config.clipnorm, training_config.weight_decay,
            training_config.warmup_steps,
        ), xla=training_config.xla)
        train_language_model(
            model, train_ids, valid_ids, run.directory,
            batch_size=training_config.batch_size, bptt=training_config.bptt,
            epochs=training_config.epochs,
            variable_length=training_config.variable_length,
            eval_batch_size=training_config.eval_batch_size,
            resume=run.resume, seed=training_config.seed, verbose=verbose,
            callbacks=callbacks,
        )
    return score_run(run.directory, train_ids, valid_ids, test_ids,
                     time.time() - started)


def resolve_side_by_side(side_by_side, runs_count, data_parallel=False):
    """Whether `runs_count` runs are trained side by side: `True` and
    `False` as given; `"auto"` when there are two or more, the process may
    use at least two CPU cores, it trains on no accelerator (two processes
    would each take a GPU's memory) and not data-parallel.

    Raises:
        ValueError: `side_by_side` is not `True`, `False` or `"auto"`.
    """
    if not (isinstance(side_by_side, bool) or side_by_side == "auto"):
        raise ValueError(
            "Argument `side_by_side` (--side-by-side) must be True, False or "
            f"'auto', received: side_by_side={side_by_side!r}")
    if runs_count < 2:
        return False
    if side_by_side != "auto":
        return side_by_side
    accelerators = [d for d in keras.distribution.list_devices()
                    if not d.lower().startswith("cpu")]
    return cpu_cores() >= 2 and not accelerators and not data_parallel


def _left_to_train(plan, results):
    """`{name: (run, message)}` of the plan's runs with training left;
    the finished ones go into `results`, with a line that says so."""
    left = {}
    for run in plan.runs:
        if not run.resume:
            left[run.name] = (run, f"Training {run.name} into {run.directory}")
            continue
        done = checkpoint_epoch(run.directory)
        epochs = run.training_config.epochs
        finished = finished_run(run.directory, epochs)
        if finished:
            print(f"{run.name}: done, {done} epochs trained (pass an "
                  f"--epochs above {done} to train more); "
                  f"{perplexity_summary(finished)} (model in "
                  f"{run.directory})")
            results[run.name] = finished
            continue
        state = (f"{done} epochs are trained, {epochs} asked: testing the "
                 "best model" if done >= epochs else
                 f"resuming after epoch {done} of {epochs}")
        left[run.name] = (run, f"Training {run.name} into {run.directory} "
                               f"({state})")
    return left


def train(plan, corpus, *, side_by_side=False, data_parallel=False,
          callbacks=(), verbose=1, info=None):
    """Trains the models of `plan` on `corpus` and tests each.

    Each run directory gets `model.keras` (the best model by validation
    perplexity), `vocab.json`, `run.json` (both configs, tokenizer, corpus,
    results), `history.csv` and `checkpoint/`. `plan.output_dir` is locked
    meanwhile (`output_lock`): another process training into it gets
    `DirectoryLocked` at once. A resumed run that has trained its epochs
    and was scored is not trained again. Ctrl-C stops training between two
    checkpoints: a message says how to resume, and `KeyboardInterrupt` is
    raised again.

    Args:
        plan: A `TrainingPlan` (of `plan_training`).
        corpus: A `Corpus`: `load_corpus`'s for a new run,
            `load_corpus_of_run`'s for a resumed one.
        side_by_side: Train the runs left at the same time, each in a
            process of its own with a share of the CPU threads (`True`,
            `False` or `"auto"`: see `resolve_side_by_side`); their output
            is printed line by line with the run's name in front (Keras'
            one line per epoch instead of a progress bar), and `corpus` and
            `callbacks` must be picklable.
        data_parallel: Train on every device with the backend's data
            parallelism.
        callbacks: More Keras callbacks for `fit`, of every run.
        verbose: Keras progress output.
        info: More fields for the `run.json` of each new run (e.g.
            `{"language": "zh"}`); the main run's also records
            `train_directions` and `backward_epochs`.

    Returns:
        `{"onlstm": run_info, "onlstm backward": run_info, "lstm":
        run_info}` with the plan's runs: each `run.json` as a dict.
    """
    resolve_side_by_side(side_by_side, 0)  # checks the value
    main_info = {**(info or {}), "train_directions": plan.directions}
    if plan.backward_epochs is not None:
        main_info["backward_epochs"] = plan.backward_epochs
    results = {}
    with output_lock(plan.output_dir):
        if plan.resume:
            recorded = read_run_info(plan.output_dir)
            changed = {k: v for k, v in main_info.items()
                       if k in ("train_directions", "backward_epochs")
                       and recorded.get(k) != v}
            if changed:
                update_run_info(plan.output_dir, **changed)
        jobs, messages = {}, {}
        for name, (run, message) in _left_to_train(plan, results).items():
            jobs[name] = dict(
                run=run, corpus=corpus, verbose=verbose, callbacks=callbacks,
                data_parallel=data_parallel,
                info=main_info if run.directory == plan.output_dir else info)
            messages[name] = message
        if resolve_side_by_side(side_by_side, len(jobs), data_parallel):
            print("\n".join(messages.values()))
            results.update(_train_side_by_side(jobs))
        for name, job in jobs.items():
            if name not in results:
                print(messages[name])
                try:
                    results[name] = train_run(**job)
                except KeyboardInterrupt:
                    print("\n" + interrupted_message(job["run"].directory),
                          file=sys.stderr)
                    raise
            print(f"{name}: {perplexity_summary(results[name])} "
                  f"(model in {job['run'].directory})")
    return results


def _train_side_by_side(jobs):
    """Trains `jobs` (`{name: train_run's arguments}`) side by side;
    returns `{name: run_info}`."""
    threads = thread_share(len(jobs))
    print(f"Training {', '.join(jobs)} side by side, {threads} thread"
          f"{'s' if threads > 1 else ''} each")
    # Keras' one line per epoch: a progress bar's redraws do not relay.
    quieter = [(train_run, dict(job, verbose=2 if job["verbose"] else 0))
               for job in jobs.values()]
    try:
        trained = train_side_by_side(quieter, list(jobs), threads)
    except KeyboardInterrupt as stop:
        for name in getattr(stop, "unfinished", jobs):
            print("\n" + interrupted_message(jobs[name]["run"].directory),
                  file=sys.stderr)
        raise
    return dict(zip(jobs, trained))


def interrupted_message(directory):
    """What to tell a user who stopped training into `directory` (Ctrl-C):
    which epoch is saved and how to continue.

    Args:
        directory: The run directory.

    Returns:
        One line of text.
    """
    try:
        saved = checkpoint_epoch(directory)
    except ValueError:  # a checkpoint cut short: nothing to continue from
        saved = 0
    if saved:
        return (f"Interrupted: epoch {saved}, the last finished, is saved in "
                f"{directory}; run again with --resume to continue.")
    return (f"Interrupted before the first epoch ended: no epoch was saved in "
            f"{directory}; run the command again to start training.")


def perplexity_summary(run_info):
    """One line with a run's perplexities, for printing."""
    r = run_info.get("results", {})
    if not r:
        return "no results yet"
    line = (f"validation perplexity {r['valid_perplexity']:.2f}, "
            f"test perplexity {r['test_perplexity']:.2f}")
    if r.get("on_unigram_plateau"):
        line += (
            "; WARNING: still on the unigram plateau (a model of word "
            f"frequencies alone scores {r['unigram_valid_perplexity']:.2f}): "
            "it has learned next to nothing from the context; train longer, "
            "or with a warm-up (--warmup-steps, --lstm-warmup-steps)")
    return line
