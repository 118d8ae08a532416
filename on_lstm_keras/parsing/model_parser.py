"""Trees from a trained language model's master-forget distances.

As in the paper: each sentence is read from a zero state, wrapped in the
boundary token the model saw between sentences (`<eos> w_1 … w_n <eos>`);
the distances `d_f` of one layer at the words (boundaries trimmed) go to
the greedy top-down split.
"""

import functools

import keras
import numpy as np

from on_lstm_keras.ops import DISTANCE_FORGET
from on_lstm_keras.parsing.scores import check_layer
from on_lstm_keras.parsing.scores import reading_arg
from on_lstm_keras.parsing.scores import split_scores
from on_lstm_keras.parsing.trees import distances_to_tree
from on_lstm_keras.parsing.trees import tree_rule_arg
from on_lstm_keras.utils import validation as check
from on_lstm_keras.utils.extras import progress_bar


def model_direction(model):
    """The reading direction a model records (`"forward"` when it records
    none, as models made before the field do)."""
    return getattr(model, "direction", None) or "forward"


# Reading at least this many buckets goes through a compiled function
# (`_compiled_distances`); fewer are read eagerly, where compiling would cost
# more than it saves.
COMPILE_FROM_BUCKETS = 2
# A compiled reading pads each bucket's width to a multiple of this, so
# that a backend that compiles once per input shape (JAX) compiles a few
# widths rather than one per sentence length. Padding is masked.
COMPILED_WIDTH_QUANTUM = 8
# The compiled readers of this many models read last are kept, so that
# reading a model again (the other half of a treebank, its mirror, the
# next epoch's check) runs the function already compiled instead of
# compiling it again; each reader holds its model, hence the bound.
COMPILED_READERS = 4


@functools.lru_cache(maxsize=COMPILED_READERS)
def _compiled_distances(language_model):
    """`language_model.distances(tokens)` behind Keras' compiled
    `predict_on_batch` (a `tf.function` on TensorFlow, `jax.jit` on JAX),
    so that the recurrent loops run as one graph instead of op by op from
    Python. Kept for the last `COMPILED_READERS` models read, here rather
    than on the model, where it would be saved with it; it reads the
    model's variables at every call, so new weights are read as they are."""
    class CompiledDistances(keras.Model):
        def __init__(self, model):
            super().__init__()
            self.language_model = model

        def build(self, input_shape):
            # Nothing of its own; the model is built before (see
            # `_distance_reader`; Keras' default `build` would warn of
            # unbuilt state).
            pass

        def call(self, tokens):
            return self.language_model.distances(tokens)

    return CompiledDistances(language_model).predict_on_batch


def _distance_reader(model, buckets):
    """`(read, quantum)`: `read(tokens)` gives the `(batch, layers, time,
    2)` distances, and bucket widths are padded to a multiple of
    `quantum`. A model with a `distances` method (`ONLSTMLanguageModel`)
    is read through a compiled function when there are at least
    `COMPILE_FROM_BUCKETS` buckets, else eagerly; any other model is
    called as `model(tokens, training=False, return_distances=True)`."""
    distances = getattr(model, "distances", None)
    if not callable(distances):
        def call(tokens):
            return model(tokens, training=False, return_distances=True)[1]

        return call, 1
    if not getattr(model, "built", True):
        # Built by a call: reading through `distances` alone would leave
        # the model unbuilt, and Keras would then rebuild the compiled
        # wrapper's state on every call.
        model(np.ones((1, 1), dtype="int32"))
    if buckets >= COMPILE_FROM_BUCKETS:
        return _compiled_distances(model), COMPILED_WIDTH_QUANTUM
    return distances, 1


def _readings(model, vocab, sentences, batch_size, progress):
    """`d_f` of every layer at every step after the opening `<eos>`, in the
    model's reading order: one `(layers, n + 1)` array per sentence, the
    last column being the closing `<eos>`. A backward model reads each
    sentence reversed."""
    batch_size = check.positive_int("batch_size", batch_size)
    lengths = np.array([len(s) for s in sentences], dtype=np.int64)
    if len(lengths) and lengths.min() < 1:
        empty = int(np.argmin(lengths))
        raise ValueError(
            "Argument `sentences` must hold non-empty word lists, received: "
            f"sentences[{empty}]={sentences[empty]!r}")
    if model_direction(model) == "backward":
        sentences = [list(s)[::-1] for s in sentences]
    ids = np.asarray(vocab.encode([w for s in sentences for w in s]),
                     dtype="int32")
    starts = np.concatenate([[0], np.cumsum(lengths)])
    order = np.argsort(lengths, kind="stable")
    results = [None] * len(sentences)
    read, quantum = _distance_reader(model, -(-len(order) // batch_size))
    with progress_bar(len(sentences), "parsing", enabled=progress) as bar:
        for first in range(0, len(order), batch_size):
            rows = order[first:first + batch_size]
            n = lengths[rows]
            width = -(-(int(n.max()) + 2) // quantum) * quantum
            # <eos> w_1 .. w_n <eos>, then <pad> (0) to the bucket's width.
            column = np.arange(width)[None, :]
            words_at = (column >= 1) & (column <= n[:, None])
            where = starts[rows][:, None] + column - 1
            tokens = np.where(words_at, ids[np.where(words_at, where, 0)], 0)
            tokens[(column == 0) | (column == n[:, None] + 1)] = vocab.eos_id
            if quantum > 1 and len(rows) < batch_size:
                # A compiled reading's last bucket, filled up with copies
                # of its rows (their readings are dropped): every call of
                # the compiled reader has the same batch size, so none
                # compiles for a new one.
                tokens = tokens[np.arange(batch_size) % len(rows)]
            distances = read(tokens.astype("int32"))
            d_f = keras.ops.convert_to_numpy(distances)[..., DISTANCE_FORGET]
            d_f = d_f[:, :, 1:].astype(np.float64)
            for k, row in enumerate(rows):
                results[row] = d_f[k, :, : n[k] + 1]
            bar.update(len(rows))
    return results


def sentence_distances(model, vocab, sentences, batch_size=64,
                       progress=False):
    """Master-forget distances of every layer at every word.

    The sentences are sorted by length and read in buckets of `batch_size`
    sentences of about the same length, one model call per bucket, each
    right-padded (and masked) to its longest sentence only; the results
    come back in input order. Padding and masking give the same distances
    as reading each sentence on its own. From two buckets on, an
    `ONLSTMLanguageModel` is read through its `distances` method (no
    output layer) compiled by Keras' `predict_on_batch`, with each
    bucket's width padded up to a multiple of 8 so that JAX compiles a
    few shapes only; a single bucket is read eagerly.

    A backward model (`direction="backward"`, trained on reversed
    sentences) reads each sentence reversed, framed the same way
    (`<eos> w_n … w_1 <eos>`), and its distances come back flipped to
    input order: column `i` is always word `i`. A forward model's `d_f` at
    word `i` scores the boundary before it (between `w_(i-1)` and `w_i`), a
    backward model's the boundary after it (see `boundary_distances`).

    Args:
        model: A language model called as `model(tokens,
            return_distances=True)` returning `(logits, distances)` with
            distances `(batch, layers, time, 2)` (`ONLSTMLanguageModel`,
            not stateful); column `DISTANCE_FORGET` is `d_f`. Its
            `direction` attribute (default `"forward"`) says how it reads.
        vocab: The model's `Vocabulary`.
        sentences: Lists of words (already segmented), each non-empty.
        batch_size: Sentences per model call.
        progress: Show a progress bar on stderr (needs tqdm, and a
            terminal; silently off otherwise).

    Returns:
        One float64 array `(layers, len(sentence))` per sentence, in the
        order of `sentences`.
    """
    readings = _readings(model, vocab, sentences, batch_size, progress)
    if model_direction(model) == "backward":
        return [r[:, -2::-1] for r in readings]
    return [r[:, :-1] for r in readings]


def boundary_distances(model, vocab, sentences, batch_size=64,
                       progress=False):
    """Master-forget distances of every layer at every word boundary.

    Boundary `j` of an `n`-word sentence lies before word `j` (between
    `w_(j-1)` and `w_j`); boundary 0 is the sentence start and boundary `n`
    its end. A forward model reads boundary `j` at word `j` (and boundary
    `n` at the closing `<eos>`); a backward model reads it at word `j - 1`
    (and boundary 0 at the closing `<eos>` of the reversed sentence). Both
    come back boundary-indexed, so the two directions line up.

    Args:
        model, vocab, sentences, batch_size, progress: See
            `sentence_distances`.

    Returns:
        One float64 array `(layers, len(sentence) + 1)` per sentence, in
        the order of `sentences`.
    """
    readings = _readings(model, vocab, sentences, batch_size, progress)
    if model_direction(model) == "backward":
        return [r[:, ::-1] for r in readings]
    return list(readings)


def reading_models(reading, model, backward_model=None):
    """The forward and the backward model that `reading` reads with.

    Args:
        reading: `"forward"`, `"backward"`, `"both"`, or `None` for the
            model's own direction (`"forward"` for every model that
            records none).
        model: The model (forward, or backward for `reading="backward"`).
        backward_model: A backward model (`direction="backward"`), needed
            for `"both"`; for `"backward"` it is used in place of `model`.

    Returns:
        `(forward, backward)`, each a model or `None`.

    Raises:
        ValueError: naming the argument: an unknown reading, a model
            reading the wrong way, or no backward model where one is needed.
    """
    if reading is None:
        reading = model_direction(model)
    reading = reading_arg(reading)
    if backward_model is not None and model_direction(backward_model) != "backward":
        raise ValueError(
            "Argument `backward_model` must be a model of reversed sentences "
            "(direction='backward'), received one whose direction is "
            f"{model_direction(backward_model)!r}")
    if reading == "backward":
        if backward_model is not None:
            return None, backward_model
        if model_direction(model) == "backward":
            return None, model
        raise ValueError(
            "Argument `reading='backward'` needs a backward model: the "
            "model reads forward and no `backward_model` was given")
    if model_direction(model) != "forward":
        raise ValueError(
            f"Argument `reading={reading!r}` reads the model forward, but "
            "it is a model of reversed sentences (direction='backward'); use "
            "reading='backward'")
    if reading == "forward":
        return model, None
    if backward_model is None:
        raise ValueError(
            "Argument `reading='both'` needs a backward model as "
            "`backward_model`, received none")
    return model, backward_model


def directional_boundaries(sentences, forward=None, backward=None,
                           batch_size=64, progress=False):
    """`boundary_distances` of a forward and a backward model.

    Args:
        sentences: Lists of words, each non-empty.
        forward, backward: `(model, vocab)` pairs, or `None`.
        batch_size, progress: See `sentence_distances`.

    Returns:
        A list of `(forward_boundaries, backward_boundaries)` per sentence,
        `None` for a direction not read.
    """
    columns = []
    for pair in (forward, backward):
        if pair is None:
            columns.append([None] * len(sentences))
        else:
            columns.append(boundary_distances(pair[0], pair[1], sentences,
                                              batch_size, progress))
    return list(zip(*columns))


def parse_sentences(model, vocab, sentences, layer=None, tree_rule="official",
                    batch_size=64, *, reading=None, backward_model=None,
                    backward_vocab=None):
    """Unsupervised trees of `sentences` from one layer of `model`, or from
    the split scores of a backward model, or of both directions
    (`parsing.scores`).

    Args:
        model, vocab, sentences, batch_size: See `sentence_distances`.
        layer: Layer number from 1 (default: the middle one), or `"mean"`
            (the mean over layers of the per-sentence z-scored `d_f`).
        tree_rule: `"official"` or `"plain"` (see `distances_to_tree`).
        reading: `"forward"`, `"backward"` or `"both"`; default the
            model's own (see `reading_models`).
        backward_model: A backward model, for `"both"` (or `"backward"`).
        backward_vocab: Its vocabulary; default `vocab`.

    Returns:
        List of `(tree, scores)`: nested-list tree and the per-word scores
        it was built from (the layer's `d_f` for one forward layer, as
        before).
    """
    tree_rule = tree_rule_arg(tree_rule)
    forward, backward = reading_models(reading, model, backward_model)
    if backward is None and layer != "mean":
        layer = check_layer(layer, len(model.rnn_layers))
        out = []
        for words, distances in zip(
            sentences, sentence_distances(model, vocab, sentences, batch_size)
        ):
            d = distances[layer - 1]
            out.append((distances_to_tree(words, d, tree_rule), d))
        return out
    for m in (forward, backward):
        if m is not None:
            check_layer(layer, len(m.rnn_layers), mean=True)
    if backward is model:
        backward_vocab = vocab
    pairs = directional_boundaries(
        sentences,
        forward=None if forward is None else (forward, vocab),
        backward=None if backward is None else (
            backward, vocab if backward_vocab is None else backward_vocab),
        batch_size=batch_size)
    out = []
    for words, (f, b) in zip(sentences, pairs):
        d = split_scores(f, b, layer)
        out.append((distances_to_tree(words, d, tree_rule), d))
    return out
