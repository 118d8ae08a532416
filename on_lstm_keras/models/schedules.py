"""Learning-rate schedules of the language model's optimizer.

`LinearWarmup` is the warm-up of `TrainingConfig.warmup_steps`
(`--warmup-steps`): `make_optimizer(..., warmup_steps=N)` gives the
optimizer one. A schedule is a function of the optimizer's `iterations`,
which an epoch checkpoint saves with the optimizer's other variables, so a
resumed run continues the schedule where it stopped.
"""

import keras
from keras import ops

from on_lstm_keras.utils import validation as check

__all__ = ["LinearWarmup"]


@keras.saving.register_keras_serializable(package="on_lstm_keras")
class LinearWarmup(keras.optimizers.schedules.LearningRateSchedule):
    """A linear warm-up of the learning rate, then a constant rate.

    At optimizer step `t` (counted from 0, the optimizer's `iterations`
    before the update) the rate is
    `learning_rate * min(1, (t + 1) / warmup_steps)`: `learning_rate /
    warmup_steps` at the first step, rising by as much at each step, and
    `learning_rate` from step `warmup_steps - 1` on.

    Args:
        learning_rate: The rate after the warm-up (a number > 0).
        warmup_steps: The number of steps the rate takes to reach
            `learning_rate` (a positive integer; 1 is no warm-up).

    Example:

    >>> schedule = LinearWarmup(0.01, warmup_steps=4)
    >>> [round(float(schedule(step)), 6) for step in (0, 1, 3, 10)]
    [0.0025, 0.005, 0.01, 0.01]
    """

    def __init__(self, learning_rate, warmup_steps):
        self.learning_rate = check.positive_float("learning_rate", learning_rate)
        self.warmup_steps = check.positive_int("warmup_steps", warmup_steps)

    def __call__(self, step):
        done = ops.cast(step, "float32") + 1.0
        ratio = ops.minimum(done / float(self.warmup_steps), 1.0)
        return self.learning_rate * ratio

    def get_config(self):
        return {"learning_rate": self.learning_rate,
                "warmup_steps": self.warmup_steps}
