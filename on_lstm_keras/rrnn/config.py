"""The settings of an RRNN cell, typed: `TreeConfig` (which trees it can
build and how it picks one), `SearchConfig` (how candidates are scored
and which are allowed) and `TupleConfig` (how the `(L, R, b)` tuples
start).

`RRNNCell` and `RRNN` take one of each (`tree_config=`, `search_config=`,
`tuple_config=`). All three are frozen dataclasses, checked when made: a
bad value raises a `ValueError` that names the field and the value
received. Make a changed copy with `dataclasses.replace`.

Example:

>>> TreeConfig(iterations=3, selection="soft").pool
'all'
>>> SearchConfig(score_units=-1)
Traceback (most recent call last):
...
ValueError: Argument `score_units` must be a non-negative integer, received: score_units=-1
"""

import dataclasses

from on_lstm_keras.utils import validation as check
from on_lstm_keras.rrnn.trees import ACTIVATIONS
from on_lstm_keras.rrnn.trees import DEFAULT_ACTIVATIONS
from on_lstm_keras.rrnn.trees import OPERATIONS
from on_lstm_keras.rrnn.trees import POOLS
from on_lstm_keras.rrnn.trees import gru_tree
from on_lstm_keras.rrnn.trees import normalize_tree

SELECTIONS = ("hard", "soft", "forced")
VARIANTS = ("rrnn", "rrnn_gru")
CANDIDATE_NORMS = (None, "score", "value")


def _names(argument, value, allowed):
    """`value` as a tuple of distinct names from `allowed`."""
    if isinstance(value, str) or not hasattr(value, "__iter__"):
        raise ValueError(
            f"Argument `{argument}` must be a list of names from "
            f"{allowed}, received: {argument}={value!r}"
        )
    value = tuple(value)
    if not value:
        raise ValueError(
            f"Argument `{argument}` must name at least one entry, "
            f"received: {argument}={value!r}"
        )
    for name in value:
        check.choice(argument, name, allowed)
    if len(set(value)) != len(value):
        raise ValueError(
            f"Argument `{argument}` must not repeat a name, "
            f"received: {argument}={value!r}"
        )
    return value


def _set(config, **values):
    for name, value in values.items():
        object.__setattr__(config, name, value)


@dataclasses.dataclass(frozen=True)
class TreeConfig:
    """Which trees an RRNN cell can build, and how it picks one.

    Args:
        iterations: Positive integer `N̄`, merges per step (9 for GRU).
        tuples: Positive integer `K`, number of `(L, R, b)` tuples.
        operations: Binary operations to choose from, names in
            `("add", "multiply")`. Default: both.
        activations: Activations to choose from, names in `("sigmoid",
            "tanh", "one_minus", "identity", "relu")`. Default: the first
            four (the paper's set; the reference code also has `relu`).
        selection: `"hard"` (default), `"soft"` or `"forced"` (see
            `RRNNCell`).
        pool: `"all"` (default, the paper) or `"roots"` (the reference
            code; see `RRNNCell`).
        tree: The forced tree (required with, and only with,
            `selection="forced"`): `iterations` merges `(i, j, k, op, act)`
            with names or indices, e.g. `gru_tree()`. Kept as integer
            5-tuples.
        variant: `"rrnn"` (default, the full search) or `"rrnn_gru"` (the
            paper's RRNN-GRU: the GRU tree's skeleton with a searched tuple
            at every merge but the gates; `iterations` must be 9, `tuples`
            at least 2, `selection` `"hard"` or `"soft"`; `pool` does not
            apply).
    """

    iterations: int = 9
    tuples: int = 4
    operations: tuple = OPERATIONS
    activations: tuple = DEFAULT_ACTIVATIONS
    selection: str = "hard"
    pool: str = "all"
    tree: tuple = None
    variant: str = "rrnn"

    def __post_init__(self):
        _set(
            self,
            iterations=check.positive_int("iterations", self.iterations),
            tuples=check.positive_int("tuples", self.tuples),
            operations=_names("operations", self.operations, OPERATIONS),
            activations=_names("activations", self.activations,
                               ACTIVATIONS),
            selection=check.choice("selection", self.selection, SELECTIONS),
            pool=check.choice("pool", self.pool, POOLS),
            variant=check.choice("variant", self.variant, VARIANTS),
        )
        if self.variant == "rrnn_gru":
            self._check_rrnn_gru()
        if self.selection == "forced":
            if self.tree is None:
                raise ValueError(
                    "Argument `tree` is required when selection='forced', "
                    "received: tree=None (e.g. pass tree=gru_tree())"
                )
            _set(self, tree=normalize_tree(
                self.tree,
                iterations=self.iterations,
                tuples=self.tuples,
                operations=self.operations,
                activations=self.activations,
                pool=self.pool,
            ))
        elif self.tree is not None:
            raise ValueError(
                "Argument `tree` is only used with selection='forced', "
                f"received: tree={self.tree!r} with "
                f"selection={self.selection!r}"
            )

    def _check_rrnn_gru(self):
        if self.selection == "forced":
            raise ValueError(
                "Argument `variant='rrnn_gru'` searches the tuples of "
                "the GRU tree and needs selection='hard' or 'soft', "
                "received: selection='forced' (for the plain GRU tree "
                "use variant='rrnn', selection='forced', tree=gru_tree())"
            )
        if self.iterations != 9:
            raise ValueError(
                "Argument `iterations` must be 9 (the GRU tree's merges) "
                "with variant='rrnn_gru', received: "
                f"iterations={self.iterations}"
            )
        if self.tuples < 2:
            raise ValueError(
                "Argument `tuples` must be at least 2 (z and r use tuples "
                "0 and 1) with variant='rrnn_gru', received: "
                f"tuples={self.tuples}"
            )
        self.skeleton()  # the GRU tree's operations and activations

    def skeleton(self):
        """The GRU tree in this config's indices (`variant="rrnn_gru"`;
        only its gates' tuples, 0 and 1, are read by the search)."""
        return normalize_tree(
            gru_tree(),
            tuples=max(self.tuples, 4),
            operations=self.operations,
            activations=self.activations,
            argument="activations/operations (the GRU tree)",
        )


@dataclasses.dataclass(frozen=True)
class SearchConfig:
    """How an RRNN cell scores its candidates and which it allows.

    Not read in forced mode. See `RRNNCell` for what each option does.

    Args:
        score_units: Non-negative integer (default 16), hidden ReLU units
            of the score MLP (the reference code uses 64); 0 for a linear
            score.
        margin: Positive float `M` (default 1.0) of the margin term
            `Σ_n max(0, M − (α_1 − α_2)) / M`.
        bounded: Boolean (default `True`): an unbounded activation only
            where its pre-activation lies in (−1, 1).
        break_symmetry: Boolean (default `True`): merges 0 and 1 on tuples
            0 and 1.
        unique_roots: Boolean (default `True`): no remake of an unused
            generated node.
        merge_prior: Boolean (default `True`): a learned score per merge
            and candidate.
        read_inputs: Boolean (default `False`): with `pool="roots"`, only
            trees whose root reads `x_t` and `h_{t-1}`.
        candidate_norm: `None` (default), `"score"` or `"value"`: batch
            normalisation of the candidates.
    """

    score_units: int = 16
    margin: float = 1.0
    bounded: bool = True
    break_symmetry: bool = True
    unique_roots: bool = True
    merge_prior: bool = True
    read_inputs: bool = False
    candidate_norm: str = None

    def __post_init__(self):
        _set(
            self,
            score_units=check.non_negative_int("score_units",
                                               self.score_units),
            margin=float(check.positive_float("margin", self.margin)),
            candidate_norm=check.choice("candidate_norm",
                                        self.candidate_norm,
                                        CANDIDATE_NORMS),
        )
        for name in ("bounded", "break_symmetry", "unique_roots",
                     "merge_prior", "read_inputs"):
            check.boolean(name, getattr(self, name))


@dataclasses.dataclass(frozen=True)
class TupleConfig:
    """How an RRNN cell's `(L, R, b)` tuples start and are shared.

    Args:
        identity_init: Boolean (default `True`): the last tuple starts as
            `(I, I, 0)`.
        fixed_identity: Boolean (default `False`): the last tuple stays
            `(I, I, 0)` through training; needs `identity_init=True`.
        tie_input_kernel: Boolean (default `False`): `x_t` shares `L_k`
            with the other nodes (needs inputs of `units` features).
    """

    identity_init: bool = True
    fixed_identity: bool = False
    tie_input_kernel: bool = False

    def __post_init__(self):
        for name in ("identity_init", "fixed_identity", "tie_input_kernel"):
            check.boolean(name, getattr(self, name))
        if self.fixed_identity and not self.identity_init:
            raise ValueError(
                "Argument `fixed_identity=True` keeps the last tuple at its "
                "identity start and needs identity_init=True, received: "
                "identity_init=False"
            )


TREE_FIELDS = tuple(f.name for f in dataclasses.fields(TreeConfig))
SEARCH_FIELDS = tuple(f.name for f in dataclasses.fields(SearchConfig))
TUPLE_FIELDS = tuple(f.name for f in dataclasses.fields(TupleConfig))


def config_arg(name, value, cls):
    """`value`, or `cls()` when it is `None`; a `ValueError` naming the
    argument when it is anything but a `cls`."""
    if value is None:
        return cls()
    if not isinstance(value, cls):
        raise ValueError(
            f"Argument `{name}` must be a {cls.__name__}, "
            f"received: {name}={value!r}"
        )
    return value


def configs_from_flat(config):
    """Splits a saved cell or layer config (one key per field) into
    `(tree_config, search_config, tuple_config, rest)`."""
    rest = dict(config)

    def take(cls, fields):
        return cls(**{f: rest.pop(f) for f in fields if f in rest})

    return (
        take(TreeConfig, TREE_FIELDS),
        take(SearchConfig, SEARCH_FIELDS),
        take(TupleConfig, TUPLE_FIELDS),
        rest,
    )
