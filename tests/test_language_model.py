"""The stacked ON-LSTM language model, its regularisers and its training."""

import csv
import math
import os

import numpy as np
import pytest

import keras

from on_lstm_keras import ONLSTM
from on_lstm_keras.data import BPTTSequence
from on_lstm_keras.data import Vocabulary
from on_lstm_keras.data import batchify
from on_lstm_keras.models import ONLSTMLanguageModel
from on_lstm_keras.models import Perplexity
from on_lstm_keras.models import WordDropoutEmbedding
from on_lstm_keras.models.saving import load_run
from on_lstm_keras.models.training import compile_language_model
from on_lstm_keras.models.training import evaluate_perplexity
from on_lstm_keras.models.training import make_optimizer
from on_lstm_keras.models.training import train_language_model
from on_lstm_keras.parsing.model_parser import parse_sentences
from on_lstm_keras.parsing.model_parser import sentence_distances
from on_lstm_keras.parsing.trees import distances_to_tree

pytestmark = pytest.mark.backend


def np_(x):
    return keras.ops.convert_to_numpy(x)


def small_model(**kwargs):
    config = dict(
        vocab_size=30, embedding_size=8, hidden_size=12, num_layers=3,
        chunk_size=4, seed=3,
    )
    config.update(kwargs)
    return ONLSTMLanguageModel(**config)


def test_single_level_onlstm_is_exactly_keras_lstm():
    """The LSTM baseline: one level, reverse-cumsum master input."""
    rng = np.random.default_rng(0)
    units, features = 6, 4
    lstm = keras.layers.LSTM(units, return_sequences=True)
    lstm.build((None, None, features))
    kernel, recurrent, bias = (
        rng.normal(0, 0.5, w.shape).astype("float32") for w in lstm.get_weights()
    )
    lstm.set_weights([kernel, recurrent, bias])
    layer = ONLSTM(units, units, master_input="reverse_cumsum",
                   return_sequences=True)
    layer.build((None, None, features))
    extra = rng.normal(0, 0.5, (features + units + 1, 2)).astype("float32")
    layer.set_weights([
        np.concatenate([kernel, extra[:features]], 1),
        np.concatenate([recurrent, extra[features:-1]], 1),
        np.concatenate([bias, extra[-1]]),
    ])
    x = rng.normal(size=(3, 7, features)).astype("float32")
    np.testing.assert_allclose(np_(layer(x)), np_(lstm(x)), atol=1e-5)


def test_architecture_and_tied_weights():
    model = small_model(num_layers=3)
    model.build_for(2)
    assert model.layer_sizes == [12, 12, 8]  # last layer = embedding size
    shapes = sorted(tuple(w.shape) for w in model.trainable_weights)
    width = lambda u: 4 * u + 2 * (u // 4)  # noqa: E731
    expected = sorted([
        (30,), (30, 8),  # output bias, embedding (shared with the output)
        (8, width(12)), (12, width(12)), (width(12),),
        (12, width(12)), (12, width(12)), (width(12),),
        (12, width(8)), (8, width(8)), (width(8),),
    ])
    assert shapes == expected
    untied = small_model(tie_weights=False)
    untied.build_for(2)
    assert untied.layer_sizes == [12, 12, 12]
    assert any(tuple(w.shape) == (12, 30) for w in untied.trainable_weights)


def test_tied_output_is_embedding_transpose():
    model = small_model(num_layers=1, embedding_size=8, chunk_size=4)
    model.build_for(1)
    tokens = np.array([[5, 6, 7]], "int32")
    logits = np_(model(tokens))
    # The last hidden state through the transposed embedding plus bias.
    x = np_(model.embedding(tokens))
    h, _ = model.rnn_layers[0](x)[:2]
    emb = np_(model.embedding.embeddings)
    bias = np_(model.output_bias)
    np.testing.assert_allclose(logits, np_(h) @ emb.T + bias, atol=1e-5)


def test_word_dropout_drops_whole_words_only_in_training():
    layer = WordDropoutEmbedding(50, 6, word_dropout=0.5, seed=0)
    tokens = np.tile(np.arange(1, 50), (4, 1))
    plain = np_(layer(tokens))
    dropped = np_(layer(tokens, training=True))
    zero = np.all(dropped == 0, axis=-1)
    # One decision per word: a word is dropped in every row or in none.
    assert np.all(zero == zero[:1])
    assert 0.2 < zero[0].mean() < 0.8
    kept = ~zero
    np.testing.assert_allclose(dropped[kept], 2.0 * plain[kept], rtol=1e-6)
    np.testing.assert_array_equal(np_(layer(tokens, training=False)), plain)


def test_locked_dropout_shares_the_mask_over_time():
    model = small_model(input_dropout=0.5)
    x = np.ones((3, 9, 8), "float32")
    out = np_(model.locked_dropouts[0](x, training=True))
    assert np.all(out == out[:, :1, :])
    assert np.any(out == 0) and np.any(out > 0)


def test_perplexity_metric_against_hand_computation():
    metric = Perplexity(from_logits=False)
    probs = np.array([[[0.5, 0.25, 0.25], [0.1, 0.8, 0.1], [0.2, 0.2, 0.6]]])
    y = np.array([[0, 1, 2]])
    weights = np.array([[1.0, 1.0, 0.0]])
    metric.update_state(y, probs, sample_weight=weights)
    expected = math.exp(-(math.log(0.5) + math.log(0.8)) / 2)
    assert float(metric.result()) == pytest.approx(expected, rel=1e-5)


def test_perplexity_gives_the_cross_entropy_what_the_loss_gives_it(
    monkeypatch,
):
    # A compiled training step computes the softmax cross-entropy over the
    # logits once for the loss and the metric only if both call it with
    # the same arguments (with integer targets in the metric it made a
    # second pass, 2 to 5% of a step). This fails if Keras' loss stops
    # converting the targets to floats, or the metric does.
    model = compile_language_model(
        ONLSTMLanguageModel(12, embedding_size=4, hidden_size=4,
                            num_layers=1, chunk_size=2), "adam")
    loss = model.loss
    calls = []

    def recording(inner):
        def fn(y_true, y_pred, from_logits=False, **kwargs):
            calls.append((keras.backend.standardize_dtype(y_true.dtype),
                          keras.backend.standardize_dtype(y_pred.dtype),
                          from_logits))
            return inner(y_true, y_pred, from_logits=from_logits, **kwargs)
        return fn

    loss.fn = recording(loss.fn)
    monkeypatch.setattr(
        keras.losses, "sparse_categorical_crossentropy",
        recording(keras.losses.sparse_categorical_crossentropy))
    y_true = np.array([[1, 2, 3]], "int32")
    logits = np.random.default_rng(0).normal(size=(1, 3, 12))
    logits = logits.astype("float32")
    loss(y_true, logits)
    Perplexity().update_state(y_true, logits)
    assert len(calls) == 2
    assert calls[0] == calls[1] == ("float32", "float32", True)


def test_bptt_windows_continue_each_row():
    ids = list(range(1, 42))  # 41 tokens, 2 rows of 20
    data = BPTTSequence(ids, batch_size=2, bptt=6)
    rows = batchify(ids, 2)
    assert rows[1, 0] == 21
    xs, ys, ws = zip(*(data[k] for k in range(len(data))))
    x = np.concatenate(xs, 1)
    y = np.concatenate(ys, 1)
    w = np.concatenate(ws, 1)
    real = w[0] > 0
    np.testing.assert_array_equal(x[:, real], rows[:, :-1])
    np.testing.assert_array_equal(y[:, real], rows[:, 1:])
    assert int(w.sum()) == 2 * 19 and np.all(x[:, ~real] == 0)


def test_bptt_arrays_hold_the_windows_one_after_the_other():
    ids = list(range(1, 42))  # 41 tokens, 2 rows of 20: 19 inputs a row
    rows = batchify(ids, 2)
    x, y, w = BPTTSequence(ids, batch_size=2, bptt=6).arrays()
    assert x.shape == y.shape == w.shape == (4 * 2, 6)
    for k in range(4):  # windows 0, 6, 12, 18; the last has 1 real step
        for b in range(2):
            real = min(6, 19 - 6 * k)
            r = 2 * k + b
            assert x[r, :real].tolist() == rows[b, 6 * k:6 * k + real].tolist()
            assert y[r, :real].tolist() == rows[b, 6 * k + 1:6 * k + 1 + real].tolist()
            assert w[r].tolist() == [1.0] * real + [0.0] * (6 - real)
            assert not x[r, real:].any() and not y[r, real:].any()
    with pytest.raises(ValueError, match="variable_length=True"):
        BPTTSequence(ids, 2, 6, variable_length=True).arrays()


def test_training_reads_the_same_batches_as_arrays_as_through_the_sequence(
        tmp_path, monkeypatch):
    """`fit` gets the windows as arrays (no Python call per batch), or the
    `BPTTSequence` itself above `ARRAY_TOKENS`: the same batches in the same
    order, so the same weights and perplexities."""
    from on_lstm_keras.models import training

    ids = pattern_stream(200)
    valid = pattern_stream(40, seed=1)
    items = []
    getitem = BPTTSequence.__getitem__
    monkeypatch.setattr(BPTTSequence, "__getitem__",
                        lambda self, k: items.append(k) or getitem(self, k))

    def run(directory):
        keras.utils.set_random_seed(0)
        model = small_model(vocab_size=8, num_layers=2, stateful=True,
                            recurrent_dropconnect=0.2, input_dropout=0.1)
        compile_language_model(model, make_optimizer("adam", 0.05))
        history = train_language_model(
            model, ids, valid, str(directory), batch_size=4, bptt=7,
            epochs=2, eval_batch_size=2, verbose=0,
        )
        return model, history.history

    as_arrays, logs = run(tmp_path / "a")
    assert items == []
    monkeypatch.setattr(training, "ARRAY_TOKENS", 0)
    as_sequence, sequence_logs = run(tmp_path / "b")
    assert len(items) > 2 * len(BPTTSequence(ids, 4, 7))
    # To rounding: the two paths compile to slightly different programs,
    # whose sums differ by CPU: after the two epochs at lr 0.05 the weights
    # were 1.8e-6 apart on one machine and 1.7e-5 on an AVX-512 one (the
    # same every run there); with the windows in the wrong order they
    # differ by 0.35.
    for a, b in zip(as_arrays.trainable_weights, as_sequence.trainable_weights):
        np.testing.assert_allclose(np_(a), np_(b), rtol=1e-4, atol=1e-4)
    for key in ("loss", "perplexity", "val_perplexity"):
        np.testing.assert_allclose(logs[key], sequence_logs[key], rtol=1e-5)


def test_variable_bptt_is_reproducible_and_covers_the_stream():
    ids = list(range(1, 2001))
    a = BPTTSequence(ids, 4, 20, variable_length=True, seed=5)
    b = BPTTSequence(ids, 4, 20, variable_length=True, seed=5)
    a.set_epoch(3)
    b.set_epoch(3)
    windows = [a.window(k) for k in range(len(a))]
    assert windows == [b.window(k) for k in range(len(b))]
    assert len(windows) == len(BPTTSequence(ids, 4, 20))
    starts = [s for s, _ in windows]
    assert starts[0] == 0 and all(
        s + n == t for (s, n), t in zip(windows, starts[1:] + [499])
    )
    lengths = {n for _, n in windows}
    assert len(lengths) > 3
    b.set_epoch(4)
    assert [b.window(k) for k in range(len(b))] != windows
    for k in range(len(a)):
        x, y, w = a[k]
        assert x.shape[1] % 5 == 0 and int(w[0].sum()) == a.window(k)[1]


def test_stateful_model_carries_state_like_one_long_call():
    model = small_model(stateful=True, input_dropout=0, layer_dropout=0,
                        output_dropout=0, embedding_dropout=0, recurrent_dropconnect=0)
    model.build_for(2)
    tokens = np.random.default_rng(0).integers(1, 30, (2, 10)).astype("int32")
    first = np_(model(tokens[:, :4]))
    second = np_(model(tokens[:, 4:]))
    whole = np_(model.clone(stateful=False, batch_size=2)(tokens))
    np.testing.assert_allclose(np.concatenate([first, second], 1), whole, atol=1e-5)
    model.reset_rnn_states()
    np.testing.assert_allclose(np_(model(tokens[:, :4])), first, atol=1e-6)


# `xla=True` changes something on TensorFlow only: JAX always compiles.
XLA_CASES = [False, True] if keras.backend.backend() == "tensorflow" else [False]


@pytest.mark.parametrize("xla", XLA_CASES)
def test_evaluation_perplexity_does_not_depend_on_window_length(xla):
    """State carried across windows in `evaluate` (every backend)."""
    model = small_model()
    model.build_for(1)
    ids = list(np.random.default_rng(1).integers(1, 30, 200))
    short = evaluate_perplexity(model, ids, batch_size=2, bptt=7, xla=xla)
    long = evaluate_perplexity(model, ids, batch_size=2, bptt=99, xla=xla)
    assert short == pytest.approx(long, rel=1e-4)
    # Independent check: exp of the mean NLL of one stateless pass per row.
    rows = batchify(ids, 2)
    logits = np_(model.clone(stateful=False, batch_size=2)(rows[:, :-1]))
    logp = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    nll = -np.take_along_axis(logp, rows[:, 1:, None], -1)
    assert short == pytest.approx(float(np.exp(nll.mean())), rel=1e-4)


def test_perplexity_ignores_the_padding_of_the_last_window():
    """A model that finds <pad> (id 0) very unlikely: counting the padded
    targets would raise the perplexity a lot."""
    model = small_model(num_layers=1)
    model.build_for(1)
    model.output_bias.assign(np.eye(30)[0].astype("float32") * -20)
    ids = list(np.random.default_rng(2).integers(1, 30, 30))
    rows = batchify(ids, 3)
    logits = np_(model(rows[:, :-1])).astype(np.float64)
    logp = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    nll = -np.take_along_axis(logp, rows[:, 1:, None], -1)
    # 9 targets a row: windows of 4 leave 3 padded targets in the last one.
    got = evaluate_perplexity(model, ids, batch_size=3, bptt=4)
    assert got == pytest.approx(float(np.exp(nll.mean())), rel=1e-4)


def pattern_stream(n_sentences=300, seed=0):
    """A toy language: 'a b c' or 'a d e' sentences, words 3..7."""
    rng = np.random.default_rng(seed)
    ids = []
    for _ in range(n_sentences):
        ids += [3, 4, 5] if rng.random() < 0.5 else [3, 6, 7]
        ids.append(2)  # <eos>
    return ids


@pytest.mark.parametrize("xla", XLA_CASES)
def test_training_learns_and_resumes_exactly(tmp_path, xla):
    ids = pattern_stream()
    valid = pattern_stream(40, seed=1)

    def run(directory, epochs, resume=False):
        keras.utils.set_random_seed(0)
        model = small_model(vocab_size=8, num_layers=2, stateful=True,
                            recurrent_dropconnect=0.2, input_dropout=0.1)
        compile_language_model(model, make_optimizer("adam", 0.05), xla=xla)
        train_language_model(
            model, ids, valid, str(directory), batch_size=4, bptt=10,
            epochs=epochs, eval_batch_size=2, resume=resume, verbose=0,
        )
        return model

    straight = run(tmp_path / "a", 3)
    run(tmp_path / "b", 1)
    with pytest.raises(FileExistsError, match="--resume"):
        run(tmp_path / "b", 3)
    resumed = run(tmp_path / "b", 3, resume=True)
    assert resumed.jit_compile is (xla or keras.backend.backend() == "jax")
    for a, b in zip(straight.trainable_weights, resumed.trainable_weights):
        np.testing.assert_allclose(np_(a), np_(b), atol=1e-6)

    # Learned: 'b' or 'd' after 'a' is a coin flip, the rest is determined,
    # so the best perplexity is 2 ** (1/4) ≈ 1.19 against 8 for uniform.
    with open(tmp_path / "b" / "history.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [int(r["epoch"]) for r in rows] == [0, 1, 2]  # resumed: appended
    assert min(float(r["val_perplexity"]) for r in rows) < 2.5
    assert os.path.exists(tmp_path / "b" / "model.keras")


def test_resume_keeps_the_best_model_of_the_whole_run(tmp_path):
    """A resumed epoch that is worse than an earlier one must not replace
    `model.keras`: the best perplexity so far is carried over the resume."""
    ids = pattern_stream()
    valid = pattern_stream(40, seed=1)

    class SpoilFromEpoch1(keras.callbacks.Callback):
        """Scrambles the embedding after every batch of epoch 1 onwards."""

        def on_epoch_begin(self, epoch, logs=None):
            self.epoch = epoch

        def on_train_batch_end(self, batch, logs=None):
            if self.epoch >= 1:
                emb = self.model.embedding.embeddings
                noise = np.random.default_rng(batch).normal(0, 2, emb.shape)
                emb.assign(noise.astype("float32"))

    def run(epochs, resume=False):
        keras.utils.set_random_seed(0)
        model = small_model(vocab_size=8, num_layers=2, stateful=True,
                            recurrent_dropconnect=0.0, input_dropout=0.0)
        compile_language_model(model, make_optimizer("adam", 0.05))
        train_language_model(
            model, ids, valid, str(tmp_path), batch_size=4, bptt=10,
            epochs=epochs, eval_batch_size=2, resume=resume, verbose=0,
            callbacks=[SpoilFromEpoch1()],
        )

    run(1)
    path = str(tmp_path / "model.keras")
    best = [np_(w) for w in keras.saving.load_model(path).trainable_weights]
    run(2, resume=True)
    with open(tmp_path / "history.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [int(r["epoch"]) for r in rows] == [0, 1]
    first, second = (float(r["val_perplexity"]) for r in rows)
    assert second > first  # epoch 1 is worse
    kept = keras.saving.load_model(path)
    for a, b in zip(kept.trainable_weights, best):
        np.testing.assert_array_equal(np_(a), b)
    # The kept model's validation perplexity is epoch 0's.
    assert evaluate_perplexity(kept, valid, 2, 10) == pytest.approx(first, rel=1e-4)


def test_distances_for_parsing_trim_the_boundaries():
    model = small_model()
    model.build_for(1)
    vocab = Vocabulary(["<pad>", "<unk>", "<eos>"] + [f"w{i}" for i in range(27)])
    sentences = [["w1", "w2", "w3"], ["w4", "zzz"], ["w5", "w6", "w7", "w8"]]
    got = sentence_distances(model, vocab, sentences, batch_size=2)
    for words, distances in zip(sentences, got):
        tokens = np.array([[2, *vocab.encode(words), 2]], "int32")
        _, d = model(tokens, return_distances=True)
        np.testing.assert_allclose(distances, np_(d)[0, :, 1:-1, 0], atol=1e-6)
    (tree, d), = parse_sentences(model, vocab, sentences[:1], layer=2)
    tokens = np.array([[2, *vocab.encode(sentences[0]), 2]], "int32")
    layer_2 = np_(model(tokens, return_distances=True)[1])[0, 1, 1:-1, 0]
    np.testing.assert_allclose(d, layer_2, atol=1e-6)
    assert tree == distances_to_tree(sentences[0], layer_2)
    with pytest.raises(ValueError, match="layer=4"):
        parse_sentences(model, vocab, sentences, layer=4)


def test_load_run_reports_missing_and_corrupt_files(tmp_path):
    with pytest.raises(FileNotFoundError, match="No model directory"):
        load_run(str(tmp_path / "nope"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="model.keras"):
        load_run(str(tmp_path / "empty"))
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "model.keras").write_bytes(b"not a zip")
    Vocabulary(["<pad>", "<unk>", "<eos>"]).save(str(bad / "vocab.json"))
    with pytest.raises(ValueError, match="Corrupt model file"):
        load_run(str(bad))
    (bad / "vocab.json").write_text("{broken")
    with pytest.raises(ValueError, match="Corrupt vocabulary file"):
        load_run(str(bad))


def test_bad_arguments():
    with pytest.raises(ValueError, match="chunk_size=5"):
        small_model(chunk_size=5)
    with pytest.raises(ValueError, match="cell='gru'"):
        small_model(cell="gru")
    with pytest.raises(ValueError, match="recurrent='gru'"):
        small_model(recurrent="gru")
    with pytest.raises(ValueError, match="recurrent_dropconnect=1.0"):
        small_model(recurrent_dropconnect=1.0)
    model = small_model()
    with pytest.raises(ValueError, match="stateful=False"):
        train_language_model(model, [1] * 50, [1] * 50, "/tmp/x", batch_size=2)


def test_read_history_keeps_the_rows_before_the_checkpoint(tmp_path):
    from on_lstm_keras.models.training import read_history

    path = tmp_path / "history.csv"
    assert read_history(str(path)) == []
    path.write_text("epoch,loss,val_perplexity\n0,2.0,9.5\nép\n1,1.5,7.25\n"
                    "2,1.2,8.0\n", encoding="utf-8")
    # The torn middle row is skipped, the rows after it are kept.
    assert [r["epoch"] for r in read_history(str(path))] == ["0", "1", "2"]
    rows = read_history(str(path), before_epoch=2)
    assert [(r["epoch"], r["val_perplexity"]) for r in rows] == [
        ("0", "9.5"), ("1", "7.25")]
