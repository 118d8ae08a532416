"""Readings: the split-score combination against hand-computed values, the
`direction` field of the config and the model, and the `--reading`,
`--layer mean` and `--backward-model` flags on saved runs.

The model-side checks (a backward model's distances are the mirrored
distances of the reversal, against the NumPy re-derivation) are in
`test_parsing_model_parser.py`.
"""

import json

import numpy as np
import pytest

from on_lstm_keras import cli
from on_lstm_keras.config import ModelConfig
from on_lstm_keras.parsing import distances_to_tree
from on_lstm_keras.parsing.scores import layer_view
from on_lstm_keras.parsing.scores import split_scores
from on_lstm_keras.parsing.scores import zscore
from on_lstm_keras.runs import evaluate_treebank

# The scores and the config field are NumPy and plain Python, run once (on
# TensorFlow); the tests that build, save or run a model are marked
# `backend` one by one, so CI runs them on JAX too.
backend = pytest.mark.backend


# --- scores, by hand -------------------------------------------------------

def test_zscore_by_hand():
    # mean 2, population std 1.
    assert zscore([1.0, 3.0, 1.0, 3.0]).tolist() == [-1.0, 1.0, -1.0, 1.0]
    # mean 1, std sqrt(2/3): (x - 1) / 0.8165 = -1.2247, 0, 1.2247.
    np.testing.assert_allclose(zscore([0.0, 1.0, 2.0]),
                               [-1.224744871, 0.0, 1.224744871])
    # A constant view has no preference.
    assert zscore([0.3, 0.3, 0.3]).tolist() == [0.0, 0.0, 0.0]
    # Row by row.
    assert zscore([[1.0, 3.0], [5.0, 5.0]]).tolist() == [[-1.0, 1.0], [0.0, 0.0]]


def test_one_layer_of_one_direction_is_taken_as_it_is():
    f = [[0.1, 0.7, 0.2, 0.4], [0.5, 0.5, 0.9, 0.0]]  # 2 layers, 3 words
    assert split_scores(f, layer=1).tolist() == [0.1, 0.7, 0.2]
    assert split_scores(f, layer=2).tolist() == [0.5, 0.5, 0.9]
    # Default: the middle layer, the lower one of two.
    assert split_scores(f).tolist() == [0.1, 0.7, 0.2]
    # Backward boundaries: the same reading (boundary i for word i).
    assert split_scores(None, f, layer=2).tolist() == [0.5, 0.5, 0.9]


def test_mean_over_layers_by_hand():
    # Layer 1 [1 3 1 3] -> z [-1 1 -1 1]; layer 2 [0 2 2 0] -> [-1 1 1 -1];
    # mean [-1 1 0 0]; the last boundary (sentence end) is dropped.
    b = [[1.0, 3.0, 1.0, 3.0], [0.0, 2.0, 2.0, 0.0]]
    assert layer_view(b, "mean").tolist() == [-1.0, 1.0, 0.0, 0.0]
    assert split_scores(b, layer="mean").tolist() == [-1.0, 1.0, 0.0]


def test_both_directions_by_hand():
    # Forward [1 3 1 3] -> z [-1 1 -1 1]; backward [0 2 2 0] -> [-1 1 1 -1].
    f = [[1.0, 3.0, 1.0, 3.0]]
    b = [[0.0, 2.0, 2.0, 0.0]]
    assert split_scores(f, b).tolist() == [-1.0, 1.0, 0.0]
    # Scale does not matter: the backward model's distances ten times
    # larger (and shifted) give the same scores.
    b10 = [[5.0, 25.0, 25.0, 5.0]]
    assert split_scores(f, b10).tolist() == [-1.0, 1.0, 0.0]
    # A plain average would let the wide view decide: f + b10 is
    # [6 28 26 8], which puts boundary 2 near boundary 1.
    # Worked example, 4 words: forward [0 4 1 3 2] (mean 2, std sqrt 2),
    # backward [2 2 2 2 2] (constant: zeros).
    got = split_scores([[0.0, 4.0, 1.0, 3.0, 2.0]], [[2.0] * 5])
    s2 = np.sqrt(2.0)
    np.testing.assert_allclose(got, [-2 / s2 / 2, 2 / s2 / 2, -1 / s2 / 2,
                                     1 / s2 / 2])
    # Both directions with the mean over layers: each direction's mean is
    # z-scored again, so both directions weigh the same.
    f2 = [[1.0, 3.0, 1.0, 3.0], [0.0, 2.0, 2.0, 0.0]]  # mean [-1 1 0 0]
    # z of [-1 1 0 0]: mean 0, std sqrt(1/2) -> [-1.4142 1.4142 0 0].
    b2 = [[3.0, 1.0, 1.0, 3.0]]  # z [1 -1 -1 1]
    np.testing.assert_allclose(
        split_scores(f2, b2, layer="mean"),
        [(-np.sqrt(2) + 1) / 2, (np.sqrt(2) - 1) / 2, -0.5])


def test_scores_give_trees_in_distances_to_tree_form():
    words = ["a", "b", "c"]
    # Scores [-1 1 0]: the largest before "b".
    scores = split_scores([[1.0, 3.0, 1.0, 3.0]], [[0.0, 2.0, 2.0, 0.0]])
    assert distances_to_tree(words, scores) == ["a", ["b", "c"]]
    assert distances_to_tree(words, scores, tree_rule="plain") == ["a", ["b", "c"]]


def test_scores_reject_bad_input():
    with pytest.raises(ValueError, match="received neither"):
        split_scores()
    with pytest.raises(ValueError, match="same sentence, received 4 and 3"):
        split_scores([[1.0, 2.0, 3.0, 4.0]], [[1.0, 2.0, 3.0]])
    with pytest.raises(ValueError, match=r"`forward`.*shape \(4,\)"):
        split_scores([1.0, 2.0, 3.0, 4.0])
    with pytest.raises(ValueError, match="or 'mean', received: layer=3"):
        split_scores([[1.0, 2.0], [3.0, 4.0]], layer=3)
    with pytest.raises(ValueError, match="received: layer='all'"):
        split_scores([[1.0, 2.0]], layer="all")


def test_scores_are_float64_whatever_comes_in():
    f32 = np.array([[0.1, 0.7, 0.2, 0.4]], np.float32)
    view = layer_view(f32, layer=1)
    assert view.dtype == np.float64
    np.testing.assert_array_equal(view, f32[0].astype(np.float64))
    ints = split_scores([[1, 3, 2, 5]], layer=1)
    assert ints.dtype == np.float64 and ints.tolist() == [1.0, 3.0, 2.0]
    # The z-score is taken in float64: a float32 view agrees with the
    # float64 formula to float64 precision, not float32's.
    x = np.array([0.1, 0.7, 0.2, 0.4, 0.35], np.float32)
    x64 = x.astype(np.float64)
    want = (x64 - x64.mean()) / np.sqrt(np.mean((x64 - x64.mean()) ** 2))
    got = zscore(x)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13)


def test_a_one_word_sentence_has_two_boundaries():
    # The smallest sentence: boundary 0 and the end.
    assert split_scores([[1.0, 3.0]], [[2.0, 0.0]]).tolist() == [0.0]
    assert split_scores([[0.4, 0.9]], layer=1).tolist() == [0.4]


def test_a_constant_view_becomes_zeros_without_a_warning():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = zscore([[2.0, 2.0, 2.0], [1.0, 2.0, 3.0]])
        assert split_scores([[1.0, 3.0, 1.0, 3.0]],
                            [[5.0, 5.0, 5.0, 5.0]]).tolist() == [-0.5, 0.5, -0.5]
    np.testing.assert_allclose(got, [[0.0, 0.0, 0.0],
                                     [-1.224744871, 0.0, 1.224744871]])


def test_a_constant_view_is_zeros_even_when_its_mean_is_inexact():
    assert zscore([0.1, 0.1, 0.1]).tolist() == [0.0, 0.0, 0.0]
    # Row by row: a varying row beside it does not make it vary.
    got = zscore([[0.1, 0.1, 0.1], [0.0, 1.0, 2.0]])
    assert got[0].tolist() == [0.0, 0.0, 0.0]
    np.testing.assert_allclose(got[1], [-1.224744871, 0.0, 1.224744871])


# --- the direction field ---------------------------------------------------

def test_config_direction_round_trip_and_old_configs():
    config = ModelConfig(direction="backward")
    assert ModelConfig.from_dict(config.to_dict()) == config
    old = ModelConfig().to_dict()
    del old["direction"]
    assert ModelConfig.from_dict(old).direction == "forward"
    with pytest.raises(ValueError, match="direction='both'"):
        ModelConfig(direction="both")


@backend
def test_model_direction_round_trip():
    from on_lstm_keras.models import ONLSTMLanguageModel

    model = ONLSTMLanguageModel(20, embedding_size=4, hidden_size=4,
                                num_layers=1, chunk_size=2, direction="backward")
    config = model.get_config()
    assert config["direction"] == "backward"
    assert ONLSTMLanguageModel.from_config(config).direction == "backward"
    del config["direction"]  # saved before the field
    assert ONLSTMLanguageModel.from_config(config).direction == "forward"
    with pytest.raises(ValueError, match="direction='sideways'"):
        ONLSTMLanguageModel(20, direction="sideways")


# --- saved runs and the command line ---------------------------------------

WORDS = ["嘉珍", "和", "我", "住在", "同一條", "巷子", "臉色", "蒼白"]


def save_run(directory, model, vocab):
    from on_lstm_keras.models.saving import RUN_FILE
    from on_lstm_keras.models.saving import VOCAB_FILE
    from on_lstm_keras.models.saving import save_atomically
    from on_lstm_keras.models.saving import write_json

    directory.mkdir(parents=True)
    save_atomically(model, str(directory / "model.keras"))
    vocab.save(str(directory / VOCAB_FILE))
    write_json(str(directory / RUN_FILE), {"tokenizer": None})
    return str(directory)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """A forward run holding, in `backward/`, a backward model with the
    same weights; and that backward run on its own."""
    import keras

    from on_lstm_keras.data import Vocabulary
    from on_lstm_keras.models import ONLSTMLanguageModel

    keras.utils.set_random_seed(2)
    vocab = Vocabulary(["<pad>", "<unk>", "<eos>"] + WORDS)
    model = ONLSTMLanguageModel(len(vocab), embedding_size=8, hidden_size=8,
                                num_layers=2, chunk_size=4, seed=1)
    model.build_for(1)
    rng = np.random.default_rng(3)
    for layer in model.rnn_layers:
        layer.set_weights([rng.normal(0, 1.0, w.shape).astype("float32")
                           for w in layer.get_weights()])
    backward = model.clone(direction="backward")
    root = tmp_path_factory.mktemp("runs")
    forward_dir = save_run(root / "fwd", model, vocab)
    save_run(root / "fwd" / "backward", backward, vocab)
    alone = save_run(root / "only_fwd", model, vocab)
    return forward_dir, alone, model, backward, vocab


def parse_json(capsys, *args):
    assert cli.main(["parse", *args]) == 0
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


@backend
def test_parse_readings_on_the_command_line(runs, capsys):
    from on_lstm_keras.parsing.model_parser import parse_sentences

    forward_dir, alone, model, backward, vocab = runs
    sentence = " ".join(WORDS[:6])
    base = ["--model", forward_dir, "--presegmented", "--quiet", sentence]
    default, = parse_json(capsys, *base)
    forward, = parse_json(capsys, "--reading", "forward", *base)
    assert default == forward
    # `both` finds the run in MODEL/backward.
    both, = parse_json(capsys, "--reading", "both", "--layer", "mean", *base)
    (tree, _), = parse_sentences(model, vocab, [WORDS[:6]], layer="mean",
                                 reading="both", backward_model=backward)
    assert both == tree
    # Or takes it from --backward-model.
    same, = parse_json(capsys, "--reading", "both", "--layer", "mean",
                       "--backward-model", forward_dir + "/backward",
                       "--model", alone, "--presegmented", "--quiet", sentence)
    assert same == tree
    record, = parse_json(capsys, "--reading", "both", "--distances", *base)
    assert len(record["distances"]) == len(record["backward_distances"]) == 2
    assert len(record["scores"]) == 6
    (tree, scores), = parse_sentences(model, vocab, [WORDS[:6]],
                                      reading="both", backward_model=backward)
    assert record["tree"] == tree
    np.testing.assert_allclose(record["scores"], scores)
    # The backward run parses on its own, read right to left.
    alone_backward, = parse_json(capsys, "--model", forward_dir + "/backward",
                                 "--presegmented", "--quiet", sentence)
    (tree, _), = parse_sentences(backward, vocab, [WORDS[:6]])
    assert alone_backward == tree


@backend
@pytest.mark.parametrize("args, message", [
    (["--reading", "both"],
     "--reading both needs a backward model: give --backward-model DIR"),
    (["--backward-model", "x"],
     "--backward-model is read with --reading both or backward, received "
     "--reading (none) --backward-model x"),
    (["--reading", "forward", "--backward-model", "x"],
     "received --reading forward --backward-model x"),
    (["--reading", "backward"], "reading='backward'` needs a backward model"),
])
def test_parse_reading_errors_name_the_flags(runs, capsys, args, message):
    _, alone, *_ = runs
    assert cli.main(["parse", "--model", alone, "--quiet", *args, "a"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("on-lstm parse: error: ") and message in err


@backend
def test_evaluate_readings_and_layer_mean(runs, capsys, fake_nltk_data):
    forward_dir, alone, model, backward, vocab = runs
    base = ["evaluate", "--model", forward_dir, "--treebank", "sinica",
            "--nltk-data", str(fake_nltk_data), "--json", "--quiet"]

    def evaluate(*args):
        assert cli.main([*base, *args]) == 0
        return json.loads(capsys.readouterr().out)

    plain = evaluate()
    assert "reading" not in plain and plain["layer"] == 1
    both = evaluate("--reading", "both", "--layer", "mean")
    assert both["reading"] == "both" and both["layer"] == "mean"
    # What the API gives with the models passed in.
    api = evaluate_treebank(
        "sinica", model=alone, backward_model=forward_dir + "/backward",
        reading="both", layer="mean", nltk_data=str(fake_nltk_data))
    assert (api["sentence_f1"], api["corpus_f1"]) == (both["sentence_f1"],
                                                      both["corpus_f1"])
    every = evaluate("--reading", "both", "--layer", "all")
    assert [row["layer"] for row in every["per_layer"]] == [1, 2]
    one = evaluate("--reading", "both", "--layer", "2")
    assert every["per_layer"][1]["sentence_f1"] == one["sentence_f1"]
    assert every["per_layer"][1]["corpus_f1"] == one["corpus_f1"]
    backward_only = evaluate("--reading", "backward")
    assert backward_only["reading"] == "backward"


@backend
def test_evaluate_reading_errors_name_the_flags(runs, capsys, fake_nltk_data):
    _, alone, *_ = runs
    assert cli.main(["evaluate", "--baseline", "left", "--treebank", "sinica",
                     "--reading", "both"]) == 2
    assert ("--reading and --backward-model read a model, not a baseline"
            in capsys.readouterr().err)
    assert cli.main(["evaluate", "--model", alone, "--treebank", "sinica",
                     "--nltk-data", str(fake_nltk_data),
                     "--reading", "both"]) == 2
    assert "--reading both needs a backward model" in capsys.readouterr().err
