"""Parsing and scoring with a trained run (a model directory).

`parse` gives trees of raw sentences; `evaluate_treebank` scores a model's
trees, or a baseline's, against a gold treebank. Keras starts only when a
model is loaded, so scoring a baseline stays fast.
"""

import dataclasses

import numpy as np

from on_lstm_keras import _validation as check
from on_lstm_keras.parsing.trees import distances_to_tree
from on_lstm_keras.parsing.trees import tree_rule_arg


@dataclasses.dataclass
class Parse:
    """One parsed sentence.

    Attributes:
        words: The sentence's words.
        tree: Its nested-list tree (`None` for an empty sentence).
        distances: `d_f` of the chosen layer, one per word.
        layer_distances: `d_f` of every layer, one list per layer (the
            first is layer 1), one number per word.
    """

    words: list
    tree: object
    distances: list
    layer_distances: list = dataclasses.field(default_factory=list)


def parse(run, sentences, layer=None, presegmented=False, tree_rule="official",
          *, split=None, progress=False):
    """Parses sentences with a trained model.

    Args:
        run: A model directory or a `LoadedRun`.
        sentences: Strings; segmented with the run's tokenizer (jieba for a
            Chinese model), or split on whitespace with `presegmented=True`.
            Lists of words are taken as they are.
        layer: Layer number from 1; default the middle one.
        presegmented: Split strings on whitespace instead of tokenizing.
        tree_rule: `"official"` or `"plain"` (see `distances_to_tree`).
        split: Deprecated name of `tree_rule`.
        progress: Show a progress bar on stderr (see `sentence_distances`).

    Returns:
        A list of `Parse`, in input order; an empty sentence gives a
        `Parse` with no words and tree `None`.
    """
    from on_lstm_keras.data.tokenizers import WhitespaceTokenizer
    from on_lstm_keras.models.saving import load_run
    from on_lstm_keras.parsing.model_parser import check_layer
    from on_lstm_keras.parsing.model_parser import sentence_distances

    tree_rule = tree_rule_arg(tree_rule, split)
    if isinstance(run, str):
        run = load_run(run)
    layer = check_layer(layer, len(run.model.rnn_layers))
    tokenizer = run.tokenizer or WhitespaceTokenizer()
    if presegmented:
        tokenizer = WhitespaceTokenizer(
            lowercase=bool((run.tokenizer and run.tokenizer.get_config().get("lowercase")))
        )
    words = [s if isinstance(s, list) else tokenizer(s) for s in sentences]
    nonempty = [w for w in words if w]
    distances = iter(sentence_distances(run.model, run.vocab, nonempty,
                                        progress=progress)
                     if nonempty else [])
    out = []
    for w in words:
        if not w:
            out.append(Parse([], None, []))
            continue
        d = next(distances)
        out.append(Parse(w, distances_to_tree(w, d[layer - 1], tree_rule),
                         d[layer - 1].tolist(), d.tolist()))
    return out


def evaluate_treebank(treebank, model=None, baseline=None, layer=None,
                      max_length=None, nltk_data=None, seed=0,
                      to_simplified=None, tree_rule="official", *,
                      split=None, fileids=None, progress=False):
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
        layer: Layer number from 1, `"all"`, or `None` for the middle one.
        max_length: Keep sentences of at most this many words (10: WSJ10).
        nltk_data: Folder holding `corpora/treebank` or
            `corpora/sinica_treebank`; default nltk's data path.
        seed: Seed of the random baseline.
        to_simplified: Convert Sinica's traditional characters to
            simplified; default: when the model was trained on simplified
            text (`run.json` `script`).
        tree_rule: `"official"` or `"plain"` tree building.
        split: Deprecated name of `tree_rule`.
        fileids: PTB only: a file id or a list of them (e.g.
            `"wsj_2300.mrg"` for section 23 of a full WSJ); default all.
        progress: Show a progress bar on stderr while the model reads the
            sentences.

    Returns:
        A dict with `treebank`, `max_length`, `sentences` (scored),
        `skipped` (fewer than two words), `sentence_f1` and `corpus_f1`
        (percent) and the `layer` or `baseline`; for `layer="all"`, a
        `per_layer` list instead; `fileids` when given.
    """
    from on_lstm_keras import parsing

    tree_rule = tree_rule_arg(tree_rule, split)
    treebank = check.choice("treebank", treebank, ("ptb", "sinica"))
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
    if model is not None:
        # Keras starts here, and only for a model.
        from on_lstm_keras.models.saving import load_run
        from on_lstm_keras.parsing.model_parser import check_layer
        from on_lstm_keras.parsing.model_parser import sentence_distances

        if isinstance(model, str):
            model = load_run(model)
    if model is not None and layer != "all":
        # Before the treebank is read and scored.
        layer = check_layer(layer, len(model.model.rnn_layers))
    if to_simplified is None:
        to_simplified = bool(model and model.info.get("script") == "simplified")
    if treebank == "ptb":
        gold = parsing.load_ptb(nltk_data=nltk_data, max_length=max_length,
                                fileids=fileids)
    else:
        gold = parsing.load_sinica(nltk_data=nltk_data, max_length=max_length,
                                   to_simplified=to_simplified)
    scored = [g for g in gold if len(g.words) >= 2]
    result = {"treebank": treebank, "max_length": max_length,
              "sentences": len(scored), "skipped": len(gold) - len(scored)}
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

    num_layers = len(model.model.rnn_layers)
    words = [g.words for g in scored]
    distances = (sentence_distances(model.model, model.vocab, words,
                                    progress=progress) if words else [])
    unknown = sum(w not in model.vocab for s in words for w in s)
    result["unknown_word_rate"] = unknown / max(1, sum(len(s) for s in words))

    def trees_of(k):
        return [distances_to_tree(w, d[k - 1], tree_rule)
                for w, d in zip(words, distances)]

    if layer == "all":
        result["per_layer"] = [
            {"layer": k, **score(trees_of(k))} for k in range(1, num_layers + 1)
        ]
    else:
        result.update(layer=layer, **score(trees_of(layer)))
    return result
