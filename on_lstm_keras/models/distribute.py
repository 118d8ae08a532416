"""Data-parallel training through each backend's own machinery.

TensorFlow: a `tf.distribute.MirroredStrategy`; JAX: a
`keras.distribution.DataParallel`. Build and compile the model inside
`data_parallel()`, then `fit` as usual: each device takes an equal share
of the rows of every batch. A stateful language model keeps one carried
state per device for that device's rows (TensorFlow) or one global state
(JAX, whose arrays are global), so truncated BPTT is unchanged.
"""

import contextlib

import keras

__all__ = ["data_parallel", "num_replicas"]


def num_replicas():
    """How many replicas split each batch under the current TensorFlow
    strategy (1 elsewhere: JAX's data-parallel arrays are global)."""
    if keras.backend.backend() == "tensorflow":
        import tensorflow as tf

        return tf.distribute.get_strategy().num_replicas_in_sync
    return 1


def _default_devices():
    if keras.backend.backend() == "tensorflow":
        import tensorflow as tf

        gpus = tf.config.list_logical_devices("GPU")
        return [d.name for d in (gpus or tf.config.list_logical_devices("CPU"))]
    return keras.distribution.list_devices()


@contextlib.contextmanager
def data_parallel(devices=None):
    """A context in which models are built for data-parallel training.

    Args:
        devices: Device names; default: every GPU, else every (logical) CPU.

    Yields:
        The `tf.distribute.Strategy` or `keras.distribution.DataParallel`.

    Example (two logical CPUs, set up before TensorFlow starts):

    ```python
    tf.config.set_logical_device_configuration(
        tf.config.list_physical_devices("CPU")[0],
        [tf.config.LogicalDeviceConfiguration()] * 2)
    with data_parallel():
        model = ONLSTMLanguageModel(..., stateful=True).build_for(20)
        compile_language_model(model, make_optimizer())
    train_language_model(model, ...)
    ```
    """
    devices = list(devices or _default_devices())
    backend = keras.backend.backend()
    if backend == "tensorflow":
        import tensorflow as tf

        strategy = tf.distribute.MirroredStrategy(devices)
        with strategy.scope():
            yield strategy
    elif backend == "jax":
        distribution = keras.distribution.DataParallel(devices=devices)
        previous = keras.distribution.distribution()
        keras.distribution.set_distribution(distribution)
        try:
            yield distribution
        finally:
            keras.distribution.set_distribution(previous)
    else:
        raise NotImplementedError(
            f"data_parallel() supports the tensorflow and jax backends, not "
            f"{backend!r}"
        )
