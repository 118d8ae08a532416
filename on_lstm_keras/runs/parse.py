"""Trees of raw sentences from a trained run (`parse`)."""

import os

from on_lstm_keras.data.tokenizers import WhitespaceTokenizer
from on_lstm_keras.models.saving import has_run
from on_lstm_keras.models.saving import read_run_info
from on_lstm_keras.parsing.model_parser import directional_boundaries
from on_lstm_keras.parsing.model_parser import model_direction
from on_lstm_keras.parsing.model_parser import reading_models
from on_lstm_keras.parsing.model_parser import sentence_distances
from on_lstm_keras.parsing.parse import Parse
from on_lstm_keras.parsing.scores import check_layer
from on_lstm_keras.parsing.scores import default_layer
from on_lstm_keras.parsing.scores import reading_arg
from on_lstm_keras.parsing.scores import split_scores
from on_lstm_keras.parsing.trees import distances_to_tree
from on_lstm_keras.parsing.trees import tree_rule_arg
from on_lstm_keras.runs.defaults import loaded
from on_lstm_keras.runs.defaults import with_saved_reading
from on_lstm_keras.runs.layout import BACKWARD_DIR


def backward_of(run, backward, reading):
    """The backward run `reading` needs: `backward` (a directory or a
    `LoadedRun`), else `<run>/backward` when `run` is a directory that holds
    one, else `None`."""
    if backward is not None:
        return loaded(backward)
    if reading in ("backward", "both") and isinstance(run, str):
        candidate = os.path.join(run, BACKWARD_DIR)
        if has_run(candidate):
            return loaded(candidate)
    return None


def lstm_has_no_backward(run):
    """A sentence to add to a "needs a backward model" message when `run`
    (a directory or a `LoadedRun`) is a forward LSTM run, which has none:
    `--with-lstm` trains the LSTM in the main run's direction only. Empty
    for any other run."""
    info = read_run_info(run) if isinstance(run, str) else (run.info or {})
    model = info.get("model") or {}
    if model.get("recurrent") != "lstm" or model.get("direction") == "backward":
        return ""
    return (" An LSTM run has no backward model: training with --with-lstm "
            "trains the LSTM in the main run's direction only, so only its "
            "forward reading exists.")


def mirror_reading(reading):
    """The reading of the original sentences that `reading` of the mirrored
    ones is: the mirrored language's forward model is the run's backward
    one (trained on reversed sentences, it reads a mirrored sentence left
    to right) and its backward model the run's forward one, so `"forward"`
    and `"backward"` swap; `"both"` (and `None`) stay.

    Example:

    >>> mirror_reading("forward"), mirror_reading("both")
    ('backward', 'both')
    """
    return {"forward": "backward", "backward": "forward"}.get(reading,
                                                              reading)


def read_boundaries(run, backward, reading, words, layer, progress,
                    mirrored=False):
    """`(forward, backward)` boundary distances of each of the non-empty
    word lists `words` (`model_parser.directional_boundaries`), once the
    models are checked against `reading` and `layer`.

    With `mirrored=True`, `words` are mirrored sentences and `reading` and
    the pair returned name the mirrored language's models (see
    `mirror_reading`). Its forward model reading a mirrored sentence left
    to right is the run's backward model reading the original sentence in
    its own direction: the same words in the same order. So the original
    sentences are read with the original reading, and each model's
    boundaries come back mirrored (boundary `j` of an `n`-word mirrored
    sentence is boundary `n - j` of the original) in the other model's
    place. This is the one place where the mirror swaps the models.
    """
    if mirrored:
        pairs = read_boundaries(run, backward, mirror_reading(reading),
                                [list(w)[::-1] for w in words], layer,
                                progress)
        return [(None if b is None else b[:, ::-1],
                 None if f is None else f[:, ::-1]) for f, b in pairs]
    forward_model, backward_model = reading_models(
        reading, run.model, None if backward is None else backward.model)
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


def _words(run, sentences, presegmented):
    tokenizer = run.tokenizer or WhitespaceTokenizer()
    if presegmented:
        tokenizer = WhitespaceTokenizer(lowercase=bool(
            run.tokenizer and run.tokenizer.get_config().get("lowercase")))
    return [s if isinstance(s, list) else tokenizer(s) for s in sentences]


def _one_layer_parses(run, words, layer, tree_rule, progress):
    """Parses from one layer of a forward model: its `d_f` as it is."""
    reading_models("forward", run.model)
    nonempty = [w for w in words if w]
    distances = iter(sentence_distances(run.model, run.vocab, nonempty,
                                        progress=progress)
                     if nonempty else [])
    out = []
    for w in words:
        if not w:
            out.append(Parse([], None, [], reading="forward", layer=layer))
            continue
        d = next(distances)
        out.append(Parse(w, distances_to_tree(w, d[layer - 1], tree_rule),
                         d[layer - 1].tolist(), d.tolist(),
                         reading="forward", layer=layer))
    return out


def _split_score_parses(run, backward, reading, words, layer, tree_rule,
                        progress):
    """Parses from the split scores of `reading` (`parsing.scores`)."""
    nonempty = [w for w in words if w]
    boundaries = iter(read_boundaries(run, backward, reading, nonempty, layer,
                                      progress) if nonempty else [])
    if layer is None:
        read = run if reading != "backward" or backward is None else backward
        layer = default_layer(len(read.model.rnn_layers))
    out = []
    for w in words:
        if not w:
            out.append(Parse([], None, [], reading=reading, layer=layer))
            continue
        f, b = next(boundaries)
        scores = split_scores(f, b, layer)
        out.append(Parse(
            w, distances_to_tree(w, scores, tree_rule), scores.tolist(),
            [] if f is None else f[:, :-1].tolist(),
            [] if b is None else b[:, 1:].tolist(),
            reading=reading, layer=layer))
    return out


def parse(run, sentences, *, reading=None, layer=None, tree_rule=None,
          presegmented=False, backward_run=None, progress=False):
    """Parses sentences with a trained model.

    Args:
        run: A model directory or a `LoadedRun`.
        sentences: Strings; segmented with the run's tokenizer (jieba for a
            Chinese model), or split on whitespace with `presegmented=True`.
            Lists of words are taken as they are.
        reading: Where the split scores come from: `"forward"`,
            `"backward"` (a model of reversed sentences) or `"both"` (the
            two combined, see `parsing.scores`); default the run's recorded
            default, else its own direction (forward for every run that
            records none).
        layer: Layer number from 1 (default: the run's recorded default,
            else the middle one), or `"mean"` (the mean over layers, see
            `parsing.scores`).
        tree_rule: `"official"` or `"plain"` (see `distances_to_tree`);
            default: the run's recorded default, else `"official"`.
        presegmented: Split strings on whitespace instead of tokenizing.
        backward_run: The backward model's run (a directory or a
            `LoadedRun`) for `"both"` or `"backward"`; default the run in
            `<run>/backward` when `run` is a directory holding one. The
            sentences are segmented with `run`'s tokenizer.
        progress: Show a progress bar on stderr (see `sentence_distances`).

    A run's recorded default (`run.json` `default_reading`, see
    `choose_reading`) fills each of `reading`, `layer` and `tree_rule` not
    given; the ones given win.

    Returns:
        A list of `parsing.Parse`, in input order; an empty sentence gives
        a `Parse` with no words and tree `None`.
    """
    reading, layer, tree_rule = with_saved_reading(
        run, reading, layer, tree_rule)
    tree_rule = tree_rule_arg(tree_rule)
    if reading is not None:
        reading = reading_arg(reading)
    backward = backward_of(run, backward_run, reading)
    run = loaded(run)
    if reading is None:
        reading = model_direction(run.model)
    words = _words(run, sentences, presegmented)
    if reading == "forward" and layer != "mean":
        layer = check_layer(layer, len(run.model.rnn_layers))
        return _one_layer_parses(run, words, layer, tree_rule, progress)
    return _split_score_parses(run, backward, reading, words, layer,
                               tree_rule, progress)
