"""The run-recording steps of `runs.training` that `runs.train` takes for
each model: `record_run`, the resumed configs of `plan_training`,
`prepare_resume`, `finished_run` and `score_run`, checked on a tiny
hand-made corpus against `run.json` contents written out by hand.
"""

import dataclasses
import json
import os

import numpy as np
import pytest

from on_lstm_keras import runs
from on_lstm_keras.config import ModelConfig
from on_lstm_keras.config import TrainingConfig
from on_lstm_keras.data.corpus import Corpus
from on_lstm_keras.data.vocabulary import Vocabulary
from on_lstm_keras.runs import training

TRAIN = [["the", "cat", "sat"], ["the", "dog", "sat"], ["a", "cat", "ran"]]
VALID = [["the", "cat", "sat"], ["the", "dog"]]
TEST = [["a", "bird", "sat"], ["the", "cat"]]
# min_count=2 keeps the words seen twice, most frequent first, ties in
# first-seen order.
WORDS = ["<pad>", "<unk>", "<eos>", "the", "cat", "sat"]

MODEL = ModelConfig(
    embedding_size=4, hidden_size=8, num_layers=2, chunk_size=4,
    recurrent="onlstm", master_input="cumax", input_dropout=0.1,
    layer_dropout=0.2, output_dropout=0.3, embedding_dropout=0.0,
    recurrent_dropconnect=0.25, tie_weights=False)
TRAINING = TrainingConfig(
    batch_size=2, bptt=3, epochs=2, optimizer="adam", learning_rate=None,
    clipnorm=0.25, weight_decay=None, eval_batch_size=2,
    variable_length=False, min_count=2, max_vocab=None, seed=7)

MODEL_JSON = {
    "embedding_size": 4, "hidden_size": 8, "num_layers": 2, "chunk_size": 4,
    "recurrent": "onlstm", "master_input": "cumax", "input_dropout": 0.1,
    "layer_dropout": 0.2, "output_dropout": 0.3, "embedding_dropout": 0.0,
    "recurrent_dropconnect": 0.25, "tie_weights": False,
}
TRAINING_JSON = {
    "batch_size": 2, "bptt": 3, "epochs": 2, "optimizer": "adam",
    "learning_rate": None, "clipnorm": 0.25, "weight_decay": None,
    "eval_batch_size": 2, "variable_length": False, "min_count": 2,
    "max_vocab": None, "seed": 7,
}
TOKENIZER = {"name": "whitespace", "lowercase": False}
SETTINGS = {"language": "en", "corpus": "tiny.txt", "seed": 7}


def same_config(recorded, expected, cls):
    """`recorded` holds every field of `cls`, with `expected`'s values for
    the fields written out above (fields added later keep defaults)."""
    return (sorted(recorded) == sorted(cls.field_names())
            and {k: recorded[k] for k in expected} == expected)


def tiny_corpus():
    return Corpus(TRAIN, VALID, TEST, tokenizer=dict(TOKENIZER),
                  source="tiny.txt", settings=dict(SETTINGS))


def recorded(directory):
    corpus = tiny_corpus()
    vocab = Vocabulary.build(corpus.train, min_count=2)
    return training.record_run(str(directory), corpus, vocab, MODEL, TRAINING,
                               language="en")


def read_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def test_record_run_writes_the_vocabulary_and_run_json(tmp_path):
    out = tmp_path / "run"  # made by record_run
    info = recorded(out)
    on_disk = read_json(out / "run.json")
    assert same_config(on_disk.pop("model"), MODEL_JSON, ModelConfig)
    assert same_config(on_disk.pop("training"), TRAINING_JSON, TrainingConfig)
    expected = {
        "tokenizer": TOKENIZER,
        "corpus": "tiny.txt",
        "corpus_settings": SETTINGS,
        "corpus_summary": "train 3 sentences / 9 words, valid 2 sentences / "
                          "5 words, test 2 sentences / 5 words",
        "vocabulary": 6,
        "script": None,
        "language": "en",
    }
    assert on_disk == expected
    assert info == read_json(out / "run.json")
    # The file's field order is part of what both callers write.
    assert list(info) == ["model", "training", "tokenizer", "corpus",
                          "corpus_settings", "corpus_summary", "vocabulary",
                          "script", "language"]
    assert Vocabulary.load(str(out / "vocab.json")).words == WORDS
    assert sorted(os.listdir(out)) == ["run.json", "vocab.json"]


def test_record_run_info_replaces_a_field_and_script_is_recorded(tmp_path):
    corpus = tiny_corpus()
    corpus.script = "traditional"
    vocab = Vocabulary.build(corpus.train)
    info = training.record_run(str(tmp_path), corpus, vocab, MODEL, TRAINING,
                               tokenizer={"name": "jieba"}, note="x")
    assert info["script"] == "traditional"
    assert info["tokenizer"] == {"name": "jieba"}
    assert info["note"] == "x"
    assert info["vocabulary"] == 3 + 6  # every word of TRAIN


def test_record_run_refuses_a_checkpoint_and_writes_nothing(tmp_path):
    (tmp_path / "checkpoint").mkdir()
    (tmp_path / "checkpoint" / "training_metadata.json").write_text(
        '{"epoch": 1}')
    (tmp_path / "run.json").write_text('{"kept": true}')
    with pytest.raises(FileExistsError, match="holds a training checkpoint"):
        recorded(tmp_path)
    assert (tmp_path / "run.json").read_text() == '{"kept": true}'
    assert sorted(os.listdir(tmp_path)) == ["checkpoint", "run.json"]


def resume_configs(directory, **changes):
    """The configs `plan_training` resumes the run in `directory` with,
    given its recorded configs with `changes`."""
    model, training = runs.recorded_configs(str(directory))
    model_changes = {k: v for k, v in changes.items()
                     if k in ModelConfig.field_names()}
    training_changes = {k: v for k, v in changes.items()
                        if k in TrainingConfig.field_names()}
    plan = runs.plan_training(
        str(directory), dataclasses.replace(model, **model_changes),
        dataclasses.replace(training, **training_changes), resume=True)
    (run,) = plan.runs
    assert run.resume
    return run.model_config, run.training_config


def test_resume_configs_takes_epochs_and_learning_rate_only(tmp_path):
    recorded(tmp_path)
    model, training = resume_configs(tmp_path)
    assert same_config(model.to_dict(), MODEL_JSON, ModelConfig)
    assert same_config(training.to_dict(), TRAINING_JSON, TrainingConfig)

    model, training = resume_configs(
        tmp_path, epochs=5, learning_rate=0.5, hidden_size=8, bptt=3)
    assert same_config(model.to_dict(), MODEL_JSON, ModelConfig)
    assert same_config(training.to_dict(), {
        **TRAINING_JSON, "epochs": 5, "learning_rate": 0.5}, TrainingConfig)

    with pytest.raises(ValueError, match=r"`hidden_size` cannot change.*"
                       r"hidden_size=8\).*hidden_size=16"):
        resume_configs(tmp_path, hidden_size=16)
    with pytest.raises(ValueError, match=r"`bptt` cannot change"):
        resume_configs(tmp_path, bptt=4)
    with pytest.raises(FileNotFoundError, match="holds no run to resume"):
        runs.plan_training(str(tmp_path / "empty"), resume=True)


def test_prepare_resume_records_changes_and_sets_a_new_learning_rate(tmp_path):
    recorded(tmp_path)
    before = (tmp_path / "run.json").read_bytes()

    # Nothing changed: no callback, run.json untouched.
    _, same = resume_configs(tmp_path)
    assert training.prepare_resume(str(tmp_path), same) == []
    assert (tmp_path / "run.json").read_bytes() == before

    # More epochs: recorded, the optimizer's rate kept.
    _, longer = resume_configs(tmp_path, epochs=4)
    assert training.prepare_resume(str(tmp_path), longer) == []
    assert same_config(read_json(tmp_path / "run.json")["training"], {
        **TRAINING_JSON, "epochs": 4}, TrainingConfig)

    # A new rate: recorded, and a scheduler that sets it every epoch,
    # whatever rate the checkpoint restored.
    _, slower = resume_configs(tmp_path, epochs=4, learning_rate=1e-4)
    callbacks = training.prepare_resume(str(tmp_path), slower)
    assert len(callbacks) == 1
    assert [callbacks[0].schedule(e, 2e-3) for e in (0, 3)] == [1e-4, 1e-4]
    info = read_json(tmp_path / "run.json")
    assert same_config(info["training"], {
        **TRAINING_JSON, "epochs": 4, "learning_rate": 1e-4}, TrainingConfig)
    assert same_config(info["model"], MODEL_JSON, ModelConfig)  # as it was


def test_finished_run_needs_results_and_the_epochs(tmp_path):
    recorded(tmp_path)
    (tmp_path / "checkpoint").mkdir()
    (tmp_path / "checkpoint" / "training_metadata.json").write_text(
        '{"epoch": 2}')
    assert training.finished_run(str(tmp_path), 2) is None  # not scored
    with open(tmp_path / "run.json", encoding="utf-8") as f:
        info = json.load(f)
    info["results"] = {"valid_perplexity": 5.0, "test_perplexity": 6.0}
    (tmp_path / "run.json").write_text(json.dumps(info), encoding="utf-8")
    assert training.finished_run(str(tmp_path), 2) == info
    assert training.finished_run(str(tmp_path), 1) == info
    assert training.finished_run(str(tmp_path), 3) is None
    assert training.finished_run(str(tmp_path / "none"), 1) is None


@pytest.mark.backend
def test_score_run_records_the_best_models_results(tmp_path):
    """A model with every weight zero predicts the uniform distribution
    over the 6 words, so its perplexity is exactly 6 on any stream."""
    from on_lstm_keras.models import ONLSTMLanguageModel
    from on_lstm_keras.models.saving import save_atomically

    recorded(tmp_path)
    # As training saves it: a stateless copy of the stateful model.
    trained = ONLSTMLanguageModel.from_model_config(
        MODEL, len(WORDS), stateful=True)
    trained.build_for(TRAINING.batch_size)
    model = trained.clone(stateful=False)
    model.set_weights([np.zeros_like(w) for w in model.get_weights()])
    save_atomically(model, str(tmp_path / "model.keras"))

    vocab = Vocabulary(WORDS)
    valid_ids = vocab.encode_sentences(VALID)
    test_ids = vocab.encode_sentences(TEST)
    # a, bird unknown; sat; <eos>; the, cat; <eos>
    assert test_ids == [1, 1, 5, 2, 3, 4, 2]
    train_ids = vocab.encode_sentences(TRAIN)
    # the cat sat; the dog(unk) sat; a(unk) cat ran(unk), each with <eos>
    assert train_ids == [3, 4, 5, 2, 3, 1, 5, 2, 1, 4, 1, 2]
    info = training.score_run(str(tmp_path), train_ids, valid_ids, test_ids,
                              12.345)

    # Embedding 6x4; each ON-LSTM layer: 4 gates of 8 units and 2 master
    # gates of 8/4 = 2 levels, so 36 columns of kernel, recurrent kernel
    # and bias; an untied softmax 8x6 plus bias.
    columns = 4 * 8 + 2 * (8 // 4)
    parameters = (6 * 4 + (4 + 8 + 1) * columns + (8 + 8 + 1) * columns
                  + 8 * 6 + 6)
    results = info["results"]
    assert list(results) == ["valid_perplexity", "test_perplexity",
                             "train_seconds_this_call", "parameters",
                             "unknown_rate_test", "unigram_valid_perplexity",
                             "on_unigram_plateau"]
    assert results["valid_perplexity"] == pytest.approx(6.0, rel=1e-5)
    assert results["test_perplexity"] == pytest.approx(6.0, rel=1e-5)
    assert results["train_seconds_this_call"] == 12.3
    assert results["parameters"] == parameters == 1158
    assert results["unknown_rate_test"] == 2 / 7
    # Add-one counts: <unk> 4, <eos> 4, the 3, cat 3, sat 3 (of 17); the
    # validation stream after its first word, cat sat <eos> the <unk>
    # <eos>, has three words of each kind: perplexity 17 / sqrt(3 * 4).
    assert results["unigram_valid_perplexity"] == pytest.approx(17 / 12 ** 0.5)
    # The uniform model (6) is above 0.9 times that: on the plateau.
    assert results["on_unigram_plateau"] is True
    assert read_json(tmp_path / "run.json") == info
    assert same_config(info["model"], MODEL_JSON, ModelConfig)  # kept


def test_the_lock_is_public_in_runs(tmp_path):
    with runs.output_lock(str(tmp_path)):
        assert (tmp_path / ".lock").read_text().strip() == str(os.getpid())
    assert issubclass(runs.DirectoryLocked, RuntimeError)
    assert not (tmp_path / ".lock").exists()


def test_interrupted_message_names_the_saved_epoch(tmp_path):
    assert training.interrupted_message(str(tmp_path)) == (
        f"Interrupted before the first epoch ended: no epoch was saved in "
        f"{tmp_path}; run the command again to start training.")
    (tmp_path / "checkpoint").mkdir()
    meta = tmp_path / "checkpoint" / "training_metadata.json"
    meta.write_text('{"epoch": 3}')
    assert training.interrupted_message(str(tmp_path)) == (
        f"Interrupted: epoch 3, the last finished, is saved in {tmp_path}; "
        "run again with --resume to continue.")
    meta.write_text('{"epo')  # cut short: nothing to continue from
    assert "no epoch was saved" in training.interrupted_message(str(tmp_path))


def test_recorded_configs_read_back_what_the_run_recorded(tmp_path):
    recorded(tmp_path)
    assert runs.recorded_configs(str(tmp_path)) == (MODEL, TRAINING)
    info = read_json(tmp_path / "run.json")
    info["model"] = {"hidden": 3}
    (tmp_path / "run.json").write_text(json.dumps(info), encoding="utf-8")
    with pytest.raises(ValueError, match="has no field 'hidden'"):
        runs.recorded_configs(str(tmp_path))
    with pytest.raises(FileNotFoundError, match="holds no run to resume"):
        runs.recorded_configs(str(tmp_path / "none"))
