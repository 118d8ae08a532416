"""RRNN: recurrent layer whose cell builds its own computation tree.

Qian, Kennedy and Klabjan, "Dynamic Cell Structure via Recursive-Recurrent
Neural Networks" (2019), a different paper from ON-LSTM. At every time step
the cell starts from the leaves `x_t`, `h_{t-1}` and `0`, makes `N̄` nodes by
greedy merges chosen with a learned score, and the last node is `h_t`. GRU
is a special case (`RRNN.from_gru` builds the one that equals a given
`keras.layers.GRU`, and with a searching `TreeConfig` a search that starts
at the GRU tree); `RRNN(units, TreeConfig(variant="rrnn_gru",
selection="soft"))` is the paper's RRNN-GRU. The paper's
LSTM case needs a second state (the memory cell); its construction is in
the paper's appendix B, which this layer does not implement: it carries
one state only.

Modules:
    `cell`: `RRNNCell`, its weights and config.
    `search`: the tree search the cell runs at every step.
    `candidates`: the candidates of a merge, their numbering and which the
        search may pick.
    `layer`: the `RRNN` layer.
    `recurrence`: the step function the layer runs over a sequence.
    `config`: `TreeConfig`, `SearchConfig` and `TupleConfig`, the cell's
        settings.
    `gru`: the GRU special case (the body of `RRNN.from_gru`) and
        `prefer_tree`, which points a search at a given tree.
    `trees`: writing and reading trees (`normalize_tree`, `tree_expression`,
        `most_common_trees`) and the GRU's tree (`gru_tree`).
    `distance`: `tree_distance` and the `RRNNTreeDistance` loss layer.
    `nodes`: node values brought to one width.
    `training`: `fit_search_and_fix` (two optimisers; search and fixing
        stages, as the authors trained; the fixing stage replays one best
        tree, or the best tree of each batch and step) and `split_weights`.
    `replay`: `replaying` (a cell run as forced trees in a `with` block)
        and reading the trees a search picked.
    `chars`: the character-level experiment of `examples/rrnn_chars.py`
        (data, bits per character, tuning, its models).
"""

from on_lstm_keras.rrnn.cell import RRNNCell
from on_lstm_keras.rrnn.config import SearchConfig
from on_lstm_keras.rrnn.config import TreeConfig
from on_lstm_keras.rrnn.config import TupleConfig
from on_lstm_keras.rrnn.distance import RRNNTreeDistance
from on_lstm_keras.rrnn.distance import tree_distance
from on_lstm_keras.rrnn.gru import prefer_tree
from on_lstm_keras.rrnn.layer import RRNN
from on_lstm_keras.rrnn.replay import replaying
from on_lstm_keras.rrnn.trees import gru_tree
from on_lstm_keras.rrnn.trees import most_common_trees
from on_lstm_keras.rrnn.trees import normalize_tree
from on_lstm_keras.rrnn.trees import tree_expression
from on_lstm_keras.rrnn.trees import tree_to_names
from on_lstm_keras.rrnn.training import fit_search_and_fix
from on_lstm_keras.rrnn.training import split_weights

__all__ = [
    "RRNN",
    "RRNNCell",
    "RRNNTreeDistance",
    "SearchConfig",
    "TreeConfig",
    "TupleConfig",
    "fit_search_and_fix",
    "gru_tree",
    "most_common_trees",
    "normalize_tree",
    "prefer_tree",
    "replaying",
    "split_weights",
    "tree_distance",
    "tree_expression",
    "tree_to_names",
]
