"""Trees from a model's distances, checked against an independent route.

The distances are recomputed layer by layer with the NumPy re-derivation of
the paper's equations (`onlstm_reference`), the trees by a greedy split
written out here, and treebank F1 from hand-made distances whose trees and
scores are worked out by hand below.
"""

import types

import numpy as np
import pytest

import keras

import onlstm_reference as ref
from on_lstm_keras import workflow
from on_lstm_keras.data import Vocabulary
from on_lstm_keras.models import ONLSTMLanguageModel
from on_lstm_keras.parsing import model_parser
from on_lstm_keras.parsing.model_parser import parse_sentences

pytestmark = pytest.mark.backend


def np_(x):
    return keras.ops.convert_to_numpy(x)


def reference_distances(model, ids):
    """`d_f` of every layer at every token of one unpadded sentence."""
    x = np_(model.embedding.embeddings).astype(np.float64)[np.asarray(ids)][None]
    per_layer = []
    for layer in model.rnn_layers:
        kernel, recurrent_kernel, bias = layer.get_weights()
        x, distances, _, _ = ref.run(
            x, kernel, recurrent_kernel, bias, layer.cell.chunk_size,
            master_input=layer.cell.master_input,
        )
        per_layer.append(distances[0, :, 0])
    return np.stack(per_layer)


def first_max(d, lo, hi):
    best = lo
    for k in range(lo + 1, hi):
        if d[k] > d[best]:
            best = k
    return best


def greedy_tree(words, d, split):
    """The greedy top-down split, written from its description."""

    def official(lo, hi):
        if hi - lo == 1:
            return words[lo]
        i = first_max(d, lo, hi)
        right = words[i] if i == hi - 1 else [words[i], official(i + 1, hi)]
        return right if i == lo else [official(lo, i), right]

    def plain(lo, hi):
        if hi - lo == 1:
            return words[lo]
        i = first_max(d, lo, hi)
        if i == lo:
            i = first_max(d, lo + 1, hi)
        return [plain(lo, i), plain(i, hi)]

    return (official if split == "official" else plain)(0, len(words))


SENTENCES = [
    ["w1", "w2", "w3", "w4", "w5", "w6"],
    ["w7", "w8", "w9", "w10", "w11"],
    ["w12", "zzz", "w13", "w14", "w15", "w16", "w17"],
    ["w18", "w19", "w20", "w21", "w22", "w23", "w24", "w25"],
]


@pytest.fixture(scope="module")
def model_and_vocab():
    keras.utils.set_random_seed(5)
    model = ONLSTMLanguageModel(
        30, embedding_size=8, hidden_size=12, num_layers=3, chunk_size=4,
        seed=3,
    )
    model.build_for(1)
    # Larger weights than the initialiser's, so that the layers' master
    # gates (and so their trees) differ clearly from one another.
    rng = np.random.default_rng(7)
    for layer in model.rnn_layers:
        layer.set_weights([rng.normal(0, 1.0, w.shape).astype("float32")
                           for w in layer.get_weights()])
    vocab = Vocabulary(["<pad>", "<unk>", "<eos>"] + [f"w{i}" for i in range(1, 28)])
    return model, vocab


def expected(model, vocab, layer, split):
    out = []
    for words in SENTENCES:
        ids = [vocab.eos_id, *vocab.encode(words), vocab.eos_id]
        d = reference_distances(model, ids)[layer - 1, 1:-1]
        out.append((greedy_tree(words, d, split), d))
    return out


@pytest.mark.parametrize("tree_rule", ["official", "plain"])
def test_parse_sentences_gives_the_greedy_trees_of_the_chosen_layer(
        model_and_vocab, tree_rule):
    model, vocab = model_and_vocab
    for layer in (1, 2, 3):
        got = parse_sentences(model, vocab, SENTENCES, layer=layer,
                              tree_rule=tree_rule)
        want = expected(model, vocab, layer, tree_rule)
        for (tree, d), (want_tree, want_d) in zip(got, want):
            np.testing.assert_allclose(d, want_d, atol=1e-5)
            assert tree == want_tree
    # The default is the middle layer.
    assert parse_sentences(model, vocab, SENTENCES, tree_rule=tree_rule)[0][0] == \
        expected(model, vocab, 2, tree_rule)[0][0]


def test_bucketed_distances_equal_one_sentence_at_a_time(model_and_vocab):
    """Sorting into buckets, padding and masking change nothing: each
    sentence's distances equal those of the model reading it alone."""
    from on_lstm_keras.parsing.model_parser import sentence_distances

    model, vocab = model_and_vocab
    sentences = [SENTENCES[3], ["w2"], SENTENCES[0], ["w3", "w4"],
                 SENTENCES[2], SENTENCES[1], ["w5", "zzz", "w6"]]
    bucketed = sentence_distances(model, vocab, sentences, batch_size=3)
    for words, got in zip(sentences, bucketed):
        alone, = sentence_distances(model, vocab, [words], batch_size=1)
        assert got.shape == (3, len(words))
        np.testing.assert_allclose(got, alone, rtol=1e-5, atol=1e-6)
        ids = [vocab.eos_id, *vocab.encode(words), vocab.eos_id]
        np.testing.assert_allclose(
            got, reference_distances(model, ids)[:, 1:-1], atol=1e-5)


def test_the_layers_and_the_splits_give_different_trees(model_and_vocab):
    """Guards the test above: it can tell the layers and the splits apart."""
    model, vocab = model_and_vocab
    trees = {(layer, split): [t for t, _ in expected(model, vocab, layer, split)]
             for layer in (1, 2, 3) for split in ("official", "plain")}
    assert trees[1, "official"] != trees[3, "official"]
    assert trees[1, "official"] != trees[2, "official"]
    assert trees[2, "official"] != trees[2, "plain"]


# `fake_nltk_data` (conftest.py) holds three Sinica sentences: one of one
# word (skipped), one of six and one of three words.

# Hand-made distances of a two-layer model.
# Sentence 1 (嘉珍 和 我 住在 同一條 巷子; gold (0,3) (4,6), root (0,6)):
#   layer 1 [6 5 4 3 2 1]: right-branching, spans (1,6) (2,6) (3,6) (4,6):
#     sentence P 1/4 R 1/2 F1 1/3; with the root: 2 of 5 predicted, of 3 gold.
#   layer 2 [5 1 0 9 2 0]: split at 住在, then 嘉珍 | 和 我 and 同一條 巷子:
#     [[嘉珍 [和 我]] [住在 [同一條 巷子]]], spans (0,3) (1,3) (3,6) (4,6):
#     sentence P 2/4 R 1 F1 2/3; with the root: 3 of 5, of 3 gold.
# Sentence 2 (臉色 蒼白 鱟; flat gold, no span but the root): any binary tree
#   has one inner span, so sentence F1 0; with the root: 1 of 2, of 1 gold.
# Layer 1: sentence F1 (1/3 + 0) / 2 = 1/6; corpus P 3/7 R 3/4, F1 6/11.
# Layer 2: sentence F1 (2/3 + 0) / 2 = 1/3; corpus P 4/7 R 1, F1 8/11.
FAKE_DISTANCES = {
    ("嘉珍", "和", "我", "住在", "同一條", "巷子"):
        np.array([[6, 5, 4, 3, 2, 1], [5, 1, 0, 9, 2, 0]], float),
    ("臉色", "蒼白", "鱟"): np.array([[3, 2, 1], [1, 3, 2]], float),
}
WANT = {1: (100 / 6, 100 * 6 / 11), 2: (100 / 3, 100 * 8 / 11)}


@pytest.fixture
def fake_distances(monkeypatch):
    def distances(model, vocab, sentences, batch_size=64, progress=False):
        return [FAKE_DISTANCES[tuple(words)] for words in sentences]

    monkeypatch.setattr(model_parser, "sentence_distances", distances)
    return types.SimpleNamespace(
        model=types.SimpleNamespace(rnn_layers=[None, None]),
        vocab={"嘉珍", "和", "我"}, info={},
    )


def test_evaluate_treebank_scores_the_chosen_layer(fake_distances, fake_nltk_data):
    def run(layer):
        return workflow.evaluate_treebank(
            "sinica", model=fake_distances, layer=layer,
            nltk_data=str(fake_nltk_data))

    for layer in (1, 2):
        result = run(layer)
        assert result["layer"] == layer
        assert result["sentences"] == 2 and result["skipped"] == 1
        assert result["sentence_f1"] == pytest.approx(WANT[layer][0])
        assert result["corpus_f1"] == pytest.approx(WANT[layer][1])
    # None: the middle layer, the lower one of two.
    assert run(None)["sentence_f1"] == pytest.approx(WANT[1][0])
    assert [(r["layer"], r["sentence_f1"], r["corpus_f1"])
            for r in run("all")["per_layer"]] == [
        (k, pytest.approx(WANT[k][0]), pytest.approx(WANT[k][1])) for k in (1, 2)]
    # 3 of the 9 words are in the vocabulary.
    assert run(1)["unknown_word_rate"] == pytest.approx(6 / 9)
    with pytest.raises(ValueError, match="layer=3"):
        run(3)
