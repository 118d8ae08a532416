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


def test_the_parser_reads_an_lstm_through_its_compiled_path_too():
    from on_lstm_keras.data import Vocabulary
    from on_lstm_keras.parsing.model_parser import sentence_distances

    model = lstm_language_model(seed=2)
    vocab = Vocabulary(["<pad>", "<unk>", "<eos>",
                        *(f"w{k}" for k in range(37))])
    sentences = [["w3", "w9", "w1", "w30"], ["w4", "w5"],
                 ["w8", "w2", "w7", "w6", "w0", "w11", "w12"]]
    # One sentence a bucket: three buckets, read through the compiled
    # `predict_on_batch`, each padded to a width of 8.
    got = sentence_distances(model, vocab, sentences, batch_size=1)
    for words, d in zip(sentences, got):
        tokens = np.array([[vocab.eos_id, *vocab.encode(words),
                            vocab.eos_id]])
        expected = numpy_lstm_distances(model, tokens)[0, :, 1:-1]
        np.testing.assert_allclose(d, expected, atol=2e-5)


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


# -- runs on disk: an LSTM run, an untrained copy -------------------------

# The words of conftest's FAKE_SINICA.
SINICA_WORDS = ["一", "嘉珍", "和", "我", "住在", "同一條", "巷子", "臉色",
                "蒼白", "鱟"]


def write_run(directory, recurrent="onlstm", direction="forward", seed=0,
              **info):
    """A run directory as training leaves one, with a small model whose
    weights are drawn at random from `seed` (a stand-in for trained ones,
    the biases included, so that the gates differ from word to word)."""
    import os

    from on_lstm_keras.config import ModelConfig
    from on_lstm_keras.config import TrainingConfig
    from on_lstm_keras.data import Vocabulary
    from on_lstm_keras.models.saving import save_atomically
    from on_lstm_keras.models.saving import write_json

    config = ModelConfig(embedding_size=6, hidden_size=8, num_layers=2,
                         chunk_size=2, recurrent=recurrent,
                         direction=direction)
    vocab = Vocabulary(["<pad>", "<unk>", "<eos>", *SINICA_WORDS])
    model = ONLSTMLanguageModel.from_model_config(config, len(vocab))
    model.build_for(1)
    rng = np.random.default_rng(seed)
    model.set_weights([rng.normal(0, 0.8, w.shape).astype("float32")
                       for w in model.get_weights()])
    os.makedirs(directory, exist_ok=True)
    vocab.save(os.path.join(directory, "vocab.json"))
    save_atomically(model, os.path.join(directory, "model.keras"))
    write_json(os.path.join(directory, "run.json"), {
        "model": config.to_dict(),
        "training": TrainingConfig(seed=7).to_dict(),
        "results": {"test_perplexity": 12.5}, "script": None, **info})
    return model, vocab


def test_evaluate_an_lstm_run_reads_its_forget_gates(
        tmp_path, fake_nltk_data, capsys):
    import json

    from on_lstm_keras import cli
    from on_lstm_keras.parsing import distances_to_tree
    from on_lstm_keras.parsing import evaluate
    from on_lstm_keras.parsing import load_sinica
    from on_lstm_keras.parsing import right_branching

    run = tmp_path / "run" / "lstm"
    model, vocab = write_run(run, recurrent="lstm", seed=1)
    gold = [g for g in load_sinica(nltk_data=fake_nltk_data)
            if len(g.words) >= 2]
    # The reference: each sentence framed `<eos> w_1 .. w_n <eos>`, read by
    # a NumPy LSTM; layer 1's `1 - mean(f_t)` at the words makes the tree.
    trees = []
    for g in gold:
        tokens = np.array([[vocab.eos_id, *vocab.encode(g.words),
                            vocab.eos_id]])
        d = numpy_lstm_distances(model, tokens)[0, 0, 1:-1]
        trees.append(distances_to_tree(g.words, d))
    assert trees[0] != right_branching(gold[0].words)
    expected = evaluate(zip(trees, (g.tree for g in gold)))
    right = evaluate(zip((right_branching(g.words) for g in gold),
                         (g.tree for g in gold)))
    assert expected["sentence_f1"] != right["sentence_f1"]
    assert cli.main(["evaluate", "--model", str(run), "--treebank", "sinica",
                     "--nltk-data", str(fake_nltk_data), "--layer", "1",
                     "--json", "--quiet"]) == 0
    result = json.loads(capsys.readouterr().out)
    for key in ("sentence_f1", "corpus_f1"):
        assert result[key] == pytest.approx(expected[key])
    # No backward LSTM exists: said so when a reading needs one.
    with pytest.raises(ValueError, match="An LSTM run has no backward"):
        from on_lstm_keras import runs
        runs.evaluate_readings(str(run), "sinica", nltk_data=fake_nltk_data,
                               readings=["both"])
    assert cli.main(["evaluate", "--model", str(run), "--treebank", "sinica",
                     "--nltk-data", str(fake_nltk_data), "--reading", "both",
                     "--quiet"]) != 0
    assert "An LSTM run has no backward" in capsys.readouterr().err


def test_readings_of_an_lstm_run_are_chosen_on_its_forward_reading(
        tmp_path, fake_nltk_data):
    from on_lstm_keras import runs

    run = tmp_path / "lstm"
    write_run(run, recurrent="lstm", seed=4)
    choice, table = runs.choose_reading(str(run), "sinica",
                                        nltk_data=fake_nltk_data)
    assert {c["reading"] for c in table["cells"]} == {"forward"}
    assert {c["layer"] for c in table["cells"]} == {1, 2, "mean"}
    assert runs.saved_reading(str(run))["layer"] == choice["layer"]


def test_untrained_copy_holds_fresh_weights_of_the_same_architecture(
        tmp_path):
    import json

    from on_lstm_keras import runs
    from on_lstm_keras.config import ModelConfig
    from on_lstm_keras.models.saving import load_run

    main = tmp_path / "run"
    write_run(main, seed=1, train_directions="both",
              default_reading={"reading": "both", "layer": 1,
                               "tree_rule": "plain"})
    write_run(main / "backward", direction="backward", seed=2)
    write_run(main / "lstm", recurrent="lstm", seed=3)
    copy = tmp_path / "copy"
    info = runs.untrained_copy(str(main), str(copy))
    recorded = json.loads((main / "run.json").read_text())
    assert info["untrained"] == {"from": str(main.resolve()), "seed": 7}
    assert "results" not in info and "default_reading" not in info
    assert {k: v for k, v in info.items() if k != "untrained"} == {
        k: v for k, v in recorded.items()
        if k not in ("results", "default_reading")}
    for inner in ("", "backward", "lstm"):
        trained = load_run(str(main / inner))
        untrained = load_run(str(copy / inner))
        assert untrained.vocab.words == trained.vocab.words
        assert untrained.info["model"] == trained.info["model"]
        keras.utils.set_random_seed(7)
        fresh = ONLSTMLanguageModel.from_model_config(
            ModelConfig.from_dict(trained.info["model"]),
            len(trained.vocab), seed=7)
        fresh.build_for(1)
        for got, want, old in zip(untrained.model.get_weights(),
                                  fresh.get_weights(),
                                  trained.model.get_weights()):
            np.testing.assert_array_equal(got, want)
            assert not np.allclose(got, old)
    # Another seed, other weights.
    runs.untrained_copy(str(main), str(tmp_path / "seed3"), seed=3)
    other = load_run(str(tmp_path / "seed3")).model.get_weights()
    assert not np.allclose(other[1], load_run(str(copy)).model.get_weights()[1])
    with pytest.raises(ValueError, match="output_dir="):
        runs.untrained_copy(str(main), str(copy))
    with pytest.raises(ValueError, match="output_dir="):
        runs.untrained_copy(str(main), str(main))
    with pytest.raises(ValueError, match="seed=-1"):
        runs.untrained_copy(str(main), str(tmp_path / "bad"), seed=-1)
    with pytest.raises(FileNotFoundError, match="no run"):
        runs.untrained_copy(str(tmp_path / "none"), str(tmp_path / "c2"))


def test_evaluate_untrained_scores_a_fresh_copy_end_to_end(
        tmp_path, fake_nltk_data, capsys):
    import json

    from on_lstm_keras import cli
    from on_lstm_keras import runs

    main = tmp_path / "run"
    write_run(main, seed=1, train_directions="both",
              default_reading={"reading": "both", "layer": 2,
                               "tree_rule": "plain"})
    write_run(main / "backward", direction="backward", seed=2)
    copy = tmp_path / "copy"
    runs.untrained_copy(str(main), str(copy), seed=5)
    base = ["evaluate", "--model", str(main), "--treebank", "sinica",
            "--nltk-data", str(fake_nltk_data), "--untrained",
            "--untrained-seed", "5", "--json", "--quiet"]
    for flags, reading in (
            (["--reading", "both", "--layer", "mean"],
             dict(reading="both", layer="mean", tree_rule="plain")),
            ([], dict(reading="both", layer=2, tree_rule="plain")),
            (["--reading", "forward", "--tree-rule", "official"],
             dict(reading="forward", layer=2, tree_rule="official"))):
        # Each setting not given is the trained run's recorded one.
        expected = runs.evaluate_treebank(
            "sinica", str(copy), nltk_data=fake_nltk_data, **reading)
        assert cli.main([*base, *flags]) == 0
        result = json.loads(capsys.readouterr().out)
        assert result["untrained"] == {"from": str(main), "seed": 5}
        assert result["model"] == str(main)
        for key in ("sentence_f1", "corpus_f1"):
            assert result[key] == pytest.approx(expected[key])
    # The reading is chosen on the copy as on any run, all three readings.
    choice, table = runs.choose_reading(str(copy), "sinica",
                                        nltk_data=fake_nltk_data)
    assert {c["reading"] for c in table["cells"]} == {
        "forward", "backward", "both"}
    assert runs.saved_reading(str(copy))["reading"] == choice["reading"]
    assert cli.main(["evaluate", "--model", str(main), "--treebank",
                     "sinica", "--nltk-data", str(fake_nltk_data),
                     "--untrained", "--choose-default", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "untrained (seed 7; nothing recorded in the run)" in out
    assert json.loads((main / "run.json").read_text())["default_reading"] == {
        "reading": "both", "layer": 2, "tree_rule": "plain"}
    assert cli.main(["evaluate", "--baseline", "right", "--treebank",
                     "sinica", "--nltk-data", str(fake_nltk_data),
                     "--untrained"]) != 0
    assert "--untrained copies a model's run" in capsys.readouterr().err


# -- the mirrored treebank ------------------------------------------------

def write_both(tmp_path):
    """A run with a backward model: `(run_dir, forward, backward, vocab)`."""
    main = tmp_path / "run"
    forward, vocab = write_run(main, seed=1, train_directions="both")
    backward, _ = write_run(main / "backward", direction="backward", seed=2)
    return main, forward, backward, vocab


def sinica_gold(nltk_data):
    from on_lstm_keras.parsing import load_sinica

    return [g for g in load_sinica(nltk_data=nltk_data) if len(g.words) >= 2]


@pytest.mark.parametrize("layer", [1, "mean"])
def test_mirrored_both_reading_is_the_mirror_of_the_original(
        tmp_path, fake_nltk_data, layer):
    from on_lstm_keras import runs
    from on_lstm_keras.models.saving import load_run
    from on_lstm_keras.parsing import distances_to_tree
    from on_lstm_keras.parsing import evaluate
    from on_lstm_keras.parsing import mirror_sentence
    from on_lstm_keras.parsing import mirror_tree
    from on_lstm_keras.parsing.scores import split_scores
    from on_lstm_keras.runs.parse import read_boundaries

    main, *_ = write_both(tmp_path)
    gold = sinica_gold(fake_nltk_data)
    mirrored = [mirror_sentence(g) for g in gold]
    original = runs.parse(str(main), [g.words for g in gold], reading="both",
                          layer=layer, tree_rule="plain")
    pairs = read_boundaries(load_run(str(main)),
                            load_run(str(main / "backward")), "both",
                            [m.words for m in mirrored], layer, False,
                            mirrored=True)
    for parse, m, (f, b) in zip(original, mirrored, pairs):
        n = len(m.words)
        scores = split_scores(f, b, layer)
        # Word i's score is boundary i's (the one before it), and boundary
        # j of the mirror is boundary n - j of the original: the mirror's
        # words 1..n-1 score what the original's words n-1..1 score. (Word
        # 0's is the original's sentence end, which no score holds.)
        expected = [parse.split_scores[n - i] for i in range(1, n)]
        np.testing.assert_allclose(scores[1:], expected, rtol=0, atol=1e-9)
        # The plain rule never reads word 0's score: its tree is the mirror.
        assert distances_to_tree(m.words, scores, "plain") == mirror_tree(
            parse.tree)
    assert any(p.tree != mirror_tree(m.tree) for p, m in zip(original,
                                                             mirrored))
    # Spans mirror with the gold: the F1 is the original's.
    want = evaluate(zip((mirror_tree(p.tree) for p in original),
                        (m.tree for m in mirrored)))
    unmirrored = runs.evaluate_treebank(
        "sinica", str(main), reading="both", layer=layer, tree_rule="plain",
        nltk_data=fake_nltk_data)
    got = runs.evaluate_treebank(
        "sinica", str(main), reading="both", layer=layer, tree_rule="plain",
        nltk_data=fake_nltk_data, mirrored=True)
    assert got["mirrored"] is True and got["reading"] == "both"
    for key in ("sentence_f1", "corpus_f1"):
        assert got[key] == pytest.approx(want[key])
        assert got[key] == pytest.approx(unmirrored[key])
    table = runs.evaluate_readings(str(main), "sinica", halves=(None,),
                                   readings=["both"], layers=[layer],
                                   tree_rules=["plain"],
                                   nltk_data=fake_nltk_data, mirrored=True)
    (cell,) = table["cells"]
    assert table["mirrored"] is True
    assert cell["sentence_f1"] == pytest.approx(want["sentence_f1"])


def test_mirrored_forward_reading_reads_the_backward_model_left_to_right(
        tmp_path, fake_nltk_data):
    from on_lstm_keras import runs
    from on_lstm_keras.parsing import distances_to_tree
    from on_lstm_keras.parsing import evaluate
    from on_lstm_keras.parsing import mirror_sentence

    main, forward, backward, vocab = write_both(tmp_path)
    mirrored = [mirror_sentence(g) for g in sinica_gold(fake_nltk_data)]
    table = runs.evaluate_readings(str(main), "sinica", halves=(None,),
                                   layers=[2], tree_rules=["official"],
                                   nltk_data=fake_nltk_data, mirrored=True)
    cells = {c["reading"]: c for c in table["cells"]}
    for reading, model in (("forward", backward), ("backward", forward)):
        # The reference, layer 2's `d_f` after the opening `<eos>`: the
        # mirror's forward model (trained on reversed sentences) is fed the
        # mirrored sentence as it is, `<eos> m_0 .. m_(n-1) <eos>`, and its
        # `d_f` at m_i scores word i. The mirror's backward model (the
        # run's forward one) is fed `<eos> m_(n-1) .. m_0 <eos>` (the
        # original sentence); its `d_f` at m_(i-1) (at the closing `<eos>`
        # for i = 0) scores the boundary before m_i, word i.
        trees = []
        for m in mirrored:
            n = len(m.words)
            words = m.words if reading == "forward" else m.words[::-1]
            tokens = np.array([[vocab.eos_id, *vocab.encode(words),
                                vocab.eos_id]], dtype="int32")
            _, d = model(tokens, training=False, return_distances=True)
            d = np.asarray(d)[0, 1, 1:, DISTANCE_FORGET]
            scores = d[:n] if reading == "forward" else d[::-1][:n]
            trees.append(distances_to_tree(m.words, scores, "official"))
        want = evaluate(zip(trees, (m.tree for m in mirrored)))
        got = runs.evaluate_treebank(
            "sinica", str(main), reading=reading, layer=2,
            tree_rule="official", nltk_data=fake_nltk_data, mirrored=True)
        assert got["reading"] == reading
        for key in ("sentence_f1", "corpus_f1"):
            assert got[key] == pytest.approx(want[key])
            assert cells[reading][key] == pytest.approx(want[key])
    # The two models' trees differ (so the roles cannot be mixed up).
    assert cells["forward"]["sentence_f1"] != pytest.approx(
        cells["backward"]["sentence_f1"])


# One right-branching sentence of four words, [甲, [乙, [丙, 丁]]], in the
# Sinica treebank's format.
RIGHT_BRANCHING_SINICA = (
    "#1:1.[1] S(agent:NP(Head:Nba:甲)|Head:VP(Head:VC1:乙|goal:NP("
    "quantifier:DM:丙|Head:Nab:丁)))#。(PERIODCATEGORY)\n")


def test_baselines_on_the_mirrored_gold(tmp_path):
    from on_lstm_keras import runs
    from on_lstm_keras.parsing import load_sinica

    data = tmp_path / "nltk_data"
    (data / "corpora" / "sinica_treebank").mkdir(parents=True)
    (data / "corpora" / "sinica_treebank" / "parsed").write_text(
        RIGHT_BRANCHING_SINICA, encoding="utf-8")
    (gold,) = load_sinica(nltk_data=data)
    assert gold.tree == ["甲", ["乙", ["丙", "丁"]]]
    # By hand: the gold spans are (1, 4) and (2, 4), and the sentence
    # (0, 4). Right-branching finds all three; left-branching's (0, 2) and
    # (0, 3) none, but the sentence: sentence F1 0 (it leaves the sentence
    # out), corpus F1 2 * (1/3 * 1/3) / (2/3) = 1/3. On the mirror the gold
    # is left-branching, and the two trade places.
    full, none = (100.0, 100.0), (0.0, 100 / 3)
    for baseline, original, mirrored in (("right", full, none),
                                         ("left", none, full)):
        for flag, want in ((False, original), (True, mirrored)):
            got = runs.evaluate_treebank("sinica", baseline=baseline,
                                         nltk_data=data, mirrored=flag)
            assert got.get("mirrored", False) is flag
            assert (got["sentence_f1"], got["corpus_f1"]) == pytest.approx(
                want)
    main, *_ = write_both(tmp_path)
    table = runs.evaluate_readings(str(main), "sinica", halves=(None,),
                                   layers=[1], tree_rules=["plain"],
                                   nltk_data=data, mirrored=True)
    scored = {b["baseline"]: (b["sentence_f1"], b["corpus_f1"])
              for b in table["baselines"]}
    assert scored["left"] == pytest.approx(full)
    assert scored["right"] == pytest.approx(none)


def test_mirrored_readings_without_a_backward_model(tmp_path,
                                                   fake_nltk_data):
    from on_lstm_keras import runs

    run = tmp_path / "lstm"
    write_run(run, recurrent="lstm", seed=4)
    table = runs.evaluate_readings(str(run), "sinica", halves=(None,),
                                   nltk_data=fake_nltk_data, mirrored=True)
    # Only the run's own model: on the mirror, its backward reading.
    assert {c["reading"] for c in table["cells"]} == {"backward"}
    with pytest.raises(ValueError, match="run's backward one"):
        runs.evaluate_readings(str(run), "sinica", readings=["forward"],
                               nltk_data=fake_nltk_data, mirrored=True)
    with pytest.raises(ValueError, match=r"reading='both'.*mirrored=True"):
        runs.evaluate_treebank("sinica", str(run), reading="both",
                               nltk_data=fake_nltk_data, mirrored=True)
    # Not given, the reading is the run's own model's, named as on the
    # mirror.
    result = runs.evaluate_treebank("sinica", str(run), layer=1,
                                    nltk_data=fake_nltk_data, mirrored=True)
    assert result["reading"] == "backward"
    original = runs.evaluate_treebank("sinica", str(run), layer=1,
                                      nltk_data=fake_nltk_data)
    assert "reading" not in original and "mirrored" not in original


def test_evaluate_mirrored_end_to_end(tmp_path, fake_nltk_data, capsys):
    import json

    from on_lstm_keras import cli
    from on_lstm_keras import runs

    main, *_ = write_both(tmp_path)
    base = ["evaluate", "--model", str(main), "--treebank", "sinica",
            "--nltk-data", str(fake_nltk_data), "--mirrored", "--quiet"]
    expected = runs.evaluate_treebank(
        "sinica", str(main), reading="forward", layer="mean",
        nltk_data=fake_nltk_data, mirrored=True)
    record = tmp_path / "mirrored.json"
    assert cli.main([*base, "--reading", "forward", "--layer", "mean",
                     "--json", "--record", str(record)]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["mirrored"] is True and result["reading"] == "forward"
    for key in ("sentence_f1", "corpus_f1"):
        assert result[key] == pytest.approx(expected[key])
    assert runs.read_record(str(record))["figures"]["corpus_f1"] == (
        pytest.approx(expected["corpus_f1"]))
    assert cli.main([*base, "--reading", "forward", "--layer", "mean"]) == 0
    out = capsys.readouterr().out
    assert "sinica mirrored (each sentence reversed" in out
    assert f"sentence F1 {expected['sentence_f1']:.1f}" in out
    assert cli.main([*base, "--choose-default"]) != 0
    assert "give one" in capsys.readouterr().err
    assert cli.main([*base, "--reading", "backward", "--backward-model",
                     str(main / "backward")]) != 0
    assert "mirrored language's forward model" in capsys.readouterr().err


# -- the controls side by side --------------------------------------------

def test_compare_controls_against_each_control_scored_on_its_own(
        tmp_path, fake_nltk_data, capsys):
    """Every row is what `evaluate_treebank` gives for its chosen reading
    (the untrained row: of a copy drawn on its own with the run's seed);
    each reading is the dev half's best of its rule; every difference is
    the difference of the two rows' F1, inside its interval; the CLI
    prints and records the same."""
    import json

    from on_lstm_keras import cli
    from on_lstm_keras import runs

    main, *_ = write_both(tmp_path)
    write_run(main / "lstm", recurrent="lstm", seed=3)
    result = runs.compare_controls(str(main), "sinica",
                                   nltk_data=fake_nltk_data, resamples=500)
    untrained = tmp_path / "untrained"
    runs.untrained_copy(str(main), str(untrained))
    paths = {"onlstm": str(main), "lstm": str(main / "lstm"),
             "untrained": str(untrained)}
    rows = {(r["system"], r["tree_rule"]): r for r in result["rows"]}
    assert set(rows) == {*((s, t) for s in ("onlstm", "lstm", "untrained")
                           for t in ("official", "plain")),
                         *((b, None) for b in ("left", "right", "balanced",
                                               "random"))}
    for (system, rule), row in rows.items():
        for column, cell in row["cells"].items():
            half, mirrored = column.split()[0], column.endswith("mirrored")
            if rule is None:
                want = runs.evaluate_treebank(
                    "sinica", baseline=system, nltk_data=fake_nltk_data,
                    half=half, mirrored=mirrored)
            else:
                reading = row["reading"]
                want = runs.evaluate_treebank(
                    "sinica", paths[system], nltk_data=fake_nltk_data,
                    half=half, layer=row["layer"], tree_rule=rule,
                    reading=runs.mirror_reading(reading) if mirrored
                    else reading, mirrored=mirrored)
            if system == "random":
                continue  # its draws follow the sentences of both halves
            assert cell["sentence_f1"] == pytest.approx(want["sentence_f1"])
            assert cell["corpus_f1"] == pytest.approx(want["corpus_f1"])
    for system in ("onlstm", "lstm", "untrained"):
        table = runs.evaluate_readings(paths[system], "sinica",
                                       nltk_data=fake_nltk_data)
        for rule in ("official", "plain"):
            best = max(c["sentence_f1"] for c in table["cells"]
                       if c["half"] == "dev" and c["tree_rule"] == rule)
            assert rows[system, rule]["cells"]["dev"]["sentence_f1"] == best
    assert rows["lstm", "plain"]["reading"] == "forward"
    assert len(result["differences"]) == 2 * 4 * 3
    for d in result["differences"]:
        mine = rows["onlstm", d["tree_rule"]]["cells"][d["column"]]
        other = rows[d["minus"], None if d["best_baseline"]
                     else d["tree_rule"]]["cells"][d["column"]]
        assert d["difference"] == pytest.approx(
            mine["sentence_f1"] - other["sentence_f1"])
        assert d["low"] <= d["difference"] <= d["high"]
    recorded = {"valid": None, "test": 12.5}  # what write_run records
    assert result["perplexity"] == {"onlstm": recorded, "lstm": recorded,
                                    "untrained": None}
    assert result["untrained_seed"] == result["run_seed"] == 7
    record = tmp_path / "controls.json"
    assert cli.main(["controls", "--model", str(main), "--treebank", "sinica",
                     "--nltk-data", str(fake_nltk_data), "--resamples", "500",
                     "--json", "--record", str(record), "--quiet"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == json.loads(json.dumps(result))
    assert runs.read_record(str(record))["figures"] == printed
    assert runs.read_record(str(record))["seed"] == 7  # the run's
    assert cli.main(["controls", "--model", str(main), "--treebank", "sinica",
                     "--nltk-data", str(fake_nltk_data), "--resamples", "500",
                     "--quiet"]) == 0
    text = capsys.readouterr().out
    row = rows["onlstm", "plain"]
    assert (f"onlstm plain ({row['reading']}, layer {row['layer']})"
            in text)
    assert f"{row['cells']['test mirrored']['sentence_f1']:.1f}" in text
    assert "no LSTM row" not in text
    # A run without an LSTM: its rows are missing, and the table says why.
    import shutil
    shutil.rmtree(main / "lstm")
    assert cli.main(["controls", "--model", str(main), "--treebank", "sinica",
                     "--nltk-data", str(fake_nltk_data), "--resamples", "50",
                     "--quiet"]) == 0
    text = capsys.readouterr().out
    assert "no LSTM row" in text and "--with-lstm" in text
    assert not any(line.startswith("lstm ") for line in text.splitlines())


def test_sentence_scores_average_to_the_sentence_f1(tmp_path, fake_nltk_data):
    from on_lstm_keras import runs

    main, *_ = write_both(tmp_path)
    table = runs.evaluate_readings(str(main), "sinica", layers=[1],
                                   nltk_data=fake_nltk_data,
                                   sentence_scores=True)
    for cell in table["cells"] + table["baselines"]:
        sentences = table["halves"][cell["half"]]["sentences"]
        assert len(cell["sentence_scores"]) == sentences
        assert np.mean(cell["sentence_scores"]) == pytest.approx(
            cell["sentence_f1"])


def test_the_untrained_network_is_where_training_started(tmp_path):
    """With the run's seed, the untrained weights are those `train_run`
    draws before its first step: a stateful model built for the training
    batch (its carried states aside)."""
    from on_lstm_keras import runs

    main = tmp_path / "run"
    write_run(main, seed=1)
    model, seed = runs.untrained_model(str(main))
    model_config, training_config = runs.recorded_configs(str(main))
    assert seed == training_config.seed == 7
    keras.utils.set_random_seed(seed)
    started = ONLSTMLanguageModel.from_model_config(
        model_config, len(SINICA_WORDS) + 3, stateful=True, seed=seed)
    started.build_for(training_config.batch_size)
    assert len(model.trainable_weights) == len(started.trainable_weights) == 8
    for got, want in zip(model.trainable_weights, started.trainable_weights):
        np.testing.assert_array_equal(np_(got), np_(want))
