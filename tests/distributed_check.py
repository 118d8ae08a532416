"""Run by test_distributed.py in a fresh process: one epoch of a stateful
language model on one device and on two logical CPU devices.

Prints one JSON line: the device count, both losses and the largest weight
difference. The device setup must happen before the backend starts, hence
the separate process.
"""

import contextlib
import json
import os
import sys

backend = sys.argv[1]
os.environ["KERAS_BACKEND"] = backend
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
if backend == "jax":
    os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
else:
    import tensorflow as tf

    tf.config.set_logical_device_configuration(
        tf.config.list_physical_devices("CPU")[0],
        [tf.config.LogicalDeviceConfiguration()] * 2,
    )

import keras  # noqa: E402
import numpy as np  # noqa: E402

from on_lstm_keras.data import BPTTSequence  # noqa: E402
from on_lstm_keras.models import ONLSTMLanguageModel  # noqa: E402
from on_lstm_keras.models.distribute import data_parallel  # noqa: E402
from on_lstm_keras.models.distribute import num_replicas  # noqa: E402
from on_lstm_keras.models.training import compile_language_model  # noqa: E402
from on_lstm_keras.models.training import make_optimizer  # noqa: E402

ids = list(np.random.default_rng(0).integers(3, 40, 3000))


def run(context):
    keras.utils.set_random_seed(0)
    with context as parallel:
        model = ONLSTMLanguageModel(
            40, embedding_size=8, hidden_size=16, num_layers=2, chunk_size=4,
            stateful=True, seed=1, input_dropout=0, layer_dropout=0,
            output_dropout=0, embedding_dropout=0, recurrent_dropconnect=0,
        )
        model.build_for(4)
        compile_language_model(model, make_optimizer("sgd", 1.0))
        if parallel is None:
            devices = num_replicas()
        elif backend == "jax":
            devices = int(np.size(parallel.device_mesh.devices))
        else:
            devices = parallel.num_replicas_in_sync
        history = model.fit(BPTTSequence(ids, 4, 10), epochs=2, shuffle=False,
                            verbose=0)
    weights = [np.asarray(w) for w in model.trainable_weights]
    return history.history["loss"], weights, devices


one_loss, one_weights, _ = run(contextlib.nullcontext())
two_loss, two_weights, devices = run(data_parallel())
print(json.dumps({
    "devices": devices,
    "one_device_loss": one_loss,
    "two_device_loss": two_loss,
    "max_weight_difference": max(
        float(np.abs(a - b).max()) for a, b in zip(one_weights, two_weights)
    ),
}))
