"""The model parser's and the split scores' error messages, word for word.

A message names the argument and the value received; these tests hold the
whole text, so that a message that loses its argument's name, or the value,
or reads differently, fails here. No model is run: every check comes before
the first model call, so the models are stand-ins that only say which way
they read (and fail if they are called).
"""

import re

import numpy as np
import pytest

from on_lstm_keras.data import Vocabulary
from on_lstm_keras.parsing import model_parser
from on_lstm_keras.parsing import scores
from on_lstm_keras.parsing.scores import reading_arg
from on_lstm_keras.parsing.scores import layer_view
from on_lstm_keras.parsing.scores import split_scores


def exactly(message):
    return "^" + re.escape(message) + "$"


class NotCalled:
    """A model that must not be read."""

    def __init__(self, direction="forward", num_layers=2):
        self.direction = direction
        self.rnn_layers = [None] * num_layers

    def __call__(self, *args, **kwargs):
        raise AssertionError("the model was read before the arguments were checked")


VOCAB = Vocabulary(["<pad>", "<unk>", "<eos>", "a", "b"])


# --- model_parser ----------------------------------------------------------

def test_an_empty_sentence_is_named_by_its_index():
    with pytest.raises(ValueError, match=exactly(
            "Argument `sentences` must hold non-empty word lists, received: "
            "sentences[2]=[]")):
        model_parser.sentence_distances(NotCalled(), VOCAB,
                                        [["a"], ["a", "b"], [], ["b"]])


@pytest.mark.parametrize("num_layers, layer, mean, message", [
    (3, 4, False, "Argument `layer` must be an integer in 1..3 (the model has "
                  "3 layers), received: layer=4"),
    (1, 0, False, "Argument `layer` must be an integer in 1..1 (the model has "
                  "1 layer), received: layer=0"),
    (2, "all", True, "Argument `layer` must be an integer in 1..2 (the model "
                     "has 2 layers) or 'mean', received: layer='all'"),
])
def test_check_layer_messages(num_layers, layer, mean, message):
    with pytest.raises(ValueError, match=exactly(message)):
        scores.check_layer(layer, num_layers, mean=mean)


def test_reading_models_messages():
    forward, backward = NotCalled("forward"), NotCalled("backward")
    with pytest.raises(ValueError, match=exactly(
            "Argument `backward_model` must be a model of reversed sentences "
            "(direction='backward'), received one whose direction is 'both'")):
        model_parser.reading_models("both", forward, NotCalled("both"))
    with pytest.raises(ValueError, match=exactly(
            "Argument `backward_model` must be a model of reversed sentences "
            "(direction='backward'), received one whose direction is "
            "'forward'")):
        model_parser.reading_models("both", forward, forward)
    with pytest.raises(ValueError, match=exactly(
            "Argument `reading='backward'` needs a backward model: the "
            "model reads forward and no `backward_model` was given")):
        model_parser.reading_models("backward", forward)
    for reading in ("forward", "both"):
        with pytest.raises(ValueError, match=exactly(
                f"Argument `reading={reading!r}` reads the model forward, "
                "but it is a model of reversed sentences "
                "(direction='backward'); use reading='backward'")):
            model_parser.reading_models(reading, backward, backward)
    with pytest.raises(ValueError, match=exactly(
            "Argument `reading='both'` needs a backward model as "
            "`backward_model`, received none")):
        model_parser.reading_models("both", forward)
    with pytest.raises(ValueError, match=exactly(
            "Argument `reading` must be one of 'forward', 'backward', "
            "'both', received: reading='sideways'")):
        model_parser.reading_models("sideways", forward)


def test_parse_sentences_messages_come_before_any_reading():
    forward, backward = NotCalled("forward"), NotCalled("backward")
    with pytest.raises(ValueError, match=exactly(
            "Argument `layer` must be an integer in 1..2 (the model has 2 "
            "layers) or 'mean', received: layer=3")):
        model_parser.parse_sentences(forward, VOCAB, [["a", "b"]], layer=3,
                                     reading="both", backward_model=backward)
    with pytest.raises(ValueError, match=exactly(
            "Argument `layer` must be an integer in 1..2 (the model has 2 "
            "layers), received: layer=3")):
        model_parser.parse_sentences(forward, VOCAB, [["a", "b"]], layer=3)
    with pytest.raises(ValueError, match=exactly(
            "Argument `batch_size` must be a positive integer, received: "
            "batch_size=0")):
        model_parser.sentence_distances(forward, VOCAB, [["a"]], batch_size=0)


# --- scores ----------------------------------------------------------------

def test_reading_arg_message():
    assert reading_arg("both") == "both"
    with pytest.raises(ValueError, match=exactly(
            "Argument `reading` must be one of 'forward', 'backward', "
            "'both', received: reading='left'")):
        reading_arg("left")


@pytest.mark.parametrize("call, message", [
    (lambda: split_scores(),
     "Give `forward` or `backward` boundary distances (or both), received "
     "neither"),
    (lambda: split_scores([[1.0, 2.0, 3.0, 4.0]], [[1.0, 2.0, 3.0]]),
     "Arguments `forward` and `backward` must cover the same sentence, "
     "received 4 and 3 boundaries"),
    (lambda: split_scores([1.0, 2.0, 3.0]),
     "Argument `forward` must be a finite array (layers, words + 1) of "
     "boundary distances, received shape (3,)"),
    (lambda: split_scores(None, [[1.0, np.nan, 3.0]]),
     "Argument `backward` must be a finite array (layers, words + 1) of "
     "boundary distances, received shape (1, 3)"),
    (lambda: split_scores([[1.0, 2.0, 3.0]], [[1.0], [2.0]]),
     "Argument `backward` must be a finite array (layers, words + 1) of "
     "boundary distances, received shape (2, 1)"),
    (lambda: layer_view([[[1.0, 2.0]]]),
     "Argument `boundaries` must be a finite array (layers, words + 1) of "
     "boundary distances, received shape (1, 1, 2)"),
    (lambda: layer_view([[1.0, 2.0]], name="forward_boundaries", layer=2),
     "Argument `layer` must be an integer in 1..1 (the model has 1 layer) "
     "or 'mean', received: layer=2"),
])
def test_scores_messages(call, message):
    with pytest.raises(ValueError, match=exactly(message)):
        call()


def test_a_stand_in_reader_is_not_called_by_these_checks():
    # Guards the tests above: the stand-in does fail when read.
    with pytest.raises(AssertionError, match="read before"):
        NotCalled()(np.zeros((1, 3), "int32"), training=False,
                    return_distances=True)
