"""A run's trees beside their controls (Dyer, Melis and Blunsom 2019): the
same-size LSTM's forget gates, the architecture untrained and the four
trivial trees, on a treebank and on its mirror, each reading chosen on the
dev half by one rule, with paired bootstrap intervals of the differences."""

import os
import tempfile

from on_lstm_keras.models.saving import has_run
from on_lstm_keras.models.saving import read_run_info
from on_lstm_keras.parsing.baselines import BASELINES
from on_lstm_keras.parsing.bootstrap import paired_bootstrap
from on_lstm_keras.parsing.trees import TREE_RULES
from on_lstm_keras.runs.controls import untrained_copy
from on_lstm_keras.runs.evaluation import evaluate_readings
from on_lstm_keras.runs.layout import LSTM_DIR
from on_lstm_keras.runs.parse import mirror_reading
from on_lstm_keras.runs.readings import best_reading

HALVES = ("dev", "test")

COLUMNS = ("dev", "test", "dev mirrored", "test mirrored")
"""The columns of each row of `compare_controls`: the treebank's halves,
then its mirror's."""

SYSTEMS = ("onlstm", "lstm", "untrained")
"""The model rows of `compare_controls`: the run, its LSTM (`RUN/lstm`)
and its architecture untrained (`untrained_copy`)."""


def _cell(cells, half, **where):
    """The one cell of `cells` of `half` matching `where`."""
    found = [c for c in cells if c["half"] == half
             and all(c.get(k) == v for k, v in where.items())]
    if len(found) != 1:
        raise LookupError(f"{len(found)} cells of the {half} half match "
                          f"{where}; expected one")
    return found[0]


def _system_rows(name, tables, rules):
    """A row per tree rule of one model: the reading and layer chosen on
    the dev half of the treebank itself, and that reading's cells on both
    halves, plain and mirrored (the mirror read by the same models)."""
    rows = []
    for rule in rules:
        plain, mirror = tables[False]["cells"], tables[True]["cells"]
        choice = best_reading([c for c in plain if c["tree_rule"] == rule])
        where = {"layer": choice["layer"], "tree_rule": rule}
        cells = {}
        for half in HALVES:
            cells[half] = _cell(plain, half, reading=choice["reading"],
                                **where)
            cells[f"{half} mirrored"] = _cell(
                mirror, half, reading=mirror_reading(choice["reading"]),
                **where)
        rows.append({"system": name, "tree_rule": rule,
                     "reading": choice["reading"], "layer": choice["layer"],
                     "cells": cells})
    return rows


def _baseline_rows(tables):
    """A row per trivial tree, on both halves, plain and mirrored."""
    rows = []
    for baseline in BASELINES:
        cells = {}
        for mirrored in (False, True):
            for half in HALVES:
                key = f"{half} mirrored" if mirrored else half
                cells[key] = _cell(tables[mirrored]["baselines"], half,
                                   baseline=baseline)
        rows.append({"system": baseline, "tree_rule": None, "reading": None,
                     "layer": None, "cells": cells})
    return rows


def _differences(rows, resamples, confidence, seed):
    """ON-LSTM minus each control (the LSTM, the untrained network, the
    best trivial tree of each column), per tree rule and column, with its
    paired bootstrap interval."""
    found = []
    baselines = [r for r in rows if r["tree_rule"] is None]
    for row in (r for r in rows if r["system"] == "onlstm"):
        for key, cell in row["cells"].items():
            best = max(baselines, key=lambda r: r["cells"][key]["sentence_f1"])
            others = [r for r in rows if r["tree_rule"] == row["tree_rule"]
                      and r["system"] in SYSTEMS[1:]] + [best]
            for other in others:
                d = paired_bootstrap(
                    cell["sentence_scores"],
                    other["cells"][key]["sentence_scores"],
                    resamples=resamples, confidence=confidence, seed=seed)
                found.append({
                    "tree_rule": row["tree_rule"], "column": key,
                    "minus": other["system"],
                    "best_baseline": other is best,
                    "difference": d.difference, "low": d.low, "high": d.high,
                    "confidence": d.confidence, "resamples": d.resamples})
    return found


def compare_controls(run_dir, treebank="sinica", *, max_length=None,
                     nltk_data=None, untrained_seed=None, tree_rules=TREE_RULES,
                     resamples=10000, confidence=0.95, seed=0,
                     progress=False):
    """The run's trees beside every control, on a treebank's halves and on
    its mirror.

    Rows: the run (`"onlstm"`, with its backward model where it has one),
    its same-size LSTM (`"lstm"`, `RUN/lstm`, read by its forget gates,
    where the run has one), the same architecture untrained
    (`"untrained"`, `untrained_copy` with `untrained_seed`), each for every
    tree rule with the reading and layer of the highest sentence F1 on the
    dev half among that rule's (`best_reading`, the rule of
    `choose_reading`); and the four trivial trees. Columns: the dev and
    test halves, and both again on the mirrored treebank
    (`evaluate_readings(mirrored=True)`: each sentence reversed and its
    gold tree mirrored, read by the same models, so the chosen reading's
    mirror is `mirror_reading` of it).

    Args:
        run_dir: The run's directory.
        treebank: `"sinica"` or `"ptb"`.
        max_length: Only sentences of at most this many words (PTB: 10).
        nltk_data: Folder holding the treebank; default nltk's path.
        untrained_seed: Seed of the untrained weights; default the run's
            training seed.
        tree_rules: The tree rules, a row each.
        resamples, confidence: Of the paired bootstrap
            (`parsing.paired_bootstrap`).
        seed: Of the random baseline and of the bootstrap.
        progress: Progress bars while the models read.

    Returns:
        A dict: `treebank`, `max_length`, `run_seed` (the run's training
        seed), `halves` (sentences scored in
        each), `unknown_word_rate`, `untrained_seed`, `perplexity` (the trained
        models' `valid` and `test` perplexity; `None` untrained), `rows` (`system`, `tree_rule`,
        `reading`, `layer`, and `cells`, for `"dev"`, `"test"`, `"dev
        mirrored"` and `"test mirrored"`: `sentence_f1` and `corpus_f1`),
        and `differences`: the run's sentence F1 minus each control's
        (`minus`: `"lstm"`, `"untrained"`, or the trivial tree best in
        that column, `best_baseline: True`) per tree rule and column, with
        the bootstrap interval (`difference`, `low`, `high`, `confidence`,
        `resamples`).
    """
    models = {"onlstm": run_dir}
    if has_run(os.path.join(run_dir, LSTM_DIR)):
        models["lstm"] = os.path.join(run_dir, LSTM_DIR)
    with tempfile.TemporaryDirectory(prefix="untrained-") as scratch:
        copy = os.path.join(scratch, "run")
        drawn = untrained_copy(run_dir, copy, untrained_seed)
        models["untrained"] = copy
        tables = {name: {mirrored: evaluate_readings(
                             path, treebank, max_length=max_length,
                             nltk_data=nltk_data, seed=seed, mirrored=mirrored,
                             tree_rules=tree_rules, sentence_scores=True,
                             progress=progress)
                         for mirrored in (False, True)}
                  for name, path in models.items()}
    rows = [row for name in models
            for row in _system_rows(name, tables[name], tree_rules)]
    rows += _baseline_rows(tables["onlstm"])
    differences = _differences(rows, resamples, confidence, seed)
    for row in rows:
        for cell in row["cells"].values():
            del cell["sentence_scores"]
    perplexity = {}
    for name in ("onlstm", "lstm"):
        if name in models:
            results = read_run_info(models[name]).get("results") or {}
            perplexity[name] = {half: results.get(f"{half}_perplexity")
                                for half in ("valid", "test")}
    plain = tables["onlstm"][False]
    training = read_run_info(run_dir).get("training") or {}
    return {"treebank": treebank, "max_length": max_length,
            "run_seed": training.get("seed"),
            "halves": plain["halves"],
            "unknown_word_rate": plain["unknown_word_rate"],
            "untrained_seed": drawn["untrained"]["seed"],
            "perplexity": {**perplexity, "untrained": None},
            "rows": rows, "differences": differences}
