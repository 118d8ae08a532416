"""Deprecated: the RRNN tree tools now live in `on_lstm_keras.rrnn`.

`gru_tree` is in `on_lstm_keras.rrnn.gru`, `tree_distance` in
`on_lstm_keras.rrnn.distance`, the rest in `on_lstm_keras.rrnn.trees`; all
of them are also exported by `on_lstm_keras.rrnn`. This module re-exports
its old names for one version and warns on import.
"""

import warnings

from on_lstm_keras.rrnn.distance import tree_distance  # noqa: F401
from on_lstm_keras.rrnn.gru import gru_tree  # noqa: F401
from on_lstm_keras.rrnn.trees import ACTIVATIONS  # noqa: F401
from on_lstm_keras.rrnn.trees import DEFAULT_ACTIVATIONS  # noqa: F401
from on_lstm_keras.rrnn.trees import LEAF_NAMES  # noqa: F401
from on_lstm_keras.rrnn.trees import NUM_LEAVES  # noqa: F401
from on_lstm_keras.rrnn.trees import OPERATIONS  # noqa: F401
from on_lstm_keras.rrnn.trees import POOLS  # noqa: F401
from on_lstm_keras.rrnn.trees import most_common_trees  # noqa: F401
from on_lstm_keras.rrnn.trees import normalize_tree  # noqa: F401
from on_lstm_keras.rrnn.trees import tree_expression  # noqa: F401
from on_lstm_keras.rrnn.trees import tree_to_names  # noqa: F401

warnings.warn(
    "`on_lstm_keras.layers.rrnn_trees` is deprecated and will be removed in "
    "the next version; import from `on_lstm_keras.rrnn` (`on_lstm_keras."
    "rrnn.trees`, `.gru`, `.distance`) instead.",
    DeprecationWarning,
    stacklevel=2,
)
