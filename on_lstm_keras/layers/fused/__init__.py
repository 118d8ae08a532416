"""The ON-LSTM recurrence fused into one op with a hand-written gradient.

`ONLSTM` tries `fused_inner_loop` first and steps through `ONLSTMCell`
with autodiff where it raises `NotImplementedError` (other backends or
activations), as `keras.layers.LSTM` tries cuDNN.

- `scan.py`: the loops over time.
- `forward.py`: the forward loop, keeping what the backward pass needs.
- `backward.py`: the reverse loop and the weight gradients.
- `recurrence.py`: both as one `keras.ops.custom_gradient` op, and the
  glue to the layer (dropout, masks, `go_backwards`, time-major layout).
"""

from on_lstm_keras.layers.fused.backward import backward_segments
from on_lstm_keras.layers.fused.recurrence import FusedRecurrence
from on_lstm_keras.layers.fused.recurrence import fused_inner_loop
from on_lstm_keras.layers.fused.recurrence import fused_path_unsupported

__all__ = [
    "FusedRecurrence",
    "backward_segments",
    "fused_inner_loop",
    "fused_path_unsupported",
]
