"""`ModelConfig` / `TrainingConfig`: checks, dict round trip, presets, and
the defaults every entry point takes from them."""

import dataclasses
import inspect
import json

import pytest

from on_lstm_keras.config import PRESETS
from on_lstm_keras.config import ModelConfig
from on_lstm_keras.config import TrainingConfig


def test_the_defaults_are_the_papers():
    # Shen et al. 2019, appendix / the official code's PTB command.
    model, training = ModelConfig(), TrainingConfig()
    assert (model.embedding_size, model.hidden_size, model.num_layers,
            model.chunk_size) == (400, 1150, 3, 10)
    assert (model.input_dropout, model.layer_dropout, model.output_dropout,
            model.embedding_dropout, model.recurrent_dropconnect) == (0.5, 0.3, 0.45, 0.1, 0.45)
    assert model.tie_weights is True and model.recurrent == "onlstm"
    assert (training.batch_size, training.bptt, training.optimizer,
            training.clipnorm, training.weight_decay) == (20, 70, "sgd", 0.25, 1.2e-6)
    assert training.optimizer_learning_rate == 30.0
    assert dataclasses.replace(training, optimizer="adam").optimizer_learning_rate == 2e-3
    assert model.layer_sizes == [1150, 1150, 400]


@pytest.mark.parametrize("cls, data", [
    (ModelConfig, PRESETS["small"][0].to_dict()),
    (TrainingConfig, PRESETS["paper"][1].to_dict()),
])
def test_round_trip_through_json(cls, data):
    again = cls.from_dict(json.loads(json.dumps(data)))
    assert again == cls(**data) and again.to_dict() == data


def test_configs_are_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        ModelConfig().hidden_size = 3


@pytest.mark.parametrize("cls, data, message", [
    (ModelConfig, {"hidden_sise": 3}, "ModelConfig has no field 'hidden_sise'"),
    (TrainingConfig, {"lr": 0.1, "bptt": 3},
     "TrainingConfig has no field 'lr'; its fields are: batch_size, bptt"),
])
def test_unknown_keys_are_named(cls, data, message):
    with pytest.raises(ValueError, match=message):
        cls.from_dict(data)


@pytest.mark.parametrize("cls, field, value, message", [
    (ModelConfig, "hidden_size", 0, "`hidden_size` must be a positive integer, received: hidden_size=0"),
    (ModelConfig, "num_layers", 2.0, "`num_layers` must be a positive integer, received: num_layers=2.0"),
    (ModelConfig, "input_dropout", 1.0, "`input_dropout` must be in [0, 1), received: input_dropout=1.0"),
    (ModelConfig, "recurrent", "gru", "`recurrent` must be one of 'onlstm', 'lstm', received: recurrent='gru'"),
    (ModelConfig, "tie_weights", "yes", "`tie_weights` must be True or False, received: tie_weights='yes'"),
    (TrainingConfig, "max_vocab", 3,
     "`max_vocab` must be at least 4 (3 special tokens and a word), received: max_vocab=3"),
    (TrainingConfig, "learning_rate", -1.0, "`learning_rate` must be a finite number > 0"),
    (TrainingConfig, "clipnorm", float("nan"), "`clipnorm` must be a finite number > 0"),
    (TrainingConfig, "weight_decay", -1e-6, "`weight_decay` must be a finite number >= 0"),
    (TrainingConfig, "optimizer", "rmsprop", "`optimizer` must be one of 'sgd', 'adam'"),
    (TrainingConfig, "seed", -1, "`seed` must be a non-negative integer, received: seed=-1"),
    (TrainingConfig, "epochs", True, "`epochs` must be a positive integer, received: epochs=True"),
    (TrainingConfig, "warmup_steps", -1,
     "`warmup_steps` must be a non-negative integer, received: warmup_steps=-1"),
    (TrainingConfig, "warmup_steps", 2.5,
     "`warmup_steps` must be a non-negative integer, received: warmup_steps=2.5"),
    (ModelConfig, "initializer", "glorot",
     "`initializer` must be one of 'keras', 'uniform', received: initializer='glorot'"),
])
def test_a_bad_field_is_named_with_its_value(cls, field, value, message):
    with pytest.raises(ValueError) as error:
        cls(**{field: value})
    assert message in str(error.value)


def test_chunk_size_must_divide_every_layer_but_not_for_the_lstm():
    with pytest.raises(ValueError, match=r"must divide every layer size \[6, 8\], "
                                         "received: chunk_size=4"):
        ModelConfig(embedding_size=6, hidden_size=8, chunk_size=4)
    ModelConfig(embedding_size=6, hidden_size=8, chunk_size=4, tie_weights=False)
    ModelConfig(embedding_size=6, hidden_size=8, chunk_size=4, recurrent="lstm")


def test_none_values_and_normalised_numbers():
    training = TrainingConfig(clipnorm=None, weight_decay=0, max_vocab=None,
                              learning_rate=1)
    assert training.clipnorm is None and training.weight_decay == 0.0
    assert training.learning_rate == 1.0 and isinstance(training.learning_rate, float)
    with pytest.raises(ValueError, match="`batch_size` must be a positive integer"):
        TrainingConfig(batch_size=None)


# The presets as the command line had them before the configs (each merged
# over the paper's defaults), to prove the presets build the same models.
OLD_PRESETS = {
    "small": dict(embedding_size=128, hidden_size=256, num_layers=3,
                  chunk_size=8, input_dropout=0.2, layer_dropout=0.2,
                  output_dropout=0.3, embedding_dropout=0.05, recurrent_dropconnect=0.2,
                  # epochs 3 until the recipe trained both directions,
                  # then 2, then 5 on a faster machine
                  tie_weights=False, batch_size=32, bptt=35, epochs=5,
                  optimizer="adam", min_count=3, max_vocab=10000),
    "ptb-cpu": dict(embedding_size=200, hidden_size=400, num_layers=3,
                    chunk_size=10, input_dropout=0.3, layer_dropout=0.2,
                    output_dropout=0.3, embedding_dropout=0.05,
                    recurrent_dropconnect=0.2, tie_weights=False, batch_size=20,
                    bptt=35, epochs=5, optimizer="adam", min_count=1,
                    max_vocab=None),
    "paper": dict(embedding_size=400, hidden_size=1150, num_layers=3,
                  chunk_size=10, input_dropout=0.5, layer_dropout=0.3,
                  output_dropout=0.45, embedding_dropout=0.1, recurrent_dropconnect=0.45,
                  tie_weights=True, batch_size=20, bptt=70, epochs=1000,
                  optimizer="sgd", learning_rate=30.0, min_count=1,
                  max_vocab=None),
}
OLD_DEFAULTS = dict(
    embedding_size=400, hidden_size=1150, num_layers=3, chunk_size=10,
    input_dropout=0.5, layer_dropout=0.3, output_dropout=0.45,
    embedding_dropout=0.1, recurrent_dropconnect=0.45, master_input="cumax",
    tie_weights=True, recurrent="onlstm", direction="forward",
    batch_size=20, bptt=70, epochs=1, optimizer="sgd", learning_rate=None,
    clipnorm=0.25, weight_decay=1.2e-6, eval_batch_size=10,
    variable_length=False, min_count=1, max_vocab=None, seed=0,
    # added since, with the values that keep the old behaviour
    initializer="keras", warmup_steps=0, xla=False,
)
# What the CPU presets changed since: XLA, which computes the same model,
# and for PTB the paper's optimizer (its trees were better on the dev half).
# Every preset: the warm-up of the LSTM trained beside (--with-lstm), which
# did not leave the unigram plateau without one.
CHANGED_SINCE = {"small": dict(xla=True),
                 "ptb-cpu": dict(xla=True, optimizer="sgd", learning_rate=30.0)}
EVERY_PRESET_SINCE = dict(lstm_warmup_steps=500)


@pytest.mark.parametrize("name", sorted(OLD_PRESETS))
def test_presets_hold_the_values_the_command_line_had(name):
    model, training = PRESETS[name]
    assert {**model.to_dict(), **training.to_dict()} == {
        **OLD_DEFAULTS, **OLD_PRESETS[name], **CHANGED_SINCE.get(name, {}),
        **EVERY_PRESET_SINCE}


def defaults_of(function, skip=()):
    return {name: p.default for name, p in inspect.signature(function).parameters.items()
            if p.default is not inspect.Parameter.empty and name not in skip}


def test_every_entry_point_takes_its_defaults_from_the_configs():
    from on_lstm_keras.models import ONLSTMLanguageModel
    from on_lstm_keras.models import training

    model_defaults = defaults_of(ONLSTMLanguageModel.__init__,
                                 skip=("stateful", "seed"))
    assert model_defaults == ModelConfig().to_dict()
    assert defaults_of(training.make_optimizer) == {
        "name": "sgd", "learning_rate": None, "clipnorm": 0.25,
        "weight_decay": 1.2e-6, "warmup_steps": 0}
    fit_defaults = defaults_of(training.train_language_model,
                               skip=("optimizer", "resume", "verbose", "callbacks"))
    want = TrainingConfig().to_dict()
    assert fit_defaults == {k: want[k] for k in fit_defaults}
    assert set(fit_defaults) == {"batch_size", "bptt", "epochs", "variable_length",
                                 "eval_batch_size", "seed"}


@pytest.mark.backend
def test_the_model_from_a_config_equals_the_model_from_keywords():
    from on_lstm_keras.models import ONLSTMLanguageModel

    model_config = ModelConfig(embedding_size=8, hidden_size=12, num_layers=2,
                               chunk_size=4, recurrent="lstm")
    a = ONLSTMLanguageModel.from_model_config(model_config, 30, seed=1, name="m")
    b = ONLSTMLanguageModel(30, embedding_size=8, hidden_size=12, num_layers=2,
                            chunk_size=4, recurrent="lstm", seed=1, name="m")
    assert a.get_config() == b.get_config()
    assert a.get_config()["recurrent"] == "lstm" and "cell" not in a.get_config()
    assert a.model_config == model_config
    with pytest.raises(ValueError, match="`model_config` must be a `ModelConfig`"):
        ONLSTMLanguageModel.from_model_config(model_config.to_dict(), 30)

