"""Trees from a trained language model's master-forget distances.

As in the paper: each sentence is read from a zero state, wrapped in the
boundary token the model saw between sentences (`<eos> w_1 … w_n <eos>`);
the distances `d_f` of one layer at the words (boundaries trimmed) go to
the greedy top-down split.
"""

import numpy as np

from on_lstm_keras import _validation as check
from on_lstm_keras.parsing.trees import distances_to_tree
from on_lstm_keras.parsing.trees import tree_rule_arg


def default_layer(num_layers):
    """The middle layer, numbered from 1 (the lower one for an even count).

    Example:

    >>> default_layer(3), default_layer(2), default_layer(1)
    (2, 1, 1)
    """
    return (num_layers + 1) // 2


def check_layer(layer, num_layers):
    """Returns `layer` (1-based) or raises a `ValueError` naming it."""
    if layer is None:
        return default_layer(num_layers)
    if isinstance(layer, bool) or not isinstance(layer, (int, np.integer)) or not 1 <= layer <= num_layers:
        raise ValueError(
            f"Argument `layer` must be an integer in 1..{num_layers} (the "
            f"model has {num_layers} layer{'s' if num_layers != 1 else ''}), "
            f"received: layer={layer!r}"
        )
    return int(layer)


def sentence_distances(model, vocab, sentences, batch_size=64,
                       progress=False):
    """Master-forget distances of every layer at every word.

    The sentences are sorted by length and read in buckets of `batch_size`
    sentences of about the same length, one model call per bucket, each
    right-padded (and masked) to its longest sentence only; the results
    come back in input order. Padding and masking give the same distances
    as reading each sentence on its own.

    Args:
        model: A language model called as `model(tokens,
            return_distances=True)` returning `(logits, distances)` with
            distances `(batch, layers, time, 2)` (`ONLSTMLanguageModel`,
            not stateful); column `DISTANCE_FORGET` is `d_f`.
        vocab: The model's `Vocabulary`.
        sentences: Lists of words (already segmented), each non-empty.
        batch_size: Sentences per model call.
        progress: Show a progress bar on stderr (needs tqdm, and a
            terminal; silently off otherwise).

    Returns:
        One float64 array `(layers, len(sentence))` per sentence, in the
        order of `sentences`.
    """
    import keras

    from on_lstm_keras._extras import progress_bar
    from on_lstm_keras.ops import DISTANCE_FORGET

    batch_size = check.positive_int("batch_size", batch_size)
    lengths = np.array([len(s) for s in sentences], dtype=np.int64)
    if len(lengths) and lengths.min() < 1:
        empty = int(np.argmin(lengths))
        raise ValueError(
            "Argument `sentences` must hold non-empty word lists, received: "
            f"sentences[{empty}]={sentences[empty]!r}")
    ids = np.asarray(vocab.encode([w for s in sentences for w in s]),
                     dtype="int32")
    starts = np.concatenate([[0], np.cumsum(lengths)])
    order = np.argsort(lengths, kind="stable")
    results = [None] * len(sentences)
    with progress_bar(len(sentences), "parsing", enabled=progress) as bar:
        for first in range(0, len(order), batch_size):
            rows = order[first:first + batch_size]
            n = lengths[rows]
            width = int(n.max()) + 2
            # <eos> w_1 .. w_n <eos>, then <pad> (0) to the bucket's width.
            column = np.arange(width)[None, :]
            words_at = (column >= 1) & (column <= n[:, None])
            where = starts[rows][:, None] + column - 1
            tokens = np.where(words_at, ids[np.where(words_at, where, 0)], 0)
            tokens[(column == 0) | (column == n[:, None] + 1)] = vocab.eos_id
            _, distances = model(tokens.astype("int32"), training=False,
                                 return_distances=True)
            d_f = keras.ops.convert_to_numpy(distances)[..., DISTANCE_FORGET]
            d_f = d_f[:, :, 1:].astype(np.float64)
            for k, row in enumerate(rows):
                results[row] = d_f[k, :, : n[k]]
            bar.update(len(rows))
    return results


def parse_sentences(model, vocab, sentences, layer=None, tree_rule="official",
                    batch_size=64, *, split=None):
    """Unsupervised trees of `sentences` from one layer of `model`.

    Args:
        model, vocab, sentences, batch_size: See `sentence_distances`.
        layer: Layer number from 1; default the middle one.
        tree_rule: `"official"` or `"plain"` (see `distances_to_tree`).
        split: Deprecated name of `tree_rule`.

    Returns:
        List of `(tree, distances)`: nested-list tree and the layer's
        per-word `d_f`.
    """
    tree_rule = tree_rule_arg(tree_rule, split)
    layer = check_layer(layer, len(model.rnn_layers))
    out = []
    for words, distances in zip(
        sentences, sentence_distances(model, vocab, sentences, batch_size)
    ):
        d = distances[layer - 1]
        out.append((distances_to_tree(words, d, tree_rule), d))
    return out
