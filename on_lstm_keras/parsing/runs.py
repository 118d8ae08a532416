"""Parsing and scoring with a trained run (a model directory).

`parse` gives trees of raw sentences; `evaluate_treebank` scores a model's
trees, or a baseline's, against a gold treebank. Keras starts only when a
model is loaded, so scoring a baseline stays fast.
"""

import dataclasses
import os

import numpy as np

from on_lstm_keras.utils import validation as check
from on_lstm_keras.parsing.trees import distances_to_tree
from on_lstm_keras.parsing.trees import tree_rule_arg


@dataclasses.dataclass
class Parse:
    """One parsed sentence.

    Attributes:
        words: The sentence's words.
        tree: Its nested-list tree (`None` for an empty sentence).
        distances: The split scores the tree was built from, one per
            word: `d_f` of the chosen layer for one forward layer (see
            `parsing.scores` for the others).
        layer_distances: `d_f` of every layer of the forward model, one
            list per layer (the first is layer 1), one number per word
            (empty when only a backward model was read).
        backward_layer_distances: The same for the backward model, in
            input order (word `i`'s value scores the boundary after it);
            empty when no backward model was read.
    """

    words: list
    tree: object
    distances: list
    layer_distances: list = dataclasses.field(default_factory=list)
    backward_layer_distances: list = dataclasses.field(default_factory=list)


BACKWARD_SUBDIR = "backward"
"""Where a run directory may hold the run of its backward model."""


def _load(run):
    from on_lstm_keras.models.saving import load_run

    return load_run(run) if isinstance(run, str) else run


def backward_of(run, backward, direction):
    """The backward run `direction` needs: `backward` (a directory or a
    `LoadedRun`), else `<run>/backward` when `run` is a directory that holds
    one, else `None`."""
    from on_lstm_keras.models.saving import has_run

    if backward is not None or direction not in ("backward", "both"):
        return _load(backward) if backward is not None else None
    if isinstance(run, str):
        candidate = os.path.join(run, BACKWARD_SUBDIR)
        if has_run(candidate):
            return _load(candidate)
    return None


def _read(run, backward, direction, words, layer, progress):
    """`(forward, backward)` boundary distances of each of the non-empty
    word lists `words` (`model_parser.directional_boundaries`), once the
    models are checked against `direction` and `layer`."""
    from on_lstm_keras.parsing.model_parser import check_layer
    from on_lstm_keras.parsing.model_parser import directional_boundaries
    from on_lstm_keras.parsing.model_parser import reading_models

    forward_model, backward_model = reading_models(
        direction, run.model, None if backward is None else backward.model)
    if backward_model is run.model:
        backward = run
    for m in (forward_model, backward_model):
        if m is not None:
            check_layer(layer, len(m.rnn_layers), mean=True)
    return directional_boundaries(
        words,
        forward=None if forward_model is None else (run.model, run.vocab),
        backward=None if backward_model is None else (backward.model,
                                                      backward.vocab),
        progress=progress)


def parse(run, sentences, layer=None, presegmented=False, tree_rule=None,
          *, split=None, progress=False, direction=None, backward_run=None):
    """Parses sentences with a trained model.

    Args:
        run: A model directory or a `LoadedRun`.
        sentences: Strings; segmented with the run's tokenizer (jieba for a
            Chinese model), or split on whitespace with `presegmented=True`.
            Lists of words are taken as they are.
        layer: Layer number from 1 (default: the run's recorded default,
            else the middle one), or `"mean"` (the mean over layers, see
            `parsing.scores`).
        presegmented: Split strings on whitespace instead of tokenizing.
        tree_rule: `"official"` or `"plain"` (see `distances_to_tree`);
            default: the run's recorded default, else `"official"`.
        split: Deprecated name of `tree_rule`.
        progress: Show a progress bar on stderr (see `sentence_distances`).
        direction: `"forward"`, `"backward"` (a model of reversed
            sentences) or `"both"` (the two combined, see
            `parsing.scores`); default the run's recorded default, else
            its own direction (forward for every run that records none).
        backward_run: The backward model's run (a directory or a
            `LoadedRun`) for `"both"` or `"backward"`; default the run in
            `<run>/backward` when `run` is a directory holding one. The
            sentences are segmented with `run`'s tokenizer.

    A run's recorded default (`run.json` `parse_default`, see
    `choose_parse_default`) fills each of `direction`, `layer` and
    `tree_rule` not given; the ones given win.

    Returns:
        A list of `Parse`, in input order; an empty sentence gives a
        `Parse` with no words and tree `None`.
    """
    from on_lstm_keras.data.tokenizers import WhitespaceTokenizer
    from on_lstm_keras.models.saving import load_run
    from on_lstm_keras.parsing.model_parser import check_layer
    from on_lstm_keras.parsing.model_parser import model_direction
    from on_lstm_keras.parsing.model_parser import sentence_distances
    from on_lstm_keras.parsing.scores import direction_arg
    from on_lstm_keras.parsing.scores import split_scores

    if split is not None:
        tree_rule = tree_rule_arg(tree_rule or "official", split)
    direction, layer, tree_rule = with_parse_default(
        run, direction, layer, tree_rule)
    tree_rule = tree_rule_arg(tree_rule)
    if direction is not None:
        direction = direction_arg(direction)
    backward = backward_of(run, backward_run, direction)
    if isinstance(run, str):
        run = load_run(run)
    if direction is None:
        direction = model_direction(run.model)
    old_path = direction == "forward" and layer != "mean"
    if old_path:
        layer = check_layer(layer, len(run.model.rnn_layers))
    tokenizer = run.tokenizer or WhitespaceTokenizer()
    if presegmented:
        tokenizer = WhitespaceTokenizer(
            lowercase=bool((run.tokenizer and run.tokenizer.get_config().get("lowercase")))
        )
    words = [s if isinstance(s, list) else tokenizer(s) for s in sentences]
    nonempty = [w for w in words if w]
    if old_path:
        # One forward layer: its d_f as it is (as before directions).
        from on_lstm_keras.parsing.model_parser import reading_models

        reading_models(direction, run.model)
        distances = iter(sentence_distances(run.model, run.vocab, nonempty,
                                            progress=progress)
                         if nonempty else [])
    else:
        boundaries = iter(_read(run, backward, direction, nonempty, layer,
                                progress) if nonempty else [])
    out = []
    for w in words:
        if not w:
            out.append(Parse([], None, []))
            continue
        if old_path:
            d = next(distances)
            out.append(Parse(w, distances_to_tree(w, d[layer - 1], tree_rule),
                             d[layer - 1].tolist(), d.tolist()))
            continue
        f, b = next(boundaries)
        scores = split_scores(f, b, layer)
        out.append(Parse(
            w, distances_to_tree(w, scores, tree_rule), scores.tolist(),
            [] if f is None else f[:, :-1].tolist(),
            [] if b is None else b[:, 1:].tolist()))
    return out


def evaluate_treebank(treebank, model=None, baseline=None, layer=None,
                      max_length=None, nltk_data=None, seed=0,
                      to_simplified=None, tree_rule=None, *,
                      split=None, fileids=None, progress=False,
                      direction=None, backward_model=None, half=None):
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
        layer: Layer number from 1, `"mean"` (the mean over layers, see
            `parsing.scores`), `"all"` (each layer in turn), or `None` for
            the run's recorded default, else the middle one.
        max_length: Keep sentences of at most this many words (10: WSJ10).
        nltk_data: Folder holding `corpora/treebank` or
            `corpora/sinica_treebank`; default nltk's data path.
        seed: Seed of the random baseline.
        to_simplified: Convert Sinica's traditional characters to
            simplified; default: when the model was trained on simplified
            text (`run.json` `script`).
        tree_rule: `"official"` or `"plain"` tree building; default the
            run's recorded default, else `"official"`.
        split: Deprecated name of `tree_rule`.
        fileids: PTB only: a file id or a list of them (e.g.
            `"wsj_2300.mrg"` for section 23 of a full WSJ); default all.
            Not with `half`.
        progress: Show a progress bar on stderr while the model reads the
            sentences.
        direction: `"forward"`, `"backward"` or `"both"` (see `parse`);
            default the run's recorded default, else the model's own
            direction.
        backward_model: The backward model's run (a directory or a
            `LoadedRun`) for `"both"` or `"backward"`; default
            `<model>/backward` when `model` is a directory holding one.
        half: `"dev"` or `"test"`, one of the sample's two fixed halves:
            for Sinica by sentence position (see `load_sinica`), for the
            PTB by file (see `load_ptb`); default the whole sample.

    As in `parse`, a model run's recorded default (`run.json`
    `parse_default`) fills each of `direction`, `layer` and `tree_rule`
    not given.

    Returns:
        A dict with `treebank`, `max_length`, `sentences` (scored),
        `skipped` (fewer than two words), `sentence_f1` and `corpus_f1`
        (percent) and the `layer` or `baseline`; for `layer="all"`, a
        `per_layer` list instead; `fileids` when given; `direction`
        unless the trees come from one layer of a forward model.
    """
    from on_lstm_keras import parsing
    from on_lstm_keras.parsing.treebanks import half_arg

    if split is not None:
        tree_rule = tree_rule_arg(tree_rule or "official", split)
    if model is not None and baseline is None:
        direction, layer, tree_rule = with_parse_default(
            model, direction, layer, tree_rule)
    tree_rule = tree_rule_arg(tree_rule or "official")
    treebank = check.choice("treebank", treebank, ("ptb", "sinica"))
    half = half_arg(half)
    if (model is None) == (baseline is None):
        raise ValueError("Give exactly one of `model` and `baseline`, "
                         f"received: model={model!r}, baseline={baseline!r}")
    if fileids is not None and treebank != "ptb":
        raise ValueError(
            "Argument `fileids` selects files of the Penn Treebank "
            f"(treebank='ptb'); the Sinica sample is one file, received: "
            f"fileids={fileids!r} with treebank={treebank!r}")
    if baseline is not None:
        check.choice("baseline", baseline, parsing.BASELINES)
    from on_lstm_keras.parsing.scores import direction_arg

    if direction is not None:
        direction = direction_arg(direction)
    if backward_model is not None and model is None:
        raise ValueError(
            "Argument `backward_model` goes with `model`, received: "
            f"backward_model={backward_model!r} with baseline={baseline!r}")
    if model is not None:
        # Keras starts here, and only for a model.
        from on_lstm_keras.models.saving import load_run
        from on_lstm_keras.parsing.model_parser import check_layer
        from on_lstm_keras.parsing.model_parser import model_direction
        from on_lstm_keras.parsing.model_parser import reading_models
        from on_lstm_keras.parsing.model_parser import sentence_distances

        backward_model = backward_of(model, backward_model, direction)
        if isinstance(model, str):
            model = load_run(model)
        if direction is None:
            direction = model_direction(model.model)
        # Before the treebank is read and scored.
        forward_net, backward_net = reading_models(
            direction, model.model,
            None if backward_model is None else backward_model.model)
        for net in (forward_net, backward_net):
            if net is not None and layer != "all":
                check_layer(layer, len(net.rnn_layers), mean=True)
    old_path = direction in (None, "forward") and layer != "mean"
    if model is not None and layer != "all" and old_path:
        layer = check_layer(layer, len(model.model.rnn_layers))
    if to_simplified is None:
        to_simplified = bool(model and model.info.get("script") == "simplified")
    if treebank == "ptb":
        gold = parsing.load_ptb(nltk_data=nltk_data, max_length=max_length,
                                fileids=fileids, half=half)
    else:
        gold = parsing.load_sinica(nltk_data=nltk_data, max_length=max_length,
                                   to_simplified=to_simplified, half=half)
    scored = [g for g in gold if len(g.words) >= 2]
    result = {"treebank": treebank, "max_length": max_length,
              "sentences": len(scored), "skipped": len(gold) - len(scored)}
    if half is not None:
        result["half"] = half
    if tree_rule != "official":
        result["tree_rule"] = tree_rule
    if fileids is not None:
        result["fileids"] = [fileids] if isinstance(fileids, str) else list(fileids)

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

    words = [g.words for g in scored]
    if old_path:
        num_layers = len(model.model.rnn_layers)
        distances = (sentence_distances(model.model, model.vocab, words,
                                        progress=progress) if words else [])
    else:
        from on_lstm_keras.parsing.scores import split_scores

        result["direction"] = direction
        num_layers = min(len(net.rnn_layers)
                         for net in (forward_net, backward_net) if net is not None)
        boundaries = (_read(model, backward_model, direction, words,
                            None if layer == "all" else layer, progress)
                      if words else [])
    vocab = model.vocab if forward_net is not None else (
        backward_model or model).vocab
    unknown = sum(w not in vocab for s in words for w in s)
    result["unknown_word_rate"] = unknown / max(1, sum(len(s) for s in words))

    def trees_of(k):
        if old_path:
            return [distances_to_tree(w, d[k - 1], tree_rule)
                    for w, d in zip(words, distances)]
        return [distances_to_tree(w, split_scores(f, b, k), tree_rule)
                for w, (f, b) in zip(words, boundaries)]

    if layer == "all":
        result["per_layer"] = [
            {"layer": k, **score(trees_of(k))} for k in range(1, num_layers + 1)
        ]
    else:
        result.update(layer=layer, **score(trees_of(layer)))
    return result


PARSE_DEFAULT = "parse_default"
"""The `run.json` field holding the run's chosen parse settings
(`record_parse_default`): `direction`, `layer`, `tree_rule`, `chosen_on`,
and the score they were chosen by."""

GRID_TREE_RULES = ("official", "plain")


def saved_parse_default(run):
    """The parse settings recorded in a run (`run.json` `parse_default`),
    or `None`.

    Args:
        run: A model directory or a `LoadedRun`.
    """
    if isinstance(run, str):
        from on_lstm_keras.models.saving import read_run_info

        info = read_run_info(run)
    else:
        info = run.info or {}
    return info.get(PARSE_DEFAULT)


def with_parse_default(run, direction=None, layer=None, tree_rule=None):
    """`(direction, layer, tree_rule)` with each one not given (`None`)
    taken from the run's recorded default (`saved_parse_default`), if it
    has one; explicit values win. `tree_rule` falls back to `"official"`;
    `direction` and `layer` stay `None` (the model's own direction, the
    middle layer) when the run records no default."""
    saved = saved_parse_default(run) or {}
    if direction is None:
        direction = saved.get("direction")
    if layer is None:
        layer = saved.get("layer")
    if tree_rule is None:
        tree_rule = saved.get("tree_rule", "official")
    return direction, layer, tree_rule


def choose_default(cells, half="dev", metric="sentence_f1"):
    """The best parse settings of a table: the cell of `half` with the
    highest `metric`; on a tie, the first such cell in `cells`' order.

    Args:
        cells: Dicts with `direction`, `layer`, `tree_rule`, `half` and
            the metric (the `cells` of `evaluate_settings`).
        half: The half the choice is made on (`"dev"`); only its cells are
            looked at.
        metric: `"sentence_f1"` or `"corpus_f1"`.

    Returns:
        A dict: `direction`, `layer`, `tree_rule`, `metric`, and the
        metric's value (e.g. `sentence_f1`).

    Raises:
        ValueError: No cell of `half`.

    Example:

    >>> choose_default([
    ...     {"direction": "forward", "layer": 1, "tree_rule": "official",
    ...      "half": "dev", "sentence_f1": 20.0},
    ...     {"direction": "both", "layer": "mean", "tree_rule": "plain",
    ...      "half": "dev", "sentence_f1": 25.0},
    ...     {"direction": "both", "layer": 2, "tree_rule": "plain",
    ...      "half": "test", "sentence_f1": 30.0}])
    {'direction': 'both', 'layer': 'mean', 'tree_rule': 'plain', 'metric': 'sentence_f1', 'sentence_f1': 25.0}
    """
    check.choice("metric", metric, ("sentence_f1", "corpus_f1"))
    candidates = [c for c in cells if c.get("half") == half]
    if not candidates:
        raise ValueError(
            f"Argument `cells` holds no cell of half={half!r} to choose on")
    best = candidates[0]
    for cell in candidates[1:]:
        if cell[metric] > best[metric]:
            best = cell
    return {"direction": best["direction"], "layer": best["layer"],
            "tree_rule": best["tree_rule"], "metric": metric,
            metric: best[metric]}


def _gold_of(treebank, half, nltk_data, max_length, to_simplified):
    from on_lstm_keras import parsing
    from on_lstm_keras.parsing.treebanks import half_arg

    half = half_arg(half)
    if treebank == "ptb":
        return parsing.load_ptb(nltk_data=nltk_data, max_length=max_length,
                                half=half)
    return parsing.load_sinica(nltk_data=nltk_data, max_length=max_length,
                               to_simplified=to_simplified, half=half)


def evaluate_settings(model, treebank="sinica", backward_model=None,
                      halves=("dev", "test"), directions=None, layers=None,
                      tree_rules=GRID_TREE_RULES, nltk_data=None,
                      max_length=None, to_simplified=None, seed=0,
                      progress=False):
    """Sentence and corpus F1 of every parse setting (direction × layer ×
    tree rule) on each half of a treebank, beside the four baselines.

    Each model reads every sentence once; the settings are scored from
    those readings.

    Args:
        model: The forward run (a directory or a `LoadedRun`).
        treebank: `"sinica"` or `"ptb"`.
        backward_model: The backward run; default `<model>/backward` when
            `model` is a directory holding one. Without one only the
            forward settings are scored.
        halves: Which parts to score: `"dev"`, `"test"` (the two halves of
            the sample: Sinica's by sentence position, see `load_sinica`;
            the PTB's by file, see `load_ptb`) or `None` (the whole
            treebank).
        directions: Default: forward, backward and both (those the models
            allow).
        layers: Default: every layer number, then `"mean"`.
        tree_rules: Default: `"official"` and `"plain"`.
        nltk_data, max_length, to_simplified, seed, progress: As for
            `evaluate_treebank`.

    Returns:
        A dict: `treebank`; `halves`, for each half (`"all"` for `None`)
        the number of `sentences` scored and `skipped`; `cells`, one dict
        per setting and half (`direction`, `layer`, `tree_rule`, `half`,
        `sentence_f1`, `corpus_f1`); `baselines`, one per baseline and half
        (`baseline`, `half`, `sentence_f1`, `corpus_f1`); and
        `unknown_word_rate`.
    """
    from on_lstm_keras import parsing
    from on_lstm_keras.parsing.scores import direction_arg
    from on_lstm_keras.parsing.scores import split_scores

    treebank = check.choice("treebank", treebank, ("ptb", "sinica"))
    rules = [tree_rule_arg(r) for r in tree_rules]
    backward = backward_of(model, backward_model, "both")
    run = _load(model)
    if directions is None:
        directions = (("forward", "backward", "both") if backward is not None
                      else ("forward",))
    directions = [direction_arg(d) for d in directions]
    needs_backward = any(d != "forward" for d in directions)
    if needs_backward and backward is None:
        raise ValueError(
            f"Argument `directions` {directions!r} needs a backward model: "
            "give `backward_model`, or train one into <model>/backward")
    num_layers = len(run.model.rnn_layers)
    if layers is None:
        layers = [*range(1, num_layers + 1), "mean"]
    if to_simplified is None:
        to_simplified = run.info.get("script") == "simplified"
    read = {h: _gold_of(treebank, h, nltk_data, max_length, to_simplified)
            for h in halves}
    golds = {h: [g for g in read[h] if len(g.words) >= 2] for h in halves}
    skipped = {h: len(read[h]) - len(golds[h]) for h in halves}
    words = [g.words for h in halves for g in golds[h]]
    readings = _read(run, backward if needs_backward else None,
                     "both" if needs_backward else "forward",
                     words, None, progress) if words else []
    readings = iter(readings)
    per_half = {h: [next(readings) for _ in golds[h]] for h in halves}

    def name(h):
        return "all" if h is None else h

    def score(trees, gold):
        m = parsing.evaluate(zip(trees, (g.tree for g in gold)))
        return {"sentence_f1": m["sentence_f1"], "corpus_f1": m["corpus_f1"]}

    cells, baselines = [], []
    for h in halves:
        gold = golds[h]
        for direction in directions:
            for layer in layers:
                scores = [split_scores(None if direction == "backward" else f,
                                       None if direction == "forward" else b,
                                       layer)
                          for f, b in per_half[h]]
                for rule in rules:
                    trees = [distances_to_tree(g.words, s, rule)
                             for g, s in zip(gold, scores)]
                    cells.append({"direction": direction, "layer": layer,
                                  "tree_rule": rule, "half": name(h),
                                  **score(trees, gold)})
        rng = np.random.default_rng(seed)
        for baseline in parsing.BASELINES:
            trees = [parsing.baseline_tree(baseline, g.words, rng=rng)
                     for g in gold]
            baselines.append({"baseline": baseline, "half": name(h),
                              **score(trees, gold)})
    unknown = sum(w not in run.vocab for s in words for w in s)
    return {
        "treebank": treebank, "seed": seed,
        "halves": {name(h): {"sentences": len(golds[h]),
                             "skipped": skipped[h]} for h in halves},
        "cells": cells, "baselines": baselines,
        "unknown_word_rate": unknown / max(1, sum(len(s) for s in words)),
    }


def record_parse_default(run_dir, choice, chosen_on):
    """Records parse settings as the run's default (`run.json`
    `parse_default`), which `parse` and `evaluate_treebank` (and the
    `parse` and `evaluate` commands) use for every setting not given.

    Args:
        run_dir: The forward run's directory.
        choice: A dict with `direction`, `layer`, `tree_rule` (as
            `choose_default` returns), and the score it was chosen by.
        chosen_on: What the choice was made on, e.g. `"sinica dev half"`.

    Returns:
        `run.json` as a dict.
    """
    from on_lstm_keras.models.saving import read_run_info
    from on_lstm_keras.models.saving import update_run_info
    from on_lstm_keras.parsing.scores import direction_arg

    if not read_run_info(run_dir).get("model"):
        raise FileNotFoundError(f"{run_dir} holds no run (no run.json)")
    direction_arg(choice["direction"])
    tree_rule_arg(choice["tree_rule"])
    if choice["layer"] != "mean":
        check.positive_int("layer", choice["layer"])
    return update_run_info(run_dir, **{PARSE_DEFAULT: {
        **choice, "chosen_on": chosen_on}})


def choose_parse_default(run_dir, treebank="sinica", nltk_data=None,
                         backward_model=None, metric="sentence_f1",
                         progress=False, **settings):
    """Scores every parse setting on the dev half of the Sinica or the PTB
    sample, records the best as the run's default (`record_parse_default`)
    and returns it with the full table.

    Args:
        run_dir: The forward run's directory.
        treebank: `"sinica"` or `"ptb"`: chosen on the sample's dev half
            (Sinica's split by sentence, the PTB's by file, see
            `load_sinica` and `load_ptb`); the test half is scored too,
            held out.
        nltk_data, backward_model, progress, **settings: As for
            `evaluate_settings` (e.g. `max_length=10` for the WSJ10-style
            sentences; the PTB choice records it in `chosen_on`).
        metric: What the choice maximises: `"sentence_f1"` or
            `"corpus_f1"`.

    Returns:
        `(choice, table)`: the recorded default and `evaluate_settings`'
        result.
    """
    treebank = check.choice("treebank", treebank, ("ptb", "sinica"))
    table = evaluate_settings(run_dir, treebank, backward_model=backward_model,
                              halves=("dev", "test"), nltk_data=nltk_data,
                              progress=progress, **settings)
    choice = choose_default(table["cells"], "dev", metric)
    chosen_on = f"{treebank} dev half"
    if treebank == "ptb" and settings.get("max_length") is not None:
        chosen_on += f", sentences of at most {settings['max_length']} words"
    record_parse_default(run_dir, choice, chosen_on)
    return {**choice, "chosen_on": chosen_on}, table
