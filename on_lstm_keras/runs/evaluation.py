"""Scoring a run's trees against a gold treebank.

`evaluate_treebank` scores one reading of a model (or a baseline);
`evaluate_readings` scores every reading × layer × tree rule on the halves
of a treebank from one pass of each model over the sentences.
"""

import numpy as np

from on_lstm_keras.parsing.baselines import BASELINES
from on_lstm_keras.parsing.baselines import baseline_tree
from on_lstm_keras.parsing.metrics import evaluate
from on_lstm_keras.parsing.metrics import sentence_prf
from on_lstm_keras.parsing.model_parser import model_direction
from on_lstm_keras.parsing.model_parser import reading_models
from on_lstm_keras.parsing.model_parser import sentence_distances
from on_lstm_keras.parsing.scores import check_layer
from on_lstm_keras.parsing.scores import reading_arg
from on_lstm_keras.parsing.scores import split_scores
from on_lstm_keras.parsing.treebanks import half_arg
from on_lstm_keras.parsing.treebanks import load_ptb
from on_lstm_keras.parsing.treebanks import load_sinica
from on_lstm_keras.parsing.treebanks import mirror_sentence
from on_lstm_keras.parsing.trees import TREE_RULES
from on_lstm_keras.parsing.trees import distances_to_tree
from on_lstm_keras.parsing.trees import tree_rule_arg
from on_lstm_keras.runs.defaults import loaded
from on_lstm_keras.runs.defaults import with_saved_reading
from on_lstm_keras.runs.parse import backward_of
from on_lstm_keras.runs.parse import lstm_has_no_backward
from on_lstm_keras.runs.parse import mirror_reading
from on_lstm_keras.runs.parse import read_boundaries
from on_lstm_keras.utils import validation as check

TREEBANKS = ("ptb", "sinica")


def load_gold(treebank, *, half=None, nltk_data=None, max_length=None,
              to_simplified=False, fileids=None, mirrored=False):
    """The gold sentences of `treebank` (`load_ptb` or `load_sinica`),
    each mirrored (`mirror_sentence`) with `mirrored=True`."""
    half = half_arg(half)
    if treebank == "ptb":
        gold = load_ptb(nltk_data=nltk_data, max_length=max_length,
                        fileids=fileids, half=half)
    else:
        gold = load_sinica(nltk_data=nltk_data, max_length=max_length,
                           to_simplified=to_simplified, half=half)
    return [mirror_sentence(g) for g in gold] if mirrored else gold


def f1_of(trees, gold):
    """`sentence_f1` and `corpus_f1` of `trees` against the gold sentences."""
    metrics = evaluate(zip(trees, (g.tree for g in gold)))
    return {"sentence_f1": metrics["sentence_f1"],
            "corpus_f1": metrics["corpus_f1"]}


def sentence_f1s(trees, gold):
    """Each sentence's span F1 (percent) of `trees` against the gold
    sentences, in order: the items whose mean is `sentence_f1`, for a
    paired bootstrap (`parsing.paired_bootstrap`)."""
    return [100.0 * sentence_prf(tree, g.tree).f1
            for tree, g in zip(trees, gold)]


def _check_sources(treebank, model, baseline, fileids, backward_model):
    """The checks of `evaluate_treebank` that need no model."""
    if (model is None) == (baseline is None):
        raise ValueError("Give exactly one of `model` and `baseline`, "
                         f"received: model={model!r}, baseline={baseline!r}")
    if fileids is not None and treebank != "ptb":
        raise ValueError(
            "Argument `fileids` selects files of the Penn Treebank "
            f"(treebank='ptb'); the Sinica sample is one file, received: "
            f"fileids={fileids!r} with treebank={treebank!r}")
    if baseline is not None:
        check.choice("baseline", baseline, BASELINES)
    if backward_model is not None and model is None:
        raise ValueError(
            "Argument `backward_model` goes with `model`, received: "
            f"backward_model={backward_model!r} with baseline={baseline!r}")


def _mirror_needs_backward(reading, run):
    """The `ValueError` for a mirrored `reading` that reads the run's
    backward model when there is none."""
    return ValueError(
        f"Argument `reading={reading!r}` with `mirrored=True` reads the "
        "run's backward model (the mirrored language's forward model is the "
        "one trained on reversed sentences), and none was given: give "
        "`backward_model`, or train one into <model>/backward."
        + lstm_has_no_backward(run))


def _reading_nets(model, backward_model, reading, layer, mirrored):
    """Loads the runs `reading` reads and checks `layer` against their
    models, before the treebank is read: `(run, backward_run, reading,
    forward_net, backward_net, layer)`, the nets in the run's roles (with
    `mirrored=True`, `reading` names the mirror's models, see
    `mirror_reading`)."""
    role = mirror_reading(reading) if mirrored else reading
    backward_model = backward_of(model, backward_model, role)
    model = loaded(model)
    if role is None:
        role = model_direction(model.model)
        reading = mirror_reading(role) if mirrored else role
    if (role in ("backward", "both") and backward_model is None
            and model_direction(model.model) == "forward"):
        if mirrored:
            raise _mirror_needs_backward(reading, model)
        if lstm_has_no_backward(model):
            raise ValueError(
                f"Argument `reading={reading!r}` needs a backward model, and "
                "none was given." + lstm_has_no_backward(model))
    forward_net, backward_net = reading_models(
        role, model.model,
        None if backward_model is None else backward_model.model)
    for net in (forward_net, backward_net):
        if net is not None and layer != "all":
            check_layer(layer, len(net.rnn_layers), mean=True)
    if layer != "all" and role == "forward" and layer != "mean":
        layer = check_layer(layer, len(model.model.rnn_layers))
    return model, backward_model, reading, forward_net, backward_net, layer


def _one_forward_layer(reading, layer, mirrored):
    """Whether the trees come from one layer of the run's forward model
    read as it is (`sentence_distances`), not from split scores."""
    return not mirrored and reading == "forward" and layer != "mean"


def _model_trees(run, backward, reading, nets, words, layer, tree_rule,
                 progress, mirrored):
    """`(trees_of, num_layers, vocab)`: `trees_of(k)` gives the trees of
    `words` from layer `k` (a number or `"mean"`) of the reading (of the
    mirrored sentences `words` with `mirrored=True`)."""
    if _one_forward_layer(reading, layer, mirrored):
        num_layers = len(run.model.rnn_layers)
        distances = (sentence_distances(run.model, run.vocab, words,
                                        progress=progress) if words else [])

        def trees_of(k):
            return [distances_to_tree(w, d[k - 1], tree_rule)
                    for w, d in zip(words, distances)]
    else:
        num_layers = min(len(net.rnn_layers) for net in nets if net is not None)
        boundaries = (read_boundaries(run, backward, reading, words,
                                      None if layer == "all" else layer,
                                      progress, mirrored=mirrored)
                      if words else [])

        def trees_of(k):
            return [distances_to_tree(w, split_scores(f, b, k), tree_rule)
                    for w, (f, b) in zip(words, boundaries)]
    vocab = run.vocab if nets[0] is not None else (backward or run).vocab
    return trees_of, num_layers, vocab


def _score_model(result, run, backward, reading, nets, scored, layer,
                 tree_rule, progress, mirrored):
    """Adds the F1 of the model's trees (of `layer`, or of each layer for
    `"all"`) and the unknown word rate to `result`."""
    words = [g.words for g in scored]
    if not _one_forward_layer(reading, layer, mirrored):
        result["reading"] = reading
    trees_of, num_layers, vocab = _model_trees(
        run, backward, reading, nets, words, layer, tree_rule, progress,
        mirrored)
    unknown = sum(w not in vocab for s in words for w in s)
    result["unknown_word_rate"] = unknown / max(1, sum(len(s) for s in words))
    if layer == "all":
        result["per_layer"] = [{"layer": k, **f1_of(trees_of(k), scored)}
                               for k in range(1, num_layers + 1)]
    else:
        result.update(layer=layer, **f1_of(trees_of(layer), scored))
    return result


def evaluate_treebank(treebank, model=None, baseline=None, *, reading=None,
                      layer=None, tree_rule=None, max_length=None,
                      nltk_data=None, seed=0, to_simplified=None,
                      fileids=None, half=None, backward_model=None,
                      mirrored=False, progress=False):
    """Unlabeled F1 of a model's trees (or of a baseline) on a treebank.

    Two figures are given (see `on_lstm_keras.parsing.metrics`):
    `sentence_f1`, the mean over sentences of each sentence's span F1
    without the whole-sentence span (the official ON-LSTM script's "Mean
    F1"), and `corpus_f1`, the micro-averaged span F1 over the corpus with
    the whole-sentence span (matches summed over all sentences). The
    latter counts what EVALB counts on these unlabelled, unary-free trees,
    and is the figure to compare with the ON-LSTM paper's tables, but it
    is computed here, not by the EVALB program.

    Args:
        treebank: `"ptb"` (the paper's preprocessing) or `"sinica"`.
        model: A model directory or `LoadedRun`; or use `baseline`.
        baseline: `"left"`, `"right"`, `"balanced"` or `"random"`.
        reading: `"forward"`, `"backward"` or `"both"` (see `parse`);
            default the run's recorded default, else the model's own
            direction.
        layer: Layer number from 1, `"mean"` (the mean over layers, see
            `parsing.scores`), `"all"` (each layer in turn), or `None` for
            the run's recorded default, else the middle one.
        tree_rule: `"official"` or `"plain"` tree building; default the
            run's recorded default, else `"official"`.
        max_length: Keep sentences of at most this many words (10: WSJ10).
        nltk_data: Folder holding `corpora/treebank` or
            `corpora/sinica_treebank`; default nltk's data path.
        seed: Seed of the random baseline.
        to_simplified: Convert Sinica's traditional characters to
            simplified; default: when the model was trained on simplified
            text (`run.json` `script`).
        fileids: PTB only: a file id or a list of them (e.g.
            `"wsj_2300.mrg"` for section 23 of a full WSJ); default all.
            Not with `half`.
        half: `"dev"` or `"test"`, one of the sample's two fixed halves:
            for Sinica by sentence position (see `load_sinica`), for the
            PTB by file (see `load_ptb`); default the whole sample.
        backward_model: The backward model's run (a directory or a
            `LoadedRun`) for `"both"` or `"backward"`; default
            `<model>/backward` when `model` is a directory holding one.
        mirrored: Score the mirrored treebank instead: each sentence
            reversed and its gold tree mirrored (`mirror_sentence`), read as
            a user of that left-branching language would. Its forward model
            is the run's backward one (trained on reversed sentences, it
            reads a mirrored sentence left to right) and its backward model
            the run's forward one: `reading` names them so (`"forward"`
            reads the run's backward model, `"both"` both). Read both ways,
            the distances are exactly the mirror of the original ones, so
            any change in F1 is the parser's. A reading not given reads the
            same model(s) as on the original treebank (the recorded
            default, or the model's own direction, renamed). Baselines are
            scored on the mirrored gold too.
        progress: Show a progress bar on stderr while the model reads the
            sentences.

    As in `parse`, a model run's recorded default (`run.json`
    `default_reading`) fills each of `reading`, `layer` and `tree_rule`
    not given.

    Returns:
        A dict with `treebank`, `max_length`, `sentences` (scored),
        `skipped` (fewer than two words), `sentence_f1` and `corpus_f1`
        (percent) and the `layer` or `baseline`; for `layer="all"`, a
        `per_layer` list instead; `fileids` when given; `reading` unless
        the trees come from one layer of a forward model (always with
        `mirrored=True`); `mirrored: True` with `mirrored=True`.
    """
    if model is not None and baseline is None:
        given = reading
        reading, layer, tree_rule = with_saved_reading(
            model, reading, layer, tree_rule)
        if mirrored and given is None:
            reading = mirror_reading(reading)
    tree_rule = tree_rule_arg(tree_rule or "official")
    treebank = check.choice("treebank", treebank, TREEBANKS)
    half = half_arg(half)
    _check_sources(treebank, model, baseline, fileids, backward_model)
    if reading is not None:
        reading = reading_arg(reading)
    if model is not None:
        model, backward_model, reading, *nets, layer = _reading_nets(
            model, backward_model, reading, layer, mirrored)
    if to_simplified is None:
        to_simplified = bool(model and model.info.get("script") == "simplified")
    gold = load_gold(treebank, half=half, nltk_data=nltk_data,
                     max_length=max_length, to_simplified=to_simplified,
                     fileids=fileids, mirrored=mirrored)
    scored = [g for g in gold if len(g.words) >= 2]
    result = {"treebank": treebank, "max_length": max_length,
              "sentences": len(scored), "skipped": len(gold) - len(scored)}
    if mirrored:
        result["mirrored"] = True
    if half is not None:
        result["half"] = half
    if tree_rule != "official":
        result["tree_rule"] = tree_rule
    if fileids is not None:
        result["fileids"] = [fileids] if isinstance(fileids, str) else list(fileids)
    if baseline is not None:
        rng = np.random.default_rng(seed)
        trees = [baseline_tree(baseline, g.words, rng=rng) for g in scored]
        result.update(baseline=baseline, seed=seed if baseline == "random" else None,
                      **f1_of(trees, scored))
        return result
    return _score_model(result, model, backward_model, reading, nets, scored,
                        layer, tree_rule, progress, mirrored)


def _readings_arg(readings, backward, run, mirrored):
    """The readings to score, checked: default all three with a backward
    model, else the one of the run's forward model alone (`"forward"`,
    or `"backward"` with `mirrored=True`)."""
    alone = mirror_reading("forward") if mirrored else "forward"
    if readings is None:
        readings = (("forward", "backward", "both") if backward is not None
                    else (alone,))
    readings = [reading_arg(r) for r in readings]
    if any(r != alone for r in readings) and backward is None:
        mirror = (" With `mirrored=True` the mirrored language's forward "
                  "model is the run's backward one (trained on reversed "
                  "sentences); without it only the reading 'backward' (the "
                  "run's forward model) exists." if mirrored else "")
        raise ValueError(
            f"Argument `readings` {readings!r} needs a backward model: "
            "give `backward_model`, or train one into <model>/backward."
            + mirror + lstm_has_no_backward(run))
    return readings


def _reading_cells(half, gold, boundaries, readings, layers, rules,
                   sentence_scores):
    """One cell per reading × layer × tree rule of one half (with each
    sentence's F1 under `sentence_scores` where asked)."""
    cells = []
    for reading in readings:
        for layer in layers:
            scores = [split_scores(None if reading == "backward" else f,
                                   None if reading == "forward" else b,
                                   layer)
                      for f, b in boundaries]
            for rule in rules:
                trees = [distances_to_tree(g.words, s, rule)
                         for g, s in zip(gold, scores)]
                cells.append({"reading": reading, "layer": layer,
                              "tree_rule": rule, "half": half,
                              **_scored(trees, gold, sentence_scores)})
    return cells


def _scored(trees, gold, sentence_scores):
    """`f1_of`, with `sentence_scores` (`sentence_f1s`) where asked."""
    if not sentence_scores:
        return f1_of(trees, gold)
    return {**f1_of(trees, gold), "sentence_scores": sentence_f1s(trees, gold)}


def _baseline_cells(half, gold, seed, sentence_scores):
    """One cell per baseline of one half (the random one from `seed`)."""
    rng = np.random.default_rng(seed)
    return [{"baseline": baseline, "half": half,
             **_scored([baseline_tree(baseline, g.words, rng=rng)
                        for g in gold], gold, sentence_scores)}
            for baseline in BASELINES]


def evaluate_readings(model, treebank="sinica", *, backward_model=None,
                      halves=("dev", "test"), readings=None, layers=None,
                      tree_rules=TREE_RULES, nltk_data=None, max_length=None,
                      to_simplified=None, seed=0, mirrored=False,
                      sentence_scores=False, progress=False):
    """Sentence and corpus F1 of every reading × layer × tree rule on each
    half of a treebank, beside the four baselines.

    Each model reads every sentence once; every cell is scored from those
    readings.

    Args:
        model: The forward run (a directory or a `LoadedRun`).
        treebank: `"sinica"` or `"ptb"`.
        backward_model: The backward run; default `<model>/backward` when
            `model` is a directory holding one. Without one only the
            forward reading is scored (so for an LSTM run, `RUN/lstm`,
            which has none, the forward reading of its forget gates).
        halves: Which parts to score: `"dev"`, `"test"` (the two halves of
            the sample: Sinica's by sentence position, see `load_sinica`;
            the PTB's by file, see `load_ptb`) or `None` (the whole
            treebank).
        readings: Default: forward, backward and both (those the models
            allow: without a backward model, the one reading of the run's
            forward model).
        layers: Default: every layer number, then `"mean"`.
        tree_rules: Default: `"official"` and `"plain"`.
        nltk_data, max_length, to_simplified, seed, progress: As for
            `evaluate_treebank`.
        mirrored: Score the mirrored treebank, baselines included, with
            the models' roles swapped (see `evaluate_treebank`): the
            reading `"forward"` reads the run's backward model, `"backward"`
            its forward model.
        sentence_scores: Also give each cell's and baseline's F1 of every
            sentence, in the treebank's order (`sentence_scores`, percent;
            their mean is `sentence_f1`), for a paired bootstrap.

    Returns:
        A dict: `treebank`; `halves`, for each half (`"all"` for `None`)
        the number of `sentences` scored and `skipped`; `cells`, one dict
        per reading, layer, tree rule and half (`reading`, `layer`,
        `tree_rule`, `half`, `sentence_f1`, `corpus_f1`); `baselines`, one
        per baseline and half (`baseline`, `half`, `sentence_f1`,
        `corpus_f1`); `unknown_word_rate`; `mirrored: True` with
        `mirrored=True`.
    """
    treebank = check.choice("treebank", treebank, TREEBANKS)
    rules = [tree_rule_arg(r) for r in tree_rules]
    backward = backward_of(model, backward_model, "both")
    run = loaded(model)
    readings = _readings_arg(readings, backward, run, mirrored)
    alone = mirror_reading("forward") if mirrored else "forward"
    needs_backward = any(r != alone for r in readings)
    if layers is None:
        layers = [*range(1, len(run.model.rnn_layers) + 1), "mean"]
    if to_simplified is None:
        to_simplified = run.info.get("script") == "simplified"
    read = {h: load_gold(treebank, half=h, nltk_data=nltk_data,
                         max_length=max_length, to_simplified=to_simplified,
                         mirrored=mirrored)
            for h in halves}
    golds = {h: [g for g in read[h] if len(g.words) >= 2] for h in halves}
    words = [g.words for h in halves for g in golds[h]]
    boundaries = iter(read_boundaries(
        run, backward if needs_backward else None,
        "both" if needs_backward else alone, words, None, progress,
        mirrored=mirrored)
        if words else [])
    per_half = {h: [next(boundaries) for _ in golds[h]] for h in halves}
    cells, baselines = [], []
    for h in halves:
        name = "all" if h is None else h
        cells += _reading_cells(name, golds[h], per_half[h], readings,
                                layers, rules, sentence_scores)
        baselines += _baseline_cells(name, golds[h], seed, sentence_scores)
    unknown = sum(w not in run.vocab for s in words for w in s)
    return {
        "treebank": treebank, "seed": seed,
        **({"mirrored": True} if mirrored else {}),
        "halves": {("all" if h is None else h): {
            "sentences": len(golds[h]),
            "skipped": len(read[h]) - len(golds[h])} for h in halves},
        "cells": cells, "baselines": baselines,
        "unknown_word_rate": unknown / max(1, sum(len(s) for s in words)),
    }
