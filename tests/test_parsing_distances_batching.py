"""`sentence_distances` and `parse_sentences` with a stand-in model whose
distances are a known function of the tokens, layer and position: checks
the `<eos>` wrapping, the padding, the batching, the trimming of the
boundaries and the choice of layer and split, without running a network.
"""

import numpy as np
import pytest

from on_lstm_keras.data import Vocabulary
from on_lstm_keras.parsing.scores import check_layer
from on_lstm_keras.parsing.scores import default_layer
from on_lstm_keras.parsing.model_parser import parse_sentences
from on_lstm_keras.parsing.model_parser import sentence_distances

pytestmark = pytest.mark.backend

VOCAB = Vocabulary(["<pad>", "<unk>", "<eos>", "a", "b", "c", "d", "e"])


class StandInModel:
    """`d_f` = token id + 10 * position + 100 * layer (+ 0.5 in column
    `d_i`, which parsing must not use); 0 at padding. Records its calls."""

    def __init__(self, num_layers=3):
        self.rnn_layers = [None] * num_layers
        self.calls = []

    def __call__(self, tokens, training=None, return_distances=False):
        assert return_distances and training is False
        assert tokens.dtype == np.int32
        tokens = np.asarray(tokens)
        self.calls.append(tokens.copy())
        batch, width = tokens.shape
        layers = np.arange(1, len(self.rnn_layers) + 1)[None, :, None]
        position = np.arange(width)[None, None, :]
        d_f = tokens[:, None, :] + 10 * position + 100 * layers
        d_f = np.where(tokens[:, None, :] > 0, d_f, 0).astype("float32")
        distances = np.stack([d_f, d_f + 0.5], axis=-1)
        return None, distances


def expected_distances(words, num_layers=3):
    ids = VOCAB.encode(words)
    return np.array([[i + 10 * (k + 1) + 100 * layer for k, i in enumerate(ids)]
                     for layer in range(1, num_layers + 1)], float)


SENTENCES = [["a", "b", "c"], ["d", "zzz"], ["e", "a", "b", "c", "d"], ["a"]]


def test_sentence_distances_wraps_pads_batches_and_trims():
    model = StandInModel()
    got = sentence_distances(model, VOCAB, SENTENCES, batch_size=3)
    assert len(got) == 4
    for words, d in zip(SENTENCES, got):
        assert d.dtype == np.float64 and d.shape == (3, len(words))
        np.testing.assert_array_equal(d, expected_distances(words))
    # Sorted by length into two buckets (lengths 1, 2, 3 and then 5), each
    # as wide as its longest sentence plus two <eos>.
    first, second = model.calls
    np.testing.assert_array_equal(first, [
        [2, 3, 2, 0, 0],
        [2, 6, 1, 2, 0],
        [2, 3, 4, 5, 2],
    ])
    np.testing.assert_array_equal(second, [[2, 7, 3, 4, 5, 6, 2]])


def test_buckets_hold_sentences_of_about_the_same_length():
    # Lengths 6 1 4 1 6 2 3 5 in input order; buckets of 3 in sorted order
    # (ties in input order): lengths 1 1 2 | 3 4 5 | 6 6.
    sentences = [list("abcdea"), ["b"], list("cdea"), ["e"], list("edcbae"),
                 ["a", "zzz"], list("bcd"), list("abcde")]
    model = StandInModel()
    got = sentence_distances(model, VOCAB, sentences, batch_size=3)
    assert [c.shape for c in model.calls] == [(3, 4), (3, 7), (2, 8)]
    np.testing.assert_array_equal(model.calls[0], [
        [2, 4, 2, 0], [2, 7, 2, 0], [2, 3, 1, 2]])
    np.testing.assert_array_equal(model.calls[2][1], [2, 7, 6, 5, 4, 3, 7, 2])
    # Back in input order.
    for words, d in zip(sentences, got):
        np.testing.assert_array_equal(d, expected_distances(words))
    assert sentence_distances(StandInModel(), VOCAB, []) == []
    with pytest.raises(ValueError, match=r"sentences\[1\]=\[\]"):
        sentence_distances(StandInModel(), VOCAB, [["a"], []])
    with pytest.raises(ValueError, match="batch_size=0"):
        sentence_distances(StandInModel(), VOCAB, [["a"]], batch_size=0)


def test_sentence_distances_default_batch_is_64_sentences():
    model = StandInModel()
    sentence_distances(model, VOCAB, SENTENCES)
    assert len(model.calls) == 1 and model.calls[0].shape == (4, 7)
    model = StandInModel()
    got = sentence_distances(model, VOCAB, [["a", "b"]] * 65)
    assert [c.shape for c in model.calls] == [(64, 4), (1, 4)]
    assert len(got) == 65
    model = StandInModel()
    parse_sentences(model, VOCAB, [["a", "b"]] * 65)
    assert [c.shape for c in model.calls] == [(64, 4), (1, 4)]
    model = StandInModel()
    parse_sentences(model, VOCAB, SENTENCES, batch_size=3)
    assert [c.shape[0] for c in model.calls] == [3, 1]


@pytest.mark.parametrize("tree_rule", ["official", "plain"])
def test_parse_sentences_uses_the_layers_d_f(tree_rule):
    model = StandInModel()
    # Distances grow to the right in every layer; a reversed sentence's
    # ids make the trees depend on the layer only through d_f's values.
    words = ["e", "d", "c", "b", "a"]
    for layer in (1, 2, 3):
        (tree, d), = parse_sentences(model, VOCAB, [words], layer=layer,
                                     tree_rule=tree_rule)
        np.testing.assert_array_equal(d, expected_distances(words)[layer - 1])
    # d = [17, 26, 35, 44, 53] + 100 * layer: the maximum is last, so
    # official: [[[[e d] c] b] a]; plain: the same left-branching tree.
    assert tree == [[[["e", "d"], "c"], "b"], "a"]


def test_parse_sentences_official_and_plain_differ_and_follow_the_layer():
    class Peaked(StandInModel):
        """Layer 1 peaks at the second word, layer 2 at the third."""

        def __call__(self, tokens, training=False, return_distances=False):
            tokens = np.asarray(tokens)
            d = np.zeros((tokens.shape[0], 2, tokens.shape[1], 2), "float32")
            d[:, 0, 2, 0] = d[:, 1, 3, 0] = 1.0
            d[:, :, :, 1] = 5.0  # d_i, never used
            return None, d

    model = Peaked(num_layers=2)
    words = ["a", "b", "c", "d"]

    def tree(layer, tree_rule):
        return parse_sentences(model, VOCAB, [words], layer=layer,
                               tree_rule=tree_rule)[0][0]

    # Layer 1, d = [0 1 0 0]: split at b; in (b c d) plain skips b's own
    # maximum and splits before c (the first of the tied rest).
    assert tree(1, "official") == ["a", ["b", ["c", "d"]]]
    assert tree(1, "plain") == ["a", ["b", ["c", "d"]]]
    # Layer 2, d = [0 0 1 0]: split at c.
    assert tree(2, "official") == [["a", "b"], ["c", "d"]]
    assert tree(2, "plain") == [["a", "b"], ["c", "d"]]
    # The default is the middle layer (the lower of two).
    assert parse_sentences(model, VOCAB, [words])[0][0] == tree(1, "official")


def test_tree_rule_reaches_distances_to_tree():
    class Fixed(StandInModel):
        def __call__(self, tokens, training=False, return_distances=False):
            d = np.zeros((1, 1, 6, 2), "float32")
            d[0, 0, 1:5, 0] = [0.1, 0.9, 0.3, 0.5]  # words a b c d
            return None, d

    model = Fixed(num_layers=1)
    words = ["a", "b", "c", "d"]
    # Split at b. Official: b joins (c d), split at d: [a [b [c d]]].
    # Plain: (b c d) splits before d, the largest after b: [a [[b c] d]].
    official = parse_sentences(model, VOCAB, [words], tree_rule="official")[0][0]
    plain = parse_sentences(model, VOCAB, [words], tree_rule="plain")[0][0]
    assert official == ["a", ["b", ["c", "d"]]]
    assert plain == ["a", [["b", "c"], "d"]]
    with pytest.raises(ValueError, match="`tree_rule`.*tree_rule='binary'"):
        parse_sentences(model, VOCAB, [words], tree_rule="binary")


def test_check_layer():
    assert [default_layer(n) for n in (1, 2, 3, 4, 5)] == [1, 1, 2, 2, 3]
    assert check_layer(None, 3) == 2 and check_layer(3, 3) == 3
    assert check_layer(np.int64(1), 3) == 1 and type(check_layer(np.int64(1), 3)) is int
    for bad in (0, 4, True, 1.0, "2"):
        with pytest.raises(ValueError) as e:
            check_layer(bad, 3)
        assert str(e.value) == (
            "Argument `layer` must be an integer in 1..3 (the model has 3 "
            f"layers), received: layer={bad!r}")
    for n, layers in ((1, "1 layer"), (2, "2 layers")):
        with pytest.raises(ValueError) as e:
            check_layer(n + 1, n)
        assert str(e.value) == (
            f"Argument `layer` must be an integer in 1..{n} (the model has "
            f"{layers}), received: layer={n + 1}")
