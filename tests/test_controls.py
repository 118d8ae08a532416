"""The controls of Dyer, Melis and Blunsom (2019): trees from an LSTM's
forget gates, an untrained model, the parser's reach, and mirroring."""

import numpy as np
import pytest

import keras

from on_lstm_keras import ONLSTM
from on_lstm_keras.models import ONLSTMLanguageModel
from on_lstm_keras.ops import DISTANCE_FORGET


def np_(x):
    return keras.ops.convert_to_numpy(x)


def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def numpy_lstm(x, valid, kernel, recurrent, bias, units):
    """An LSTM over `x` `(batch, time, features)` written out step by step
    from the weights in Keras' gate order `i, f, ĉ, o` (the columns past
    `4 * units`, the master gates of a one-level ON-LSTM, are left out):
    `(h, d)`, the output sequence (0 at padding) and `1 − mean(f_t)` (0
    at padding). A padded step carries `h` and `c` over."""
    batch, time, _ = x.shape
    h = np.zeros((batch, units))
    c = np.zeros((batch, units))
    outputs = np.zeros((batch, time, units))
    d = np.zeros((batch, time))
    for t in range(time):
        z = x[:, t] @ kernel[:, :4 * units] + h @ recurrent[:, :4 * units] \
            + bias[:4 * units]
        i = sigmoid(z[:, :units])
        f = sigmoid(z[:, units:2 * units])
        g = np.tanh(z[:, 2 * units:3 * units])
        o = sigmoid(z[:, 3 * units:])
        c_new = f * c + i * g
        h_new = o * np.tanh(c_new)
        keep = valid[:, t:t + 1]
        c = np.where(keep, c_new, c)
        h = np.where(keep, h_new, h)
        outputs[:, t] = np.where(keep, h_new, 0.0)
        d[:, t] = np.where(valid[:, t], 1.0 - f.mean(axis=1), 0.0)
    return outputs, d


def lstm_language_model(seed=0):
    """A small LSTM comparison model with every weight drawn at random
    (the biases too, so that the forget gates differ from word to word)."""
    model = ONLSTMLanguageModel(
        40, embedding_size=6, hidden_size=10, num_layers=3, chunk_size=2,
        recurrent="lstm", seed=seed)
    model(np.ones((1, 1), "int32"))
    rng = np.random.default_rng(seed)
    model.set_weights([rng.normal(0, 0.8, w.shape).astype("float32")
                       for w in model.get_weights()])
    return model


def numpy_lstm_distances(model, tokens):
    """`1 − mean(f_t)` of every layer, `(batch, layers, time)`, from the
    model's weights alone."""
    valid = tokens != 0
    x = np_(model.embedding.embeddings)[tokens]
    out = []
    for layer in model.rnn_layers:
        kernel, recurrent, bias = (np_(w) for w in (
            layer.cell.kernel, layer.cell.recurrent_kernel, layer.cell.bias))
        x, d = numpy_lstm(x.astype(np.float64), valid, kernel, recurrent,
                          bias, layer.units)
        out.append(d)
    return np.stack(out, axis=1)


def test_lstm_distances_are_the_forget_gates_of_a_numpy_lstm():
    model = lstm_language_model()
    # Three sentences of different lengths, right-padded with 0.
    tokens = np.array([[1, 5, 9, 3, 7, 1, 0, 0],
                       [1, 2, 1, 0, 0, 0, 0, 0],
                       [1, 8, 6, 4, 2, 11, 13, 1]], dtype="int32")
    expected = numpy_lstm_distances(model, tokens)
    got = np_(model.distances(tokens))[..., DISTANCE_FORGET]
    np.testing.assert_allclose(got, expected, atol=2e-5)
    _, through_call = model(tokens, return_distances=True)
    np.testing.assert_allclose(np_(through_call)[..., DISTANCE_FORGET],
                               expected, atol=2e-5)
    # Padding gives 0, and the words differ from each other.
    assert np.all(got.transpose(1, 0, 2)[:, tokens == 0] == 0)
    assert np.ptp(got[0, 1, :6]) > 1e-3


def test_forget_gate_distances_carry_h_over_padding_inside_a_sequence():
    rng = np.random.default_rng(1)
    units, features = 5, 3
    layer = ONLSTM(units, units, master_input="reverse_cumsum",
                   return_sequences=True, bias_initializer="random_normal")
    x = rng.normal(size=(2, 6, features)).astype("float32")
    valid = np.array([[True, False, True, True, False, True],
                      [False, True, True, False, False, True]])
    outputs = layer(x, mask=valid)
    kernel, recurrent, bias = layer.get_weights()
    _, expected = numpy_lstm(x.astype(np.float64), valid, kernel, recurrent,
                             bias, units)
    got = np_(layer.forget_gate_distances(x, outputs, mask=valid))
    np.testing.assert_allclose(got, expected, atol=2e-5)


def test_forget_gate_distances_refuse_a_backward_layer():
    layer = ONLSTM(4, 4, return_sequences=True, go_backwards=True)
    x = np.zeros((1, 3, 2), "float32")
    with pytest.raises(ValueError, match="go_backwards=True"):
        layer.forget_gate_distances(x, layer(x))


# -- the parser's reach -----------------------------------------------------

def catalan(k):
    from math import comb
    return comb(2 * k, k) // (k + 1)


def brackets_of(trees):
    from on_lstm_keras.parsing import to_brackets
    return {to_brackets(t) for t in trees}


def test_the_plain_rule_reaches_every_binary_tree():
    from on_lstm_keras.parsing import reach_counts
    counts = reach_counts(range(2, 11), ["plain"])["plain"]
    assert counts == {n: catalan(n - 1) for n in range(2, 11)}


def test_reach_of_three_and_four_words_by_hand():
    from on_lstm_keras.parsing import reachable_trees
    three = {"(0 (1 2))", "((0 1) 2)"}
    four = {"(0 (1 (2 3)))", "(0 ((1 2) 3))", "((0 1) (2 3))",
            "((0 (1 2)) 3)", "(((0 1) 2) 3)"}
    for rule in ("official", "plain"):
        assert brackets_of(reachable_trees(3, rule)) == three
        assert brackets_of(reachable_trees(4, rule)) == four
    # From five words on the official rule misses trees: in its
    # `[left, [w_i, right]]` a root with two words or more on its left has
    # a right child that starts with one word alone, which
    # ((0 1) ((2 3) 4)) has not.
    five = brackets_of(reachable_trees(5, "official"))
    assert len(five) == 13 and "((0 1) ((2 3) 4))" not in five
    assert "((0 1) ((2 3) 4))" in brackets_of(reachable_trees(5, "plain"))


@pytest.mark.parametrize("rule", ["official", "plain"])
def test_reach_is_what_every_order_of_the_distances_gives(rule):
    import itertools

    from on_lstm_keras.parsing import distances_to_tree
    from on_lstm_keras.parsing import reachable_trees
    for n in range(1, 8):
        words = [str(k) for k in range(n)]
        seen = {distances_to_tree(words, order, rule).__repr__()
                for order in itertools.permutations(range(n))}
        assert {repr(t) for t in reachable_trees(n, rule)} == seen, n
    # Ties add nothing.
    words = [str(k) for k in range(6)]
    reach = {repr(t) for t in reachable_trees(6, rule)}
    for d in itertools.product(range(3), repeat=6):
        assert repr(distances_to_tree(words, d, rule)) in reach


def test_reach_arguments():
    from on_lstm_keras.parsing import reachable_trees
    assert reachable_trees(2, words=["a", "b"]) == [["a", "b"]]
    assert reachable_trees(1) == ["0"]
    with pytest.raises(ValueError, match="n=14"):
        reachable_trees(14)
    with pytest.raises(ValueError, match="tree_rule"):
        reachable_trees(3, "greedy")
    with pytest.raises(ValueError, match="words="):
        reachable_trees(3, words=["a"])


# -- mirroring --------------------------------------------------------------

def test_mirroring_twice_gives_the_tree_back_and_reverses_the_spans():
    import nltk

    from on_lstm_keras.parsing import mirror_tree
    from on_lstm_keras.parsing import reachable_trees
    from on_lstm_keras.parsing import spans
    for n in range(1, 7):
        for tree in reachable_trees(n, "plain"):
            mirrored = mirror_tree(tree)
            assert mirror_tree(mirrored) == tree
            assert spans(mirrored, include_root=True) == {
                (n - j, n - i) for i, j in spans(tree, include_root=True)}
    labelled = nltk.Tree.fromstring("(S (NP a b) (VP c))")
    assert str(mirror_tree(labelled)) == "(S (VP c) (NP b a))"


def test_mirror_sentence_reverses_the_words_with_the_tree():
    from on_lstm_keras.parsing import GoldSentence
    from on_lstm_keras.parsing import leaves
    from on_lstm_keras.parsing import mirror_sentence
    gold = GoldSentence(["我", "住", "在", "这里"], [["我", "住"], ["在", "这里"]])
    mirrored = mirror_sentence(gold)
    assert mirrored.words == ["这里", "在", "住", "我"]
    assert leaves(mirrored.tree) == mirrored.words
    assert mirror_sentence(mirrored) == gold
    with pytest.raises(ValueError, match="sentence="):
        mirror_sentence((["a"], "a"))
