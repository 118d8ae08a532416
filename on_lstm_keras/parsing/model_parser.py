"""Trees from a trained language model's master-forget distances.

As in the paper: each sentence is read from a zero state, wrapped in the
boundary token the model saw between sentences (`<eos> w_1 … w_n <eos>`);
the distances `d_f` of one layer at the words (boundaries trimmed) go to
the greedy top-down split.
"""

import numpy as np

from on_lstm_keras.parsing.trees import distances_to_tree


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


def sentence_distances(model, vocab, sentences, batch_size=64):
    """Master-forget distances of every layer at every word.

    Args:
        model: A language model called as `model(tokens,
            return_distances=True)` returning `(logits, distances)` with
            distances `(batch, layers, time, 2)` (`ONLSTMLanguageModel`,
            not stateful).
        vocab: The model's `Vocabulary`.
        sentences: Lists of words (already segmented).
        batch_size: Sentences per batch (right-padded and masked, which
            gives the same distances as one at a time).

    Returns:
        One float array `(layers, len(sentence))` per sentence.
    """
    import keras

    results = []
    for start in range(0, len(sentences), batch_size):
        chunk = sentences[start:start + batch_size]
        width = max(len(s) for s in chunk) + 2
        tokens = np.zeros((len(chunk), width), dtype="int32")
        for row, words in enumerate(chunk):
            ids = [vocab.eos_id, *vocab.encode(words), vocab.eos_id]
            tokens[row, : len(ids)] = ids
        _, distances = model(tokens, training=False, return_distances=True)
        distances = keras.ops.convert_to_numpy(distances)
        for row, words in enumerate(chunk):
            results.append(distances[row, :, 1 : len(words) + 1, 0].astype(np.float64))
    return results


def parse_sentences(model, vocab, sentences, layer=None, split="official",
                    batch_size=64):
    """Unsupervised trees of `sentences` from one layer of `model`.

    Args:
        model, vocab, sentences, batch_size: See `sentence_distances`.
        layer: Layer number from 1; default the middle one.
        split: `"official"` or `"plain"` (see `distances_to_tree`).

    Returns:
        List of `(tree, distances)`: nested-list tree and the layer's
        per-word `d_f`.
    """
    layer = check_layer(layer, len(model.rnn_layers))
    out = []
    for words, distances in zip(
        sentences, sentence_distances(model, vocab, sentences, batch_size)
    ):
        d = distances[layer - 1]
        out.append((distances_to_tree(words, d, split=split), d))
    return out
