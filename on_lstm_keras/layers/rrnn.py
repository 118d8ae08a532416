"""Deprecated: RRNN now lives in `on_lstm_keras.rrnn`.

This module re-exports its old names for one version and warns on import;
import from `on_lstm_keras.rrnn` (or `on_lstm_keras`) instead. Models saved
while the classes lived here still load: their registered names
(`on_lstm_keras>RRNN`, ...) are unchanged.
"""

import warnings

from on_lstm_keras.rrnn.cell import SELECTIONS  # noqa: F401
from on_lstm_keras.rrnn.cell import RRNNCell  # noqa: F401
from on_lstm_keras.rrnn.distance import RRNNTreeDistance  # noqa: F401
from on_lstm_keras.rrnn.distance import tree_distance  # noqa: F401
from on_lstm_keras.rrnn.gru import gru_tree  # noqa: F401
from on_lstm_keras.rrnn.layer import RRNN  # noqa: F401
from on_lstm_keras.rrnn.trees import ACTIVATIONS  # noqa: F401
from on_lstm_keras.rrnn.trees import DEFAULT_ACTIVATIONS  # noqa: F401
from on_lstm_keras.rrnn.trees import NUM_LEAVES  # noqa: F401
from on_lstm_keras.rrnn.trees import OPERATIONS  # noqa: F401
from on_lstm_keras.rrnn.trees import POOLS  # noqa: F401
from on_lstm_keras.rrnn.trees import most_common_trees  # noqa: F401
from on_lstm_keras.rrnn.trees import normalize_tree  # noqa: F401
from on_lstm_keras.rrnn.trees import tree_expression  # noqa: F401
from on_lstm_keras.rrnn.trees import tree_to_names  # noqa: F401

__all__ = [
    "RRNN",
    "RRNNCell",
    "RRNNTreeDistance",
    "gru_tree",
    "most_common_trees",
    "tree_distance",
    "tree_expression",
]

warnings.warn(
    "`on_lstm_keras.layers.rrnn` is deprecated and will be removed in the "
    "next version; import from `on_lstm_keras.rrnn` instead.",
    DeprecationWarning,
    stacklevel=2,
)
