"""A batch of one row, with a carried state whose batch size is known while
the inputs' is not (Keras relaxes a retraced function's input shapes): the
perplexity of a one-row stream, evaluated window by window with the state
carried, equals that of one stateless pass over the whole stream."""

import numpy as np
import pytest

from on_lstm_keras.models import ONLSTMLanguageModel
from on_lstm_keras.models.training import evaluate_perplexity


def _one_pass_perplexity(model, ids):
    """exp(mean NLL) of tokens 1..n-1, from one stateless call on the
    whole stream, the softmax computed here in NumPy."""
    logits = np.asarray(model(np.asarray([ids], "int32"), training=False))[0]
    logits = logits[:-1].astype("float64")
    logits -= logits.max(axis=-1, keepdims=True)
    log_probs = logits - np.log(np.exp(logits).sum(axis=-1, keepdims=True))
    nll = -log_probs[np.arange(len(ids) - 1), ids[1:]]
    return float(np.exp(nll.mean()))


@pytest.mark.backend
@pytest.mark.parametrize("bptt", [3, 7])  # 7 leaves a shorter last window
def test_one_row_stream_matches_one_pass(bptt):
    model = ONLSTMLanguageModel(6, embedding_size=4, hidden_size=8,
                                num_layers=2, chunk_size=4, tie_weights=False,
                                seed=1)
    ids = list(np.random.RandomState(0).randint(1, 6, 40))
    model(np.asarray([ids], "int32"))  # builds the weights
    expected = _one_pass_perplexity(model, ids)
    assert evaluate_perplexity(model, ids, 1, bptt) == pytest.approx(
        expected, rel=1e-4)
