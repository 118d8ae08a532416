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
from on_lstm_keras import runs
from on_lstm_keras.data import Vocabulary
from on_lstm_keras.models import ONLSTMLanguageModel
from on_lstm_keras.parsing import model_parser
from on_lstm_keras.parsing.model_parser import parse_sentences
from on_lstm_keras.runs import evaluation

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

    monkeypatch.setattr(evaluation, "sentence_distances", distances)
    return types.SimpleNamespace(
        model=types.SimpleNamespace(rnn_layers=[None, None]),
        vocab={"嘉珍", "和", "我"}, info={},
    )


def test_evaluate_treebank_scores_the_chosen_layer(fake_distances, fake_nltk_data):
    def run(layer):
        return runs.evaluate_treebank(
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


# Readings (`reading=`): a backward model reads each sentence
# reversed; its distances come back in input order.


def zscore_by_hand(x):
    x = np.asarray(x, float)
    return (x - x.mean()) / x.std()


@pytest.fixture(scope="module")
def backward_twin(model_and_vocab):
    """A backward model with the forward model's weights."""
    model, _ = model_and_vocab
    twin = model.clone(direction="backward")
    assert twin.direction == "backward" and model.direction == "forward"
    return twin


def test_a_backward_model_gives_the_mirrored_distances_of_the_reversal(
        model_and_vocab, backward_twin):
    model, vocab = model_and_vocab
    backward = model_parser.sentence_distances(backward_twin, vocab, SENTENCES,
                                               batch_size=3)
    reversed_forward = model_parser.sentence_distances(
        model, vocab, [s[::-1] for s in SENTENCES])
    for words, b, f in zip(SENTENCES, backward, reversed_forward):
        assert b.shape == (3, len(words))
        np.testing.assert_allclose(b, f[:, ::-1], rtol=1e-6, atol=1e-7)
        # And against the NumPy re-derivation on <eos> w_n .. w_1 <eos>.
        ids = [vocab.eos_id, *vocab.encode(words[::-1]), vocab.eos_id]
        want = reference_distances(model, ids)[:, 1:-1][:, ::-1]
        np.testing.assert_allclose(b, want, rtol=1e-4, atol=1e-5)


def test_boundary_distances_of_both_directions_line_up(model_and_vocab,
                                                       backward_twin):
    model, vocab = model_and_vocab
    words = SENTENCES[1]
    n = len(words)
    (f,) = model_parser.boundary_distances(model, vocab, [words])
    (b,) = model_parser.boundary_distances(backward_twin, vocab, [words])
    assert f.shape == b.shape == (3, n + 1)
    # Forward: boundary j read at word j, the end at the closing <eos>.
    ids = [vocab.eos_id, *vocab.encode(words), vocab.eos_id]
    np.testing.assert_allclose(f, reference_distances(model, ids)[:, 1:],
                               rtol=1e-4, atol=1e-5)
    # Backward: boundary j read at word j - 1, the start at the closing
    # <eos> of the reversed sentence.
    rev = [vocab.eos_id, *vocab.encode(words[::-1]), vocab.eos_id]
    np.testing.assert_allclose(b, reference_distances(model, rev)[:, 1:][:, ::-1],
                               rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("tree_rule", ["official", "plain"])
def test_forward_only_through_the_scores_gives_todays_trees(model_and_vocab,
                                                            tree_rule):
    from on_lstm_keras.parsing.scores import split_scores

    model, vocab = model_and_vocab
    today = model_parser.sentence_distances(model, vocab, SENTENCES)
    boundaries = model_parser.boundary_distances(model, vocab, SENTENCES)
    for layer in (1, 2, 3):
        new = parse_sentences(model, vocab, SENTENCES, layer=layer,
                              tree_rule=tree_rule, reading="forward")
        for words, d, b, (tree, scores) in zip(SENTENCES, today, boundaries, new):
            np.testing.assert_array_equal(split_scores(b, None, layer), d[layer - 1])
            assert tree == greedy_tree(words, d[layer - 1], tree_rule)
            np.testing.assert_array_equal(scores, d[layer - 1])


def test_both_directions_average_the_z_scored_boundaries(model_and_vocab,
                                                         backward_twin):
    model, vocab = model_and_vocab
    for layer in (1, 3):
        got = parse_sentences(model, vocab, SENTENCES, layer=layer,
                              reading="both", backward_model=backward_twin)
        for words, (tree, scores) in zip(SENTENCES, got):
            ids = [vocab.eos_id, *vocab.encode(words), vocab.eos_id]
            rev = [vocab.eos_id, *vocab.encode(words[::-1]), vocab.eos_id]
            f = reference_distances(model, ids)[layer - 1, 1:]
            b = reference_distances(model, rev)[layer - 1, 1:][::-1]
            want = (zscore_by_hand(f) + zscore_by_hand(b))[:-1] / 2
            np.testing.assert_allclose(scores, want, rtol=1e-3, atol=1e-4)
            assert tree == greedy_tree(words, scores, "official")
    # The mean over layers: each layer z-scored, averaged, then z-scored
    # per direction before the two directions are averaged.
    (tree, scores), = parse_sentences(model, vocab, SENTENCES[:1], layer="mean",
                                      reading="both",
                                      backward_model=backward_twin)
    ids = [vocab.eos_id, *vocab.encode(SENTENCES[0]), vocab.eos_id]
    rev = [vocab.eos_id, *vocab.encode(SENTENCES[0][::-1]), vocab.eos_id]
    f = np.mean([zscore_by_hand(r) for r in reference_distances(model, ids)[:, 1:]], 0)
    b = np.mean([zscore_by_hand(r[::-1])
                 for r in reference_distances(model, rev)[:, 1:]], 0)
    want = (zscore_by_hand(f) + zscore_by_hand(b))[:-1] / 2
    np.testing.assert_allclose(scores, want, rtol=1e-3, atol=1e-4)


def test_backward_only_reads_the_boundary_before_each_word(model_and_vocab,
                                                           backward_twin):
    model, vocab = model_and_vocab
    words = SENTENCES[0]
    (tree, scores), = parse_sentences(backward_twin, vocab, [words], layer=2)
    rev = [vocab.eos_id, *vocab.encode(words[::-1]), vocab.eos_id]
    # Boundaries 0..n-1 as read right to left: the closing <eos> (the
    # sentence start), then words 1..n-1 ... read at words 0..n-2.
    want = reference_distances(model, rev)[1, 1:][::-1][:-1]
    np.testing.assert_allclose(scores, want, rtol=1e-4, atol=1e-5)
    assert tree == greedy_tree(words, want, "official")


def test_directions_need_the_right_models(model_and_vocab, backward_twin):
    model, vocab = model_and_vocab
    with pytest.raises(ValueError, match="reading='both'.*backward_model"):
        parse_sentences(model, vocab, SENTENCES, reading="both")
    with pytest.raises(ValueError, match="reading='backward'.*needs a backward"):
        parse_sentences(model, vocab, SENTENCES, reading="backward")
    with pytest.raises(ValueError, match="reading='forward'.*reversed"):
        parse_sentences(backward_twin, vocab, SENTENCES, reading="forward")
    with pytest.raises(ValueError, match="backward_model.*received one whose "
                                         "direction is 'forward'"):
        parse_sentences(model, vocab, SENTENCES, reading="both",
                        backward_model=model)
    with pytest.raises(ValueError, match="reading.*'sideways'"):
        parse_sentences(model, vocab, SENTENCES, reading="sideways")
    with pytest.raises(ValueError, match="or 'mean', received: layer=4"):
        parse_sentences(model, vocab, SENTENCES, reading="both",
                        backward_model=backward_twin, layer=4)


def test_mean_over_layers_of_a_forward_model(model_and_vocab):
    """`layer="mean"` with one forward model: each layer's `d_f` z-scored
    over the sentence's n + 1 boundaries, the layers averaged, the sentence
    end dropped. (The tree rule there: on the stand-in model below.)"""
    model, vocab = model_and_vocab
    got = parse_sentences(model, vocab, SENTENCES, layer="mean")
    for words, (tree, scores) in zip(SENTENCES, got):
        ids = [vocab.eos_id, *vocab.encode(words), vocab.eos_id]
        boundaries = reference_distances(model, ids)[:, 1:]
        want = np.mean([zscore_by_hand(r) for r in boundaries], 0)[:-1]
        np.testing.assert_allclose(scores, want, rtol=1e-3, atol=1e-4)
        assert scores.dtype == np.float64
        assert tree == greedy_tree(words, scores, "official")


# A stand-in language model: `d_f` of layer `l` (from 1) at a token is the
# token's id + 100 l, the other distance column its negative; it records
# every call. Its distances are worked out by hand below.


class StandIn:
    def __init__(self, direction="forward", num_layers=2):
        self.direction = direction
        self.rnn_layers = [None] * num_layers
        self.calls = []

    def __call__(self, tokens, training=None, return_distances=False):
        self.calls.append((np.array(tokens), training, return_distances))
        layers = 100.0 * np.arange(1, len(self.rnn_layers) + 1)
        d_f = (np.asarray(tokens)[:, None, :] + layers[None, :, None]
               ).astype("float32")
        return None, np.stack([d_f, -d_f], axis=-1)


# ids: a 3, b 4, c 5, d 6, e 7, f 8; <eos> 2; unknown words 1.
SMALL_VOCAB = Vocabulary(["<pad>", "<unk>", "<eos>", "a", "b", "c", "d", "e",
                          "f"])


def test_buckets_are_framed_and_padded_to_their_longest_sentence():
    sentences = [["a", "b", "c"], ["d"], ["e", "zzz"], ["f", "a", "b", "c"]]
    model = StandIn()
    got = model_parser.sentence_distances(model, SMALL_VOCAB, sentences,
                                          batch_size=2)
    # Sorted by length (1, 2 | 3, 4 words), <eos> around each, <pad> after.
    assert len(model.calls) == 2
    (first, training, asked), (second, *_) = model.calls
    np.testing.assert_array_equal(first, [[2, 6, 2, 0], [2, 7, 1, 2]])
    np.testing.assert_array_equal(second, [[2, 3, 4, 5, 2, 0],
                                           [2, 8, 3, 4, 5, 2]])
    assert first.dtype == second.dtype == np.int32
    assert all(call[1] is False and call[2] is True for call in model.calls)
    ids = [[3, 4, 5], [6], [7, 1], [8, 3, 4, 5]]
    for d, i in zip(got, ids):
        assert d.dtype == np.float64
        np.testing.assert_array_equal(d, [np.add(i, 100), np.add(i, 200)])
    # Boundaries: the closing <eos> reads the sentence end.
    forward = model_parser.boundary_distances(StandIn(), SMALL_VOCAB,
                                              sentences[:1])
    np.testing.assert_array_equal(forward[0], [[103, 104, 105, 102],
                                               [203, 204, 205, 202]])
    # A backward model reads c b a; its closing <eos> is the sentence start.
    backward = StandIn("backward")
    (b,) = model_parser.boundary_distances(backward, SMALL_VOCAB,
                                           sentences[:1])
    np.testing.assert_array_equal(backward.calls[0][0], [[2, 5, 4, 3, 2]])
    np.testing.assert_array_equal(b, [[102, 103, 104, 105],
                                      [202, 203, 204, 205]])
    (d,) = model_parser.sentence_distances(backward, SMALL_VOCAB,
                                           sentences[:1])
    np.testing.assert_array_equal(d, [[103, 104, 105], [203, 204, 205]])
    assert model_parser.sentence_distances(StandIn(), SMALL_VOCAB, []) == []


def rows_per_call(model):
    return [len(tokens) for tokens, *_ in model.calls]


def test_the_default_bucket_holds_64_sentences():
    sentences = [["a"]] * 65
    for read in (model_parser.sentence_distances,
                 model_parser.boundary_distances):
        model = StandIn()
        assert len(read(model, SMALL_VOCAB, sentences)) == 65
        assert rows_per_call(model) == [64, 1]
    forward, backward = StandIn(), StandIn("backward")
    model_parser.directional_boundaries(
        sentences, forward=(forward, SMALL_VOCAB),
        backward=(backward, SMALL_VOCAB))
    assert rows_per_call(forward) == rows_per_call(backward) == [64, 1]
    for layer in (1, "mean"):
        model = StandIn()
        parse_sentences(model, SMALL_VOCAB, sentences, layer=layer)
        assert rows_per_call(model) == [64, 1]


def test_parse_sentences_passes_its_batch_size_on():
    sentences = [["a", "b"], ["c"], ["d", "e", "f"]]
    for kwargs in ({"layer": 1}, {"layer": "mean"}):
        model = StandIn()
        parse_sentences(model, SMALL_VOCAB, sentences, batch_size=2, **kwargs)
        assert rows_per_call(model) == [2, 1]
    forward, backward = StandIn(), StandIn("backward")
    parse_sentences(forward, SMALL_VOCAB, sentences, batch_size=1,
                    reading="both", backward_model=backward)
    assert rows_per_call(forward) == rows_per_call(backward) == [1, 1, 1]


@pytest.fixture
def bars(monkeypatch):
    """The progress bars made, each with its arguments and updates."""
    made = []

    class Bar:
        def __init__(self, total, desc, unit="sentence", enabled=True):
            self.total, self.desc, self.unit = total, desc, unit
            self.enabled = enabled
            self.updates = []
            made.append(self)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def update(self, n=1):
            self.updates.append(n)

    monkeypatch.setattr(model_parser, "progress_bar", Bar)
    return made


def test_the_progress_bar_counts_sentences_and_is_off_by_default(bars):
    sentences = [["a"], ["b", "c"], ["d"], ["e", "f", "a"], ["b"]]
    for read in (model_parser.sentence_distances,
                 model_parser.boundary_distances):
        for progress in (False, True):
            bars.clear()
            kwargs = {"progress": True} if progress else {}
            read(StandIn(), SMALL_VOCAB, sentences, batch_size=2, **kwargs)
            (bar,) = bars
            assert (bar.total, bar.desc, bar.unit) == (5, "parsing",
                                                       "sentence")
            assert bool(bar.enabled) is progress
            # One update a bucket, by the sentences it held.
            assert bar.updates == [2, 2, 1]
    for progress in (False, True):
        bars.clear()
        kwargs = {"progress": True} if progress else {}
        model_parser.directional_boundaries(
            sentences, forward=(StandIn(), SMALL_VOCAB),
            backward=(StandIn("backward"), SMALL_VOCAB), batch_size=2,
            **kwargs)
        assert [(bar.total, bool(bar.enabled), bar.updates) for bar in bars] \
            == [(5, progress, [2, 2, 1])] * 2


def test_the_mean_over_layers_follows_the_tree_rule():
    # d a b: boundaries [6 3 4 2] + 100 l in every layer, so the mean of
    # the z-scored layers is the z-score of [6 3 4 2]: mean 3.75, std
    # sqrt(8.75 / 4); the largest score is the first word's.
    std = np.sqrt(8.75 / 4)
    want = np.array([2.25, -0.75, 0.25]) / std
    trees = {"official": ["d", ["a", "b"]], "plain": [["d", "a"], "b"]}
    for tree_rule, tree in trees.items():
        (got, scores), = parse_sentences(StandIn(), SMALL_VOCAB,
                                         [["d", "a", "b"]], layer="mean",
                                         tree_rule=tree_rule)
        np.testing.assert_allclose(scores, want, rtol=1e-12)
        assert got == tree


def test_a_separate_backward_model_is_read_with_its_own_vocabulary():
    # The backward model's vocabulary lists the words the other way round:
    # a 8, b 7, c 6, d 5, e 4, f 3.
    own = Vocabulary(["<pad>", "<unk>", "<eos>", "f", "e", "d", "c", "b", "a"])
    words = ["a", "b", "c"]
    # Boundaries 0..3 of layer 1: forward (SMALL_VOCAB) [103 104 105 102];
    # backward (read c b a through `own`) [102 108 107 106].
    forward_z = zscore_by_hand([103, 104, 105, 102])
    backward_z = zscore_by_hand([102, 108, 107, 106])
    backward = StandIn("backward")
    (_, scores), = parse_sentences(StandIn(), SMALL_VOCAB, [words], layer=1,
                                   reading="both", backward_model=backward,
                                   backward_vocab=own)
    np.testing.assert_array_equal(backward.calls[0][0], [[2, 6, 7, 8, 2]])
    np.testing.assert_allclose(scores, (forward_z + backward_z)[:-1] / 2,
                               rtol=1e-12)
    # Backward only, from `backward_model`.
    (_, scores), = parse_sentences(StandIn(), SMALL_VOCAB, [words], layer=2,
                                   reading="backward",
                                   backward_model=StandIn("backward"),
                                   backward_vocab=own)
    np.testing.assert_array_equal(scores, [202, 208, 207])
    # Without `backward_vocab`, the backward model shares `vocab`.
    (_, scores), = parse_sentences(StandIn(), SMALL_VOCAB, [words], layer=2,
                                   reading="backward",
                                   backward_model=StandIn("backward"))
    np.testing.assert_array_equal(scores, [202, 203, 204])
    # A backward model given as `model` is read with `vocab`, its own;
    # `backward_vocab` is not used then.
    (_, scores), = parse_sentences(StandIn("backward"), own, [words], layer=2,
                                   backward_vocab=SMALL_VOCAB)
    np.testing.assert_array_equal(scores, [202, 208, 207])


def test_many_buckets_are_read_through_one_compiled_function(model_and_vocab,
                                                             monkeypatch):
    """From `COMPILE_FROM_BUCKETS` buckets on, the model's `distances` runs
    inside Keras' compiled `predict_on_batch` (never `call`, whose output
    layer the parser does not need), fed widths padded to a multiple of
    `COMPILED_WIDTH_QUANTUM`; one bucket is read eagerly at its own width.
    (The values of both paths are checked against NumPy above.)"""
    model, vocab = model_and_vocab
    fed, traced = [], []
    compile_distances = model_parser._compiled_distances
    read_distances = type(model).distances

    def compiled(language_model):
        read = compile_distances(language_model)

        def recorded(tokens):
            fed.append(tokens.shape)
            return read(tokens)

        return recorded

    def distances(self, tokens, training=False):
        traced.append(not isinstance(tokens, np.ndarray))
        return read_distances(self, tokens, training)

    def no_call(*args, **kwargs):
        raise AssertionError("the parser called the model")

    compile_distances.cache_clear()  # traced anew, through `distances`
    monkeypatch.setattr(model_parser, "_compiled_distances", compiled)
    monkeypatch.setattr(type(model), "distances", distances)
    monkeypatch.setattr(model, "call", no_call)
    sentences = [SENTENCES[3], ["w2"], SENTENCES[0], ["w3", "w4"]]
    model_parser.sentence_distances(model, vocab, sentences, batch_size=2)
    assert model_parser.COMPILE_FROM_BUCKETS == 2
    quantum = model_parser.COMPILED_WIDTH_QUANTUM
    # Buckets of 1-2 and 6-8 words: 4 and 10 steps with the <eos> marks.
    assert fed == [(2, quantum), (2, 2 * quantum)]
    # A last bucket of one sentence is filled up to the batch size, so
    # that the compiled function sees one batch size only.
    fed.clear()
    got = model_parser.sentence_distances(model, vocab, sentences[:3],
                                          batch_size=2)
    assert fed == [(2, quantum), (2, 2 * quantum)]
    assert len(got) == 3
    assert traced and all(traced)  # symbolic tensors: inside the graph
    fed.clear(), traced.clear()
    model_parser.sentence_distances(model, vocab, [SENTENCES[0]])
    assert fed == [] and traced == [False]  # one bucket: eager


def test_an_unbuilt_model_is_built_before_a_compiled_reading(model_and_vocab):
    """A model never called is built first (by one call), so that Keras
    does not redo the wrapper's symbolic build on every bucket; its
    distances are those of the same weights read one sentence at a time."""
    _, vocab = model_and_vocab
    model = ONLSTMLanguageModel(30, embedding_size=8, hidden_size=12,
                                num_layers=2, chunk_size=4, seed=3)
    assert not model.built
    got = model_parser.sentence_distances(model, vocab, SENTENCES,
                                          batch_size=2)
    assert model.built
    for words, d in zip(SENTENCES, got):
        ids = [vocab.eos_id, *vocab.encode(words), vocab.eos_id]
        np.testing.assert_allclose(
            d, reference_distances(model, ids)[:, 1:-1], atol=1e-5)


def test_a_model_read_again_is_not_compiled_again(model_and_vocab,
                                                  monkeypatch):
    """The compiled reader of a model is kept: reading the model again at
    the same widths traces nothing new, and still reads the weights the
    model has then (checked against NumPy after they change)."""
    _, vocab = model_and_vocab
    model = ONLSTMLanguageModel(30, embedding_size=8, hidden_size=12,
                                num_layers=2, chunk_size=4, seed=5)
    traced = []
    read_distances = type(model).distances

    def distances(self, tokens, training=False):
        traced.append(tokens.shape)
        return read_distances(self, tokens, training)

    monkeypatch.setattr(type(model), "distances", distances)
    model_parser.sentence_distances(model, vocab, SENTENCES, batch_size=2)
    assert traced
    traced.clear()
    model_parser.sentence_distances(model, vocab, SENTENCES, batch_size=2)
    assert traced == []
    model.set_weights([0.5 * w for w in model.get_weights()])
    got = model_parser.sentence_distances(model, vocab, SENTENCES,
                                          batch_size=2)
    assert traced == []
    for words, d in zip(SENTENCES, got):
        ids = [vocab.eos_id, *vocab.encode(words), vocab.eos_id]
        np.testing.assert_allclose(
            d, reference_distances(model, ids)[:, 1:-1], atol=1e-5)
