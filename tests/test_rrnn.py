"""Tests of the RRNN layer (recursive-recurrent cell with a dynamic tree).

The tests whose point is numerics that can differ per backend (the search
against a loop reference, the GRU special case against `keras.layers.GRU`,
masking, gradients, the tree distance) are marked `backend`: CI runs them
again under KERAS_BACKEND=jax. The others (shapes, configs, saving,
argument checks, tree text) run once. Everything is kept tiny (a few units,
steps, merges): under JAX every eager call of a layer compiles its scan loop
anew, so the tests keep the number of calls and the merges per step small.
"""

import collections
import itertools
import os

import keras
import numpy as np
import pytest
from keras import ops

from on_lstm_keras.rrnn import RRNN
from on_lstm_keras.rrnn import RRNNCell
from on_lstm_keras.rrnn import RRNNTreeDistance
from on_lstm_keras.rrnn import SearchConfig
from on_lstm_keras.rrnn import TreeConfig
from on_lstm_keras.rrnn import TupleConfig
from on_lstm_keras.rrnn import gru_tree
from on_lstm_keras.rrnn import most_common_trees
from on_lstm_keras.rrnn import tree_distance
from on_lstm_keras.rrnn import tree_expression

backend = pytest.mark.backend


def np_(x):
    return ops.convert_to_numpy(x)


def random_inputs(shape, seed=0):
    return np.random.RandomState(seed).normal(size=shape).astype("float32")


def randomize(layer, seed=0, scale=0.8):
    """Gives every weight random values, so that no two scores tie."""
    rng = np.random.RandomState(seed)
    for variable in layer.weights:
        variable.assign(
            rng.uniform(-scale, scale, size=variable.shape).astype("float32")
        )


# -- an independent, loop-by-loop reference of the search ---------------------

_UNARY = {
    "sigmoid": lambda v: 1.0 / (1.0 + np.exp(-v)),
    "tanh": np.tanh,
    "one_minus": lambda v: 1.0 - v,
    "identity": lambda v: v,
    "relu": lambda v: np.maximum(v, 0.0),
}
_BINARY = {"add": np.add, "multiply": np.multiply}


def reference_sequence(layer, x):
    """Runs the search with Python loops over samples, steps and candidates.

    The node is the best candidate (`hard`) or the softmax mixture of the
    allowed candidates (`soft`).

    Returns `(outputs, trees, margins)` as float64 numpy arrays.
    """
    cell = layer.cell
    K, units, N = cell.tuples, cell.units, cell.iterations
    w = {v.name: np_(v).astype("float64") for v in cell.weights}
    kernel = w["left_kernel"] if cell.tie_input_kernel else w["kernel"]

    def block(matrix, k):
        return matrix[:, k * units : (k + 1) * units]

    def score(c):
        if cell.score_units:
            c = np.maximum(
                c @ w["score_hidden_kernel"] + w["score_hidden_bias"], 0.0
            )
        return float((c @ w["score_kernel"])[0])

    prior = w.get("merge_prior")
    n_ops, n_acts = len(cell.operations), len(cell.activations)

    def prior_of(n, choice):
        # Candidates are numbered pair-major over (i, j), then k, op, act,
        # over the pairs i < j of the slots before merge n; merges before n
        # take the earlier entries of the weight.
        offset = 0
        for m in range(n):
            offset += (3 + m) * (2 + m) // 2 * K * n_ops * n_acts
        pairs = list(itertools.combinations(range(3 + n), 2))
        i, j, k, o, u = choice
        index = ((pairs.index((i, j)) * K + k) * n_ops + o) * n_acts + u
        return float(prior[offset + index])

    batch, steps, _ = x.shape
    outputs = np.zeros((batch, steps, units))
    trees = np.zeros((batch, steps, N, 5), dtype="int64")
    margins = np.zeros((batch, steps))
    for s in range(batch):
        h = np.zeros(units)
        for t in range(steps):
            nodes = [x[s, t].astype("float64"), h, np.zeros(units)]
            used = set()
            made = []  # (slot, merge) of every generated node
            children = set()  # slots used as a child so far
            leaves = [{0}, {1}, set()]  # the leaves (x, h) under each slot
            for n in range(N):
                slots = 3 + n
                roots = [q for q in range(3, slots) if q not in used]
                found = []
                for i, j in itertools.combinations(range(slots), 2):
                    if cell.pool == "roots":
                        if (i >= 3 and i in used) or (j >= 3 and j in used):
                            continue
                        consumed = int(i >= 3) + int(j >= 3)
                        if len(roots) - consumed + 1 - 1 > N - n - 1:
                            continue
                        if getattr(cell, "read_inputs", False):
                            after = [q for q in roots if q not in (i, j)]
                            covered = leaves[i] | leaves[j]
                            for q in after:
                                covered |= leaves[q]
                            missing = len({0, 1} - covered)
                            # Each merge joins two roots or adds a leaf.
                            if len(after) + missing > N - n - 1:
                                continue
                    for k in range(K):
                        if cell.break_symmetry and n < min(2, K) and k != n:
                            continue
                        a = nodes[i] @ block(kernel if i == 0 else w[
                            "left_kernel"], k)
                        b = nodes[j] @ block(w["right_kernel"], k)
                        for o, op in enumerate(cell.operations):
                            if (
                                getattr(cell, "read_inputs", False)
                                and op == "multiply"
                                and 2 in (i, j)
                            ):
                                continue  # a constant: reads no child
                            pre = _BINARY[op](a, b) + w["bias"][
                                k * units : (k + 1) * units
                            ]
                            for u, act in enumerate(cell.activations):
                                if (
                                    cell.bounded
                                    and act not in ("sigmoid", "tanh")
                                    and np.max(np.abs(pre)) >= 1.0
                                ):
                                    continue
                                merge = (i, j, k, o, u)
                                if cell.unique_roots and any(
                                    m == merge and q not in children
                                    for q, m in made
                                ):
                                    continue
                                c = _UNARY[act](pre)
                                a_c = score(c)
                                if prior is not None:
                                    a_c += prior_of(n, merge)
                                found.append((a_c, merge, c))
                scores = np.array([f[0] for f in found])
                weights = np.exp(scores - scores.max())
                mixture = sum(
                    p * f[2] for p, f in zip(weights / weights.sum(), found)
                )
                found.sort(key=lambda f: -f[0])
                (s1, choice, value), s2 = found[0], found[1][0]
                if cell.selection == "soft":
                    value = mixture
                margins[s, t] += max(0.0, cell.margin - (s1 - s2)) / cell.margin
                trees[s, t, n] = choice
                if cell.pool == "roots":
                    used.update(q for q in choice[:2] if q >= 3)
                children.update(choice[:2])
                made.append((3 + n, choice))
                leaves.append(leaves[choice[0]] | leaves[choice[1]])
                nodes.append(value)
            h = nodes[-1]
            outputs[s, t] = h
    return outputs, trees, margins


# -- GRU as a special case ----------------------------------------------------


@pytest.mark.parametrize("input_dim,use_bias", [(5, True), (3, False)])
@backend
def test_from_gru_equals_keras_gru(input_dim, use_bias):
    units = 4
    x = random_inputs((3, 6, input_dim))
    gru = keras.layers.GRU(
        units,
        reset_after=False,
        use_bias=use_bias,
        return_sequences=True,
        return_state=True,
        bias_initializer="random_normal",
    )
    expected, expected_state = gru(x)
    layer = RRNN.from_gru(gru)
    assert layer.return_sequences and layer.return_state
    assert layer.selection == "forced"
    output, state = layer(x)
    np.testing.assert_allclose(np_(output), np_(expected), atol=1e-5)
    np.testing.assert_allclose(np_(state), np_(expected_state), atol=1e-5)
    # With a mask (padding at the end of sample 0).
    mask = np.ones((3, 6), dtype=bool)
    mask[0, 4:] = False
    expected, _ = gru(x, mask=mask)
    np.testing.assert_allclose(
        np_(layer(x, mask=mask)[0]), np_(expected), atol=1e-5
    )


def test_from_gru_weight_layout_and_initial_state():
    units, input_dim = 3, 4
    x = random_inputs((2, 5, input_dim), seed=1)
    h0 = random_inputs((2, units), seed=2) * 0.5
    gru = keras.layers.GRU(
        units, reset_after=False, bias_initializer="random_normal"
    )
    gru.build((None, None, input_dim))
    layer = RRNN.from_gru(gru)
    cell = layer.cell
    W, U, b = (np_(v) for v in gru.cell.weights)
    np.testing.assert_array_equal(np_(cell.kernel)[:, : 3 * units], W)
    np.testing.assert_array_equal(np_(cell.right_kernel)[:, : 3 * units], U)
    np.testing.assert_array_equal(np_(cell.bias)[: 3 * units], b)
    # Tuple 3 is (I, I, 0).
    np.testing.assert_array_equal(
        np_(cell.left_kernel)[:, 3 * units :], np.eye(units)
    )
    np.testing.assert_array_equal(
        np_(cell.right_kernel)[:, 3 * units :], np.eye(units)
    )
    np.testing.assert_array_equal(np_(cell.bias)[3 * units :], 0.0)
    np.testing.assert_allclose(
        np_(layer(x, initial_state=[h0])),
        np_(gru(x, initial_state=[h0])),
        atol=1e-5,
    )


@backend
def test_from_gru_tied_input_kernel_and_go_backwards():
    units = 4
    x = random_inputs((2, 5, units), seed=3)
    gru = keras.layers.GRU(units, reset_after=False, go_backwards=True)
    expected = gru(x)
    layer = RRNN.from_gru(gru, tuple_config=TupleConfig(tie_input_kernel=True))
    assert layer.cell.kernel is None and layer.go_backwards
    np.testing.assert_allclose(np_(layer(x)), np_(expected), atol=1e-5)


def test_from_gru_hard_search_starts_from_gru_weights():
    gru = keras.layers.GRU(3, reset_after=False)
    gru.build((None, None, 2))
    layer = RRNN.from_gru(
        gru,
        tree_config=TreeConfig(selection="hard", iterations=2),
        search_config=SearchConfig(score_units=2),
    )
    assert layer.selection == "hard" and layer.tree is None
    np.testing.assert_array_equal(
        np_(layer.cell.kernel)[:, :9], np_(gru.cell.kernel)
    )
    x = random_inputs((2, 3, 2))
    expected, _, _ = reference_sequence(layer, x)
    np.testing.assert_allclose(np_(layer(x)), expected[:, -1], atol=1e-5)


def test_from_gru_errors():
    after = keras.layers.GRU(2)
    after.build((None, None, 3))
    with pytest.raises(ValueError, match="reset_after"):
        RRNN.from_gru(after)
    with pytest.raises(ValueError, match="must be built"):
        RRNN.from_gru(keras.layers.GRU(2, reset_after=False))
    relu = keras.layers.GRU(2, reset_after=False, activation="relu")
    relu.build((None, None, 3))
    with pytest.raises(ValueError, match="activation='tanh'"):
        RRNN.from_gru(relu)
    with pytest.raises(ValueError, match="gru"):
        RRNN.from_gru(keras.layers.LSTM(2))
    gru = keras.layers.GRU(2, reset_after=False)
    gru.build((None, None, 3))
    with pytest.raises(ValueError, match="tuples"):
        RRNN.from_gru(gru, tree_config=TreeConfig(tuples=3))


# -- the search -------------------------------------------------------------


LEGACY = {"break_symmetry": False, "unique_roots": False,
          "merge_prior": False}


@pytest.mark.parametrize(
    "pool,selection,score_units,iterations,options",
    [("all", "hard", 3, 4, {}), ("roots", "hard", 0, 3, {}),
     ("roots", "soft", 3, 3, {}), ("all", "hard", 3, 3, LEGACY)],
)
@backend
def test_search_matches_loop_reference(pool, selection, score_units,
                                       iterations, options):
    """Trees, margins and outputs equal a loop-by-loop search (with the
    symmetry break, unique roots and merge prior, and without them)."""
    x = random_inputs((2, 3, 2), seed=4)
    layer = RRNN(
        3,
        tree_config=TreeConfig(
            iterations=iterations, tuples=2, selection=selection, pool=pool,
            activations=("sigmoid", "tanh", "one_minus", "identity", "relu"),
        ),
        search_config=SearchConfig(score_units=score_units, **options),
        return_sequences=True,
        return_trees=True,
        margin_weight=0.5,
    )
    layer.build((None, None, 2))
    randomize(layer, seed=5)
    output, trees = layer(x)
    expected, expected_trees, margins = reference_sequence(layer, x)
    np.testing.assert_array_equal(np_(trees), expected_trees)
    np.testing.assert_allclose(np_(output), expected, atol=1e-5)
    assert len(layer.losses) == 1
    np.testing.assert_allclose(
        float(np_(layer.losses[0])), 0.5 * margins.mean(), rtol=1e-5
    )
    if pool == "roots":
        for tree in np_(trees).reshape(-1, iterations, 5):
            children = [c for m in tree for c in m[:2] if c >= 3]
            # Every generated node but the last is a child exactly once.
            assert sorted(children) == list(range(3, 2 + iterations))
    if not options:
        # The symmetry break, seen in the trees themselves.
        assert (np_(trees)[..., 0, 2] == 0).all()
        assert (np_(trees)[..., 1, 2] == 1).all()


# Hand-built trees for the reachability test (besides the GRU tree): one
# for pool="all" that reuses nodes and remakes none, one for pool="roots"
# that remakes a leaf-only node after its first copy is used.
ALL_POOL_TREE = [
    (0, 1, 0, "add", "tanh"),
    (1, 2, 1, "multiply", "sigmoid"),
    (3, 4, 2, "add", "sigmoid"),
    (3, 5, 3, "multiply", "tanh"),
    (1, 4, 0, "add", "tanh"),
    (6, 7, 1, "add", "sigmoid"),
]
ROOTS_POOL_TREE = [
    (0, 1, 0, "add", "sigmoid"),
    (0, 1, 1, "multiply", "tanh"),
    (3, 4, 2, "add", "tanh"),
    (0, 1, 0, "add", "sigmoid"),
    (1, 6, 3, "multiply", "sigmoid"),
    (5, 7, 2, "add", "tanh"),
]


@pytest.mark.parametrize("pool,tree", [("all", ALL_POOL_TREE),
                                       ("roots", ROOTS_POOL_TREE)])
def test_hard_search_picks_any_preferred_tree(pool, tree):
    """With every other weight random (a random score MLP too), a merge
    prior on a hand-built tree makes the hard search pick that tree at
    every step, and the outputs equal the loop reference's."""
    from on_lstm_keras.rrnn import prefer_tree

    layer = RRNN(
        3,
        tree_config=TreeConfig(iterations=len(tree), tuples=4, pool=pool),
        search_config=SearchConfig(score_units=3),
        return_sequences=True,
        return_trees=True,
    )
    layer.build((None, None, 2))
    randomize(layer, seed=21)
    score_hidden = np_(layer.cell.score_hidden_kernel)
    prefer_tree(layer.cell, tree, strength=1.0)
    # A random score on top: the prior must win by more than it varies.
    layer.cell.score_kernel.assign(np.full((3, 1), 0.05, "float32"))
    np.testing.assert_array_equal(
        np_(layer.cell.score_hidden_kernel), score_hidden
    )
    x = random_inputs((3, 4, 2), seed=22)
    output, trees = layer(x)
    wanted = np.array([
        [i, j, k, layer.operations.index(o), layer.activations.index(a)]
        for i, j, k, o, a in tree
    ])
    np.testing.assert_array_equal(
        np_(trees), np.broadcast_to(wanted, np_(trees).shape)
    )
    expected, expected_trees, _ = reference_sequence(layer, x)
    np.testing.assert_array_equal(np_(trees), expected_trees)
    np.testing.assert_allclose(np_(output), expected, atol=1e-5)


# Not rerun on JAX (30 s there): the search's numerics are checked per
# backend by the loop reference, and the GRU's by the forced tree.
@pytest.mark.parametrize("pool", ["all", "roots"])
def test_from_gru_hard_search_equals_keras_gru(pool):
    """From `from_gru` weights the hard search picks the GRU tree at every
    step, and its output is the GRU's (an independent implementation)."""
    x = random_inputs((3, 6, 4), seed=23)
    gru = keras.layers.GRU(5, reset_after=False, return_sequences=True)
    expected = np_(gru(x))
    layer = RRNN.from_gru(
        gru,
        tree_config=TreeConfig(selection="hard", pool=pool),
        return_trees=True,
    )
    output, trees = layer(x)
    np.testing.assert_allclose(np_(output), expected, atol=1e-5)
    wanted = np.array([
        [i, j, k, layer.operations.index(o), layer.activations.index(a)]
        for i, j, k, o, a in gru_tree()
    ])
    assert (np_(trees) == wanted).all()


def reference_rrnn_gru(layer, x):
    """The RRNN-GRU in NumPy, vectorised over the batch (the candidate
    normalisation is over the batch): the GRU tree's merges, the gates on
    tuples 0/1/0, every other merge over all tuples by score."""
    cell = layer.cell
    K, units = cell.tuples, cell.units
    w = {v.name: np_(v).astype("float64") for v in cell.weights}
    if cell.fixed_identity:  # the last tuple is (I, I, 0), whatever is stored
        for name in ("kernel", "left_kernel", "right_kernel"):
            w[name][:, (K - 1) * units :] = np.eye(len(w[name]), units)
        w["bias"][(K - 1) * units :] = 0.0
    prior = w["merge_prior"].reshape(6, K)
    skeleton = gru_tree()
    gates = {0: 0, 1: 1, 6: 0}

    def block(matrix, k):
        return matrix[:, k * units : (k + 1) * units]

    def norm(c):  # c: (batch, K, units), over the batch
        return (c - c.mean(0)) / np.sqrt(c.var(0) + 1e-5)

    def score(c):
        if cell.score_units:
            c = np.maximum(
                c @ w["score_hidden_kernel"] + w["score_hidden_bias"], 0.0
            )
        return (c @ w["score_kernel"])[..., 0]

    batch, steps, _ = x.shape
    h = np.zeros((batch, units))
    outputs, tuples = [], []
    for t in range(steps):
        nodes = [x[:, t].astype("float64"), h, np.zeros((batch, units))]
        chosen = []
        searched = 0
        for n, (i, j, _, op, act) in enumerate(skeleton):
            def make(k):
                left = w["kernel"] if i == 0 else w["left_kernel"]
                pre = _BINARY[op](
                    nodes[i] @ block(left, k),
                    nodes[j] @ block(w["right_kernel"], k),
                ) + w["bias"][k * units : (k + 1) * units]
                return _UNARY[act](pre)

            if n in gates:
                nodes.append(make(gates[n]))
                chosen.append(np.full(batch, gates[n]))
                continue
            c = np.stack([make(k) for k in range(K)], axis=1)
            if cell.candidate_norm == "value":
                c = norm(c)
            a = score(norm(c) if cell.candidate_norm == "score" else c)
            a = a + prior[searched]
            searched += 1
            best = a.argmax(1)
            if cell.selection == "hard":
                value = c[np.arange(batch), best]
            else:
                p = np.exp(a - a.max(1, keepdims=True))
                p /= p.sum(1, keepdims=True)
                value = np.einsum("bk,bku->bu", p, c)
            nodes.append(value)
            chosen.append(best)
        h = nodes[-1]
        outputs.append(h)
        tuples.append(np.stack(chosen, 1))
    return np.stack(outputs, 1), np.stack(tuples, 1)


@pytest.mark.parametrize(
    "selection,candidate_norm",
    [("hard", None), ("soft", None), ("soft", "value"), ("hard", "score")],
)
@backend
def test_rrnn_gru_variant_matches_numpy(selection, candidate_norm):
    x = random_inputs((3, 3, 2), seed=26)
    layer = RRNN(
        3,
        tree_config=TreeConfig(variant="rrnn_gru", selection=selection),
        search_config=SearchConfig(candidate_norm=candidate_norm, score_units=2),
        return_sequences=True,
        return_trees=True,
    )
    layer.build((None, None, 2))
    randomize(layer, seed=27, scale=0.6)
    output, trees = layer(x)
    expected, tuples = reference_rrnn_gru(layer, x)
    # Normalising over a batch of 3 in float32 loses a digit.
    tolerance = 1e-4 if candidate_norm else 1e-5
    np.testing.assert_allclose(np_(output), expected, atol=tolerance)
    np.testing.assert_array_equal(np_(trees)[..., 2], tuples)
    # The skeleton is the GRU tree's: children, operations, activations.
    skeleton = np.array([[i, j, layer.operations.index(o),
                          layer.activations.index(a)]
                         for i, j, _, o, a in gru_tree()])
    np.testing.assert_array_equal(
        np_(trees)[..., [0, 1, 3, 4]],
        np.broadcast_to(skeleton, np_(trees)[..., [0, 1, 3, 4]].shape),
    )
    assert layer.cell.merge_prior_weight.shape == (6 * 4,)
    clone = RRNN.from_config(layer.get_config())
    assert clone.variant == "rrnn_gru"
    assert clone.cell.candidate_norm == candidate_norm


@backend
def test_rrnn_gru_from_gru_equals_keras_gru():
    x = random_inputs((2, 5, 3), seed=28)
    gru = keras.layers.GRU(4, reset_after=False, return_sequences=True)
    expected = np_(gru(x))
    layer = RRNN.from_gru(
        gru,
        tree_config=TreeConfig(selection="hard", variant="rrnn_gru"),
    )
    np.testing.assert_allclose(np_(layer(x)), expected, atol=1e-5)


@backend
def test_fixed_identity_computes_with_the_identity_tuple():
    """With `fixed_identity` the stored last blocks are ignored: the output
    is the NumPy RRNN-GRU's with tuple 3 written as (I, I, 0)."""
    x = random_inputs((3, 4, 2), seed=29)
    layer = RRNN(
        3,
        tree_config=TreeConfig(variant="rrnn_gru", selection="soft"),
        search_config=SearchConfig(score_units=2),
        tuple_config=TupleConfig(fixed_identity=True),
        return_sequences=True,
        return_trees=True,
    )
    layer.build((None, None, 2))
    randomize(layer, seed=30, scale=0.6)  # the identity blocks too
    stored = np_(layer.cell.left_kernel)[:, 9:]
    assert np.abs(stored - np.eye(3)).max() > 0.1
    output, trees = layer(x)
    expected, tuples = reference_rrnn_gru(layer, x)
    np.testing.assert_allclose(np_(output), expected, atol=1e-5)
    np.testing.assert_array_equal(np_(trees)[..., 2], tuples)
    clone = RRNN.from_config(layer.get_config())
    assert clone.cell.fixed_identity
    legacy = layer.get_config()
    legacy.pop("fixed_identity")
    assert not RRNN.from_config(legacy).cell.fixed_identity


@pytest.mark.parametrize("fixed", [True, False])
def test_fixed_identity_stays_through_adam(fixed):
    """Adam at a high rate leaves the identity blocks exactly where they
    started with `fixed_identity` (they get no gradient), and moves them
    without it; the other blocks train either way."""
    keras.utils.set_random_seed(31)
    x = random_inputs((8, 5, 3), seed=31)
    y = random_inputs((8, 5, 4), seed=32)
    layer = RRNN(
        4,
        tree_config=TreeConfig(variant="rrnn_gru", selection="soft"),
        search_config=SearchConfig(score_units=2),
        tuple_config=TupleConfig(fixed_identity=fixed),
        return_sequences=True,
    )
    model = keras.Sequential([keras.Input((5, 3)), layer])
    start = {v.name: np_(v).copy() for v in layer.cell.weights}
    model.compile(keras.optimizers.Adam(0.05), loss="mse")
    model.fit(x, y, batch_size=4, epochs=2, verbose=0)
    moved = {}
    for v in layer.cell.weights:
        if v.name in ("kernel", "left_kernel", "right_kernel", "bias"):
            change = np.abs(np_(v) - start[v.name])
            moved[v.name] = (change[..., :12].max(), change[..., 12:].max())
    for name, (others, identity) in moved.items():
        assert others > 1e-3, name
        if fixed:
            assert identity == 0.0, name
        else:
            assert identity > 1e-3, name


def test_fixed_identity_needs_identity_init():
    with pytest.raises(ValueError, match="identity_init=False"):
        RRNN(
            3,
            tuple_config=TupleConfig(fixed_identity=True, identity_init=False),
        )


@pytest.mark.parametrize(
    "kwargs,match",
    [({"variant": "lstm"}, "variant='lstm'"),
     ({"variant": "rrnn_gru", "iterations": 4}, "iterations=4"),
     ({"variant": "rrnn_gru", "selection": "forced", "tree": gru_tree()},
      "selection='forced'"),
     ({"variant": "rrnn_gru", "activations": ("sigmoid", "tanh")},
      "unknown name .identity."),
     ({"candidate_norm": "layer"}, "candidate_norm='layer'")],
)
def test_variant_arguments_are_checked(kwargs, match):
    # `from_config` sorts the keys into the three configs.
    with pytest.raises(ValueError, match=match):
        RRNN.from_config({"units": 3, **kwargs})


def test_legacy_search_cannot_hold_two_leaf_only_nodes():
    """Why the options exist: without them, two merges of the leaves alone
    always pick the same candidate (a value-only score sees the same
    values), so the GRU's z and r can never both appear."""
    layer = RRNN(3, TreeConfig(iterations=4, tuples=2),
                 SearchConfig(score_units=2, **LEGACY), return_trees=True)
    layer.build((None, None, 2))
    randomize(layer, seed=24)
    _, trees = layer(random_inputs((4, 5, 2), seed=25))
    for tree in np_(trees).reshape(-1, 4, 5):
        leaf_only = {tuple(m) for m in tree if m[0] < 3 and m[1] < 3}
        assert len(leaf_only) <= 1


def test_nodes_and_trees_describe_the_computation():
    """Recomputing each node from the returned tree gives the nodes output;
    with `bounded` (the default) every generated node lies in [-1, 2]."""
    layer = RRNN(
        3,
        tree_config=TreeConfig(iterations=4, tuples=2),
        search_config=SearchConfig(score_units=0),
        return_sequences=True,
        return_trees=True,
        return_nodes=True,
    )
    x = random_inputs((2, 3, 5), seed=10) * 3
    layer.build((None, None, 5))
    randomize(layer, seed=11, scale=2.0)
    output, trees, nodes = (np_(v) for v in layer(x))
    cell = layer.cell
    w = {v.name: np_(v) for v in cell.weights}
    assert nodes.shape == (2, 3, 7, 5)  # width max(input_dim, units)
    for s, t in itertools.product(range(2), range(3)):
        slots = nodes[s, t]
        np.testing.assert_allclose(slots[0], x[s, t], atol=1e-6)
        np.testing.assert_allclose(slots[2], 0.0)
        for n, (i, j, k, o, a) in enumerate(trees[s, t]):
            left = w["kernel"] if i == 0 else w["left_kernel"]
            lhs = slots[i][: left.shape[0]] @ left[:, 3 * k : 3 * k + 3]
            rhs = slots[j][:3] @ w["right_kernel"][:, 3 * k : 3 * k + 3]
            pre = _BINARY[cell.operations[o]](lhs, rhs) + w["bias"][
                3 * k : 3 * k + 3
            ]
            value = _UNARY[cell.activations[a]](pre)
            np.testing.assert_allclose(slots[3 + n][:3], value, atol=1e-5)
        np.testing.assert_allclose(output[s, t], slots[-1][:3], atol=1e-6)
    generated = nodes[:, :, 3:, :3]
    assert generated.min() >= -1.0 and generated.max() <= 2.0


def test_rrnn_cell_in_keras_rnn_equals_layer():
    x = random_inputs((2, 4, 3), seed=12)
    layer = RRNN(
        4,
        tree_config=TreeConfig(iterations=2),
        search_config=SearchConfig(score_units=2),
        return_sequences=True,
    )
    layer.build((None, None, 3))
    randomize(layer, seed=13)
    rnn = keras.layers.RNN(
        RRNNCell(
            4,
            tree_config=TreeConfig(iterations=2),
            search_config=SearchConfig(score_units=2),
        ), return_sequences=True
    )
    rnn.build((None, None, 3))
    rnn.set_weights(layer.get_weights())
    np.testing.assert_allclose(np_(rnn(x)), np_(layer(x)), atol=1e-6)


# -- shapes and masks ---------------------------------------------------------


def test_output_shapes_and_specs():
    for return_sequences, return_state in [(False, False), (True, True)]:
        layer = RRNN(
            4,
            tree_config=TreeConfig(iterations=3),
            return_sequences=return_sequences,
            return_state=return_state,
            return_trees=True,
            return_nodes=True,
        )
        shapes = [tuple(s) for s in layer.compute_output_shape((2, 5, 6))]
        assert shapes[1:3] == [(2, 5, 3, 5), (2, 5, 6, 6)]
        assert shapes[0] == ((2, 5, 4) if return_sequences else (2, 4))
        assert len(shapes) == 3 + return_state
    return_sequences, return_state = False, True
    layer = RRNN(
        4,
        tree_config=TreeConfig(iterations=3),
        search_config=SearchConfig(score_units=2),
        return_sequences=return_sequences,
        return_state=return_state,
        return_trees=True,
        return_nodes=True,
    )
    inputs = keras.Input((5, 6))
    symbolic = layer(inputs)
    result = layer(random_inputs((2, 5, 6)))
    expected = [(2, 5, 4) if return_sequences else (2, 4), (2, 5, 3, 5),
                (2, 5, 6, 6)]
    if return_state:
        expected.append((2, 4))
    assert [tuple(r.shape) for r in result] == expected
    assert [tuple(s.shape)[1:] for s in symbolic] == [e[1:] for e in expected]
    assert symbolic[1].dtype == "int32"
    assert ops.convert_to_numpy(result[1]).dtype == np.int32
    shapes = layer.compute_output_shape((2, 5, 6))
    assert [tuple(s) for s in shapes] == expected


def test_plain_output_and_bad_rank():
    layer = RRNN(
        4,
        tree_config=TreeConfig(iterations=2),
        search_config=SearchConfig(score_units=0),
    )
    x = random_inputs((3, 2, 5))
    layer(x)  # builds the weights
    randomize(layer, seed=4)
    output = np_(layer(x))
    expected, _, _ = reference_sequence(layer, x)
    np.testing.assert_allclose(output, expected[:, -1], atol=1e-5)
    with pytest.raises(ValueError, match="3D tensor"):
        RRNN(4, tree_config=TreeConfig(iterations=2))(random_inputs((3, 5)))


@backend
def test_masking_skips_padded_steps():
    """Padded steps (a Masking layer's mask) keep the state, give empty
    trees and zero nodes, and the rest equals the unpadded sequence."""
    x = random_inputs((2, 5, 3), seed=14)
    x[0, 3:] = 0.0  # sample 0 has 3 steps
    layer = RRNN(
        3,
        tree_config=TreeConfig(iterations=2),
        search_config=SearchConfig(score_units=2),
        return_sequences=True,
        return_state=True,
        return_trees=True,
        return_nodes=True,
    )
    inputs = keras.Input((5, 3))
    masked = keras.layers.Masking(0.0)(inputs)
    model = keras.Model(inputs, layer(masked))
    output, trees, nodes, state = (np_(v) for v in model(x))
    short, short_trees, _, short_state = (
        np_(v) for v in layer(x[:1, :3])
    )
    np.testing.assert_allclose(state[0], short_state[0], atol=1e-6)
    np.testing.assert_allclose(output[0, :3], short[0], atol=1e-6)
    np.testing.assert_array_equal(trees[0, :3], short_trees[0])
    # The state (and output) is carried through the padded steps.
    np.testing.assert_allclose(
        output[0, 3:], np.repeat(short[0, 2:], 2, axis=0), atol=1e-6
    )
    assert (trees[0, 3:] == -1).all() and (trees[1] >= 0).all()
    assert (nodes[0, 3:] == 0).all()
    # Only the 3 real steps are counted, each by its expression.
    want = collections.Counter(tree_expression(t) for t in short_trees[0])
    got = most_common_trees(trees[0], top=None)
    assert {e: n for e, n, _ in got} == dict(want)
    assert [n for _, n, _ in got] == sorted(want.values(), reverse=True)
    assert sum(f for _, _, f in got) == pytest.approx(1.0)


# -- gradients ----------------------------------------------------------------


def test_forced_mode_has_no_score_and_no_margin_loss():
    layer = RRNN(
        3,
        tree_config=TreeConfig(selection="forced", tree=gru_tree()),
        margin_weight=1.0,
    )
    layer(random_inputs((1, 2, 3)))
    assert layer.cell.score_kernel is None and not layer.losses
    names = sorted(v.name for v in layer.weights)
    assert names == ["bias", "kernel", "left_kernel", "right_kernel"]


# -- trees: reading and distance ----------------------------------------------


def test_tree_expression_of_the_gru_tree():
    text = tree_expression(gru_tree(), identity_tuples=(3,))
    assert text == (
        "h_t = tanh(x·L2 + (h ⊙ σ(x·L1 + h·R1 + b1))·R2 + b2) ⊙ "
        "(1 − σ(x·L0 + h·R0 + b0)) + h ⊙ σ(x·L0 + h·R0 + b0)"
    )
    steps = tree_expression(gru_tree(), identity_tuples=(3,), steps=True)
    assert steps.splitlines()[-1] == "h_t = n8 + n10"
    # z is made first (merge 0, tuple 0) and r second (merge 1, tuple 1).
    assert steps.splitlines()[:2] == [
        "n3 = σ(x·L0 + h·R0 + b0)", "n4 = σ(x·L1 + h·R1 + b1)"
    ]
    assert "n7 = 1 − n3" in steps
    generic = tree_expression(gru_tree())
    assert "0·L3" not in generic and "z" not in generic
    assert "1 − (n3·R3 + b3)" in tree_expression(gru_tree(), steps=True)


def test_tree_expression_ignores_unused_merges_and_padding():
    used = [(0, 1, 0, "add", "tanh"), (0, 1, 1, "add", "sigmoid"),
            (1, 3, 0, "multiply", "identity")]
    other = [(0, 1, 0, "add", "tanh"), (1, 2, 1, "add", "relu"),
             (1, 3, 0, "multiply", "identity")]
    assert tree_expression(used) == tree_expression(other)
    assert tree_expression(used) == (
        "h_t = h·L0 ⊙ tanh(x·L0 + h·R0 + b0)·R0 + b0"
    )
    assert tree_expression(-np.ones((3, 5), int)) == "(padding)"
    ints = np.array([[0, 1, 0, 0, 1], [0, 1, 1, 0, 0], [1, 3, 0, 1, 3]])
    counts = most_common_trees(
        np.stack([ints, ints, -np.ones_like(ints)])[None]
    )
    assert counts == [(tree_expression(used), 2, 1.0)]


# The distance of version 0.1.0: every node counts, children in order.
PLAIN = {"internal_only": False, "isomorphic": False}


def td(*arrays, **options):
    """`tree_distance` on arrays; compiled as a whole under JAX, whose eager
    mode would otherwise compile each small op for each new shape. Without
    options, the distance of version 0.1.0 (`PLAIN`)."""
    import functools

    options = options or PLAIN
    arrays = [np.asarray(a) for a in arrays]
    function = functools.partial(tree_distance, **options)
    if keras.backend.backend() == "jax":
        import jax

        return jax.jit(function)(*arrays)
    return function(*arrays)


def _tiny(values):
    return np.array(values, dtype="float32")


@backend
def test_tree_distance_against_hand_computed_values():
    x, h, zero = [1.0, 0.0], [0.0, 2.0], [0.0, 0.0]
    # Predicted: one merge n3 = merge(x, h).
    #   heap: 1 -> n3, 2 -> x, 3 -> h
    pred = [[0, 1, 0, 0, 0]]
    pred_nodes = _tiny([x, h, zero, [1.0, 1.0]])
    # Target: m3 = merge(x, h), m4 = merge(0, m3).
    #   heap: 1 -> m4, 2 -> 0, 3 -> m3, 6 -> x', 7 -> h'
    target = [[0, 1, 0, 0, 0], [2, 3, 0, 0, 0]]
    tx, th = [0.5, 0.0], [0.0, 1.0]
    target_nodes = _tiny([tx, th, zero, [2.0, 0.0], [0.0, 3.0]])
    # pos1: |n3 - m4|^2 = 1 + 4; pos2: |x - 0|^2 = 1; pos3: |h - m3|^2 = 4 + 4
    # pos6, pos7 only in the target: |x'|^2 + |h'|^2 = 0.25 + 1
    expected = 5.0 + 1.0 + 8.0 + 1.25
    got = td([pred], pred_nodes[None], [target], target_nodes[None])
    np.testing.assert_allclose(np_(got), [expected], rtol=1e-6)
    # Symmetric, and zero against itself.
    back = td([target], target_nodes[None], [pred], pred_nodes[None])
    np.testing.assert_allclose(np_(back), [expected], rtol=1e-6)
    same = td([pred], pred_nodes[None], [pred], pred_nodes[None])
    np.testing.assert_allclose(np_(same), [0.0])


def test_tree_distance_reused_nodes_padding_and_broadcast():
    # A node used twice appears at both positions: n3 = (x, h),
    # n4 = (x, n3), n5 = (n3, n4):
    #   1 -> n5, 2 -> n3, 3 -> n4, 4 -> x, 5 -> h, 6 -> x, 7 -> n3,
    #   14 -> x, 15 -> h
    tree = [[0, 1, 0, 0, 0], [0, 3, 0, 0, 0], [3, 4, 0, 0, 0]]
    x, h = [1.0], [2.0]
    nodes = _tiny([x, h, [0.0], [3.0], [4.0], [5.0]])
    norm = 25 + 9 + 16 + 1 + 4 + 1 + 9 + 1 + 4  # against the empty tree
    empty = -np.ones((3, 5), dtype="int32")
    got = td([tree, empty], np.stack([nodes, nodes]), [empty, tree],
             np.stack([nodes, nodes]))
    np.testing.assert_allclose(np_(got), [norm, norm])
    # Width 1 against width 2 (zero padded); a static target with names,
    # broadcast over (batch, steps) = (2, 1).
    wide = _tiny([[1.0, 7.0], [2.0, 0.0], [0.0, 0.0], [3.0, 0.0]])
    static = [(0, 1, 0, "add", "tanh")]
    got = tree_distance(
        np.array([[[[0, 1, 0, 0, 0]]]] * 2),
        np.stack([[nodes[[0, 1, 2, 3]]]] * 2),
        static,
        wide,
        **PLAIN,
    )
    np.testing.assert_allclose(np_(got), [[49.0], [49.0]])


def _heap(tree, nodes):
    """{heap position: vector}, by explicit expansion (for the tests)."""
    out = {}

    def visit(slot, position):
        out[position] = np.asarray(nodes[slot], dtype="float64")
        if slot >= 3:
            i, j = tree[slot - 3][:2]
            visit(int(i), 2 * position)
            visit(int(j), 2 * position + 1)

    visit(3 + len(tree) - 1, 1)
    return out


def _random_tree(rng, iterations):
    return [
        [int(v) for v in sorted(rng.choice(3 + n, 2, replace=False))]
        + [0, 0, 0]
        for n in range(iterations)
    ]


def test_tree_distance_equals_explicit_heap_expansion():
    rng = np.random.RandomState(21)
    n_pred, n_target, count = 4, 6, 6
    trees = [_random_tree(rng, n_pred) for _ in range(count)]
    targets = [_random_tree(rng, n_target) for _ in range(count)]
    nodes = rng.normal(size=(count, 3 + n_pred, 2)).astype("float32")
    t_nodes = rng.normal(size=(count, 3 + n_target, 2)).astype("float32")
    zero = np.zeros(2)
    expected = []
    for tree, target, v, tv in zip(trees, targets, nodes, t_nodes):
        a, b = _heap(tree, v), _heap(target, tv)
        expected.append(sum(
            np.sum((a.get(p, zero) - b.get(p, zero)) ** 2)
            for p in set(a) | set(b)
        ))
    got = td(trees, nodes, targets, t_nodes)
    np.testing.assert_allclose(np_(got), expected, rtol=1e-4)


PAPER = {"internal_only": True, "isomorphic": True}


def test_paper_distance_ignores_leaves():
    """The issue's case: the same node value over (x, h) and over (x, 0)
    is distance 0 (leaves do not count); the 0.1.0 distance gave |h|^2."""
    x, h, zero = [1.0, 0.0], [0.0, 2.0], [0.0, 0.0]
    nodes = _tiny([x, h, zero, [0.3, 0.4]])
    over_h, over_zero = [[0, 1, 0, 0, 0]], [[0, 2, 0, 0, 0]]
    paper = td([over_h], nodes[None], [over_zero], nodes[None], **PAPER)
    np.testing.assert_allclose(np_(paper), [0.0], atol=1e-7)
    plain = td([over_h], nodes[None], [over_zero], nodes[None])
    np.testing.assert_allclose(np_(plain), [4.0], rtol=1e-6)
    # The default of the function is the paper's distance.
    got = tree_distance([over_h], nodes[None], [over_zero], nodes[None])
    np.testing.assert_allclose(np_(got), [0.0], atol=1e-7)


@backend
def test_paper_distance_hand_computed():
    """Internal nodes only, and the minimum over the target's child orders:
    worked by hand on 1-wide vectors."""
    leaves = [[5.0], [7.0], [0.0]]  # x, h, 0: never counted
    # Predicted: n3 = (x, h) = 1, n4 = (x, 0) = 2, n5 = (n3, n4) = 3.
    pred = [[0, 1, 0, 0, 0], [0, 2, 0, 0, 0], [3, 4, 0, 0, 0]]
    pred_nodes = _tiny(leaves + [[1.0], [2.0], [3.0]])
    # Target: m3 = (x, 0) = 2.5, m4 = (x, h) = 1.5, m5 = (m3, m4) = 3:
    # in order, (1 - 2.5)^2 + (2 - 1.5)^2 = 2.5; swapped, (1 - 1.5)^2 +
    # (2 - 2.5)^2 = 0.5; the root adds 0.
    target = [[0, 2, 0, 0, 0], [0, 1, 0, 0, 0], [3, 4, 0, 0, 0]]
    target_nodes = _tiny(leaves + [[2.5], [1.5], [3.0]])
    got = td([pred], pred_nodes[None], [target], target_nodes[None], **PAPER)
    np.testing.assert_allclose(np_(got), [0.5], rtol=1e-6)
    ordered = td([pred], pred_nodes[None], [target], target_nodes[None],
                 internal_only=True, isomorphic=False)
    np.testing.assert_allclose(np_(ordered), [2.5], rtol=1e-6)
    # An internal node facing a leaf counts its whole internal subtree:
    # target m3 = (x, h) = 4 alone; predicted n5 vs m3 = (3 - 4)^2, and
    # n3, n4 face the leaves x, h of the target: 1 + 4.
    small = [[0, 1, 0, 0, 0]]
    small_nodes = _tiny(leaves + [[4.0]])
    got = td([pred], pred_nodes[None], [small], small_nodes[None], **PAPER)
    np.testing.assert_allclose(np_(got), [1.0 + 1.0 + 4.0], rtol=1e-6)


def _expand(tree, nodes, slot):
    """The tree under `slot` as nested tuples `(value, left, right)`, with
    `None` children for leaves (for the brute-force test)."""
    value = np.asarray(nodes[slot], dtype="float64")
    if slot < 3:
        return (value, None, None, False)
    i, j = tree[slot - 3][:2]
    return (value, _expand(tree, nodes, int(i)),
            _expand(tree, nodes, int(j)), True)


def _variants(node):
    """Every tree reached by swapping children of any internal node."""
    if node is None or not node[3]:
        yield node
        return
    for left in _variants(node[1]):
        for right in _variants(node[2]):
            yield (node[0], left, right, True)
            yield (node[0], right, left, True)


def _internal_heap(node, position=1, out=None):
    out = {} if out is None else out
    if node is not None and node[3]:
        out[position] = node[0]
        _internal_heap(node[1], 2 * position, out)
        _internal_heap(node[2], 2 * position + 1, out)
    return out


@backend
def test_paper_distance_equals_brute_force_minimum():
    rng = np.random.RandomState(31)
    count, n_pred, n_target = 5, 3, 3
    trees = [_random_tree(rng, n_pred) for _ in range(count)]
    targets = [_random_tree(rng, n_target) for _ in range(count)]
    nodes = rng.normal(size=(count, 3 + n_pred, 2)).astype("float32")
    t_nodes = rng.normal(size=(count, 3 + n_target, 2)).astype("float32")
    zero = np.zeros(2)
    expected = []
    for tree, target, v, tv in zip(trees, targets, nodes, t_nodes):
        a = _internal_heap(_expand(tree, v, 2 + n_pred))
        best = np.inf
        for variant in _variants(_expand(target, tv, 2 + n_target)):
            b = _internal_heap(variant)
            best = min(best, sum(
                np.sum((a.get(p, zero) - b.get(p, zero)) ** 2)
                for p in set(a) | set(b)
            ))
        expected.append(best)
    got = td(trees, nodes, targets, t_nodes, **PAPER)
    np.testing.assert_allclose(np_(got), expected, rtol=1e-4)


def test_tree_distance_layer_config():
    layer = RRNNTreeDistance(0.1, isomorphic=False)
    config = layer.get_config()
    assert config["internal_only"] and not config["isomorphic"]
    assert RRNNTreeDistance.from_config(config).get_config() == config


def test_gru_target_nodes_and_tree_distance_layer():
    """The frozen-GRU target, TD zero against itself, the loss layer."""
    x = random_inputs((2, 4, 3), seed=18)
    gru = keras.layers.GRU(4, reset_after=False, return_sequences=True)
    expected = gru(x)
    target = RRNN.from_gru(
        gru, return_trees=True, return_nodes=True, trainable=False,
    )
    h, t_trees, t_nodes = target(x)
    np.testing.assert_allclose(np_(h), np_(expected), atol=1e-5)
    np.testing.assert_allclose(np_(t_nodes)[:, :, -1, :], np_(expected),
                               atol=1e-5)
    assert (np_(t_trees) == np.array(
        [[i, j, k, 0 if o == "add" else 1,
          ("sigmoid", "tanh", "one_minus", "identity").index(a)]
         for i, j, k, o, a in gru_tree()])).all()
    distance = RRNNTreeDistance(0.5)
    td = distance([t_trees, t_nodes, t_trees, t_nodes])
    np.testing.assert_allclose(np_(td), np.zeros((2, 4)), atol=1e-10)
    pred_nodes = np_(t_nodes).copy()
    pred_nodes[:, :, -1, :] += 1.0  # h_t off by 1 in each of the 4 units
    td = distance([t_trees, pred_nodes, t_trees, t_nodes])
    np.testing.assert_allclose(np_(td), np.full((2, 4), 4.0), rtol=1e-5)
    np.testing.assert_allclose(float(np_(distance.losses[0])), 0.5 * 4.0,
                               rtol=1e-5)


@backend
def test_training_step_with_every_loss_term():
    """One compiled train step: task loss, margin, L2 and TD to a frozen
    GRU; gradients reach every weight, score MLP included, in hard
    (straight-through) and soft selection."""
    x = random_inputs((4, 3, 2), seed=19)
    gru = keras.layers.GRU(3, reset_after=False, return_sequences=True)
    gru.build((None, None, 2))
    inputs = keras.Input((3, 2))
    hard = RRNN(
        3,
        tree_config=TreeConfig(iterations=1),
        search_config=SearchConfig(score_units=2),
        return_sequences=True,
        return_trees=True,
        return_nodes=True,
        margin_weight=0.1,
        kernel_regularizer=keras.regularizers.L2(1e-8),
    )
    soft = RRNN(
        3,
        tree_config=TreeConfig(iterations=1, selection="soft"),
        search_config=SearchConfig(score_units=2),
        return_sequences=True,
    )
    target = RRNN.from_gru(
        gru, return_trees=True, return_nodes=True, trainable=False
    )
    output, trees, nodes = hard(inputs)
    _, t_trees, t_nodes = target(inputs)
    td = RRNNTreeDistance(0.003)([trees, nodes, t_trees, t_nodes])
    features = keras.layers.Concatenate()([output, soft(inputs)])
    model = keras.Model(inputs, [keras.layers.Dense(2)(features), td])
    model.compile(keras.optimizers.SGD(0.1), loss=["mse", None])
    for seed, layer in enumerate((hard, soft)):
        randomize(layer, seed=15 + seed, scale=0.5)
    before = {id(v): np_(v).copy() for v in model.weights}
    # The loss of the step is the one of the weights before it: the MSE of
    # the output plus every added loss (margin, L2, tree distance).
    prediction, _ = model(x)
    want = float(np.mean((np_(prediction) - 1.0) ** 2)) + sum(
        float(np_(v)) for v in model.losses)
    assert len(model.losses) >= 3
    loss = model.train_on_batch(x, np.ones((4, 3, 2), "float32"))
    assert float(np.ravel(loss)[0]) == pytest.approx(want, rel=1e-4)

    def changed(variable):
        return np.abs(np_(variable) - before[id(variable)]).max() > 0

    for layer in (hard, soft):
        for name in ("score_hidden_kernel", "score_hidden_bias",
                     "score_kernel", "kernel", "left_kernel",
                     "right_kernel", "bias"):
            assert changed(getattr(layer.cell, name)), (layer.selection, name)
    assert not any(changed(v) for v in target.weights)


# -- serialization ------------------------------------------------------------


def test_config_round_trip():
    layer = RRNN(
        5,
        tree_config=TreeConfig(iterations=4, tuples=3, selection="soft",
                               pool="roots", activations=("tanh", "relu")),
        search_config=SearchConfig(score_units=0, margin=0.5, bounded=False),
        margin_weight=0.2,
        return_trees=True,
        return_nodes=True,
        return_sequences=True,
        kernel_regularizer="l2",
    )
    config = layer.get_config()
    clone = RRNN.from_config(config)
    assert clone.get_config() == config
    forced = RRNN(
        3,
        tree_config=TreeConfig(selection="forced", tree=gru_tree()),
    )
    config = forced.get_config()
    assert config["tree"][2] == [1, 4, 3, "multiply", "identity"]
    assert RRNN.from_config(config).get_config() == config
    cell = RRNNCell(4, tree_config=TreeConfig(iterations=2))
    assert RRNNCell.from_config(cell.get_config()).get_config() == (
        cell.get_config()
    )


@pytest.mark.parametrize("kind", ["hard", "from_gru"])
def test_keras_save_and_load(tmp_path, kind):
    x = random_inputs((2, 4, 3), seed=20)
    inputs = keras.Input((4, 3))
    if kind == "hard":
        layer = RRNN(
            3,
            tree_config=TreeConfig(iterations=2),
            search_config=SearchConfig(score_units=2),
            return_sequences=True,
            return_trees=True,
            margin_weight=0.1,
        )
    else:
        gru = keras.layers.GRU(3, reset_after=False, return_sequences=True)
        gru(x)
        layer = RRNN.from_gru(gru, return_trees=True)
    output, trees = layer(inputs)
    model = keras.Model(inputs, [keras.layers.Dense(2)(output), trees])
    path = os.path.join(tmp_path, "rrnn.keras")
    model.save(path)
    loaded = keras.models.load_model(path)  # no custom_objects
    for a, b in zip(model(x), loaded(x)):
        np.testing.assert_array_equal(np_(a), np_(b))


# -- argument checks ----------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"units": 0}, "units=0"),
        ({"iterations": 0}, "iterations=0"),
        ({"tuples": 1.5}, "tuples=1.5"),
        ({"score_units": -1}, "score_units=-1"),
        ({"selection": "argmax"}, "selection='argmax'"),
        ({"pool": "leaves"}, "pool='leaves'"),
        ({"activations": ("tanh", "softplus")}, "activations='softplus'"),
        ({"activations": ()}, "activations"),
        ({"operations": ("add", "add")}, "operations"),
        ({"margin": 0}, "margin=0"),
        ({"margin_weight": -1.0}, "margin_weight=-1.0"),
        ({"selection": "forced"}, "tree=None"),
        ({"tree": gru_tree()}, "selection='hard'"),
        ({"selection": "forced", "tree": gru_tree()[:3]}, "exactly"),
        ({"selection": "forced", "iterations": 1,
          "tree": [(1, 1, 0, "add", "tanh")]}, r"\(i, j\)=\(1, 1\)"),
        ({"selection": "forced", "iterations": 1,
          "tree": [(0, 3, 0, "add", "tanh")]}, r"\(i, j\)=\(0, 3\)"),
        ({"selection": "forced", "iterations": 1,
          "tree": [(0, 1, 4, "add", "tanh")]}, "k=4"),
        ({"selection": "forced", "iterations": 1,
          "tree": [(0, 1, 0, "subtract", "tanh")]}, "'subtract'"),
        ({"selection": "forced", "iterations": 1,
          "tree": [(0, 1, 0, "add")]}, "5-tuple"),
        ({"selection": "forced", "iterations": 2, "pool": "roots",
          "tree": [(0, 1, 0, "add", "tanh"), (0, 1, 0, "add", "tanh")]},
         "node 3 is a child 0 times"),
    ],
)
def test_bad_arguments_are_named(kwargs, match):
    # `from_config` sorts the keys into the three configs.
    kwargs = {"units": 3, **kwargs}
    with pytest.raises(ValueError, match=match):
        RRNN.from_config(kwargs)


def test_tie_input_kernel_needs_matching_width():
    with pytest.raises(ValueError, match="input_dim=5, units=3"):
        RRNN(
            3,
            tree_config=TreeConfig(iterations=2),
            tuple_config=TupleConfig(tie_input_kernel=True),
        )(
            random_inputs((1, 2, 5))
        )


def test_tree_distance_layer_checks_inputs():
    with pytest.raises(ValueError, match="weight=-1"):
        RRNNTreeDistance(-1)
    with pytest.raises(ValueError, match="iterations, 5"):
        tree_distance(np.zeros((2, 4)), np.zeros((2, 3, 1)),
                      np.zeros((2, 1, 5)), np.zeros((2, 4, 1)))


def _leaves_read(tree, operations=("add", "multiply")):
    """`(reads x, reads h)` of the root of a tree `(iterations, 5)`,
    walked by hand from its children indices. A product with the zero leaf
    (slot 2) is a constant: it reads neither child."""
    reads = [{0}, {1}, set()]
    for i, j, _, op, _ in tree:
        name = op if isinstance(op, str) else operations[op]
        if name == "multiply" and 2 in (i, j):
            reads.append(set())
        else:
            reads.append(reads[i] | reads[j])
    root = reads[-1]
    return 0 in root, 1 in root


# A tree that never reads `x` (slot 0): a model of the past alone.
NO_INPUT_TREE = [
    (1, 2, 0, "add", "tanh"),
    (1, 2, 1, "multiply", "sigmoid"),
    (3, 4, 2, "add", "tanh"),
    (1, 5, 0, "add", "tanh"),
    (2, 6, 1, "add", "sigmoid"),
    (1, 7, 2, "add", "tanh"),
]


# A tree whose only `x` is multiplied by the zero leaf (slot 2): merge 0 is
# the constant `tanh(b_0)`, so this tree too reads `h` alone.
ZERO_PRODUCT_TREE = [
    (0, 2, 0, "multiply", "tanh"),
    (1, 2, 1, "add", "sigmoid"),
    (3, 4, 2, "multiply", "tanh"),
    (1, 5, 0, "add", "tanh"),
    (2, 6, 1, "add", "sigmoid"),
    (1, 7, 2, "add", "tanh"),
]


@pytest.mark.parametrize("tree", [NO_INPUT_TREE, ZERO_PRODUCT_TREE],
                         ids=["no_x", "x_times_zero"])
def test_read_inputs_keeps_only_trees_that_read_x_and_h(tree):
    """A merge prior on a tree that does not read `x` makes the hard search
    pick it; with `read_inputs` every picked tree, at every step and
    sample, reads both `x` and `h` (walked by hand), holds no product with
    the zero leaf, and the trees and outputs equal the loop reference's."""
    from on_lstm_keras.rrnn import prefer_tree

    assert _leaves_read(tree) == (False, True)
    x = random_inputs((4, 3, 2), seed=31)
    for read_inputs in (False, True):
        layer = RRNN(
            3,
            tree_config=TreeConfig(iterations=6, tuples=3, pool="roots"),
            search_config=SearchConfig(score_units=3, read_inputs=read_inputs),
            return_sequences=True,
            return_trees=True,
        )
        layer.build((None, None, 2))
        randomize(layer, seed=32)
        prefer_tree(layer.cell, tree, strength=1.0)
        output, trees = layer(x)
        picked = np_(trees).reshape(-1, 6, 5)
        reads = [_leaves_read(t, layer.operations) for t in picked]
        if not read_inputs:
            wanted = np.array([
                [i, j, k, layer.operations.index(o),
                 layer.activations.index(a)] for i, j, k, o, a in tree])
            np.testing.assert_array_equal(
                picked, np.broadcast_to(wanted, picked.shape))
            continue
        assert reads == [(True, True)] * len(picked)
        multiply = layer.operations.index("multiply")
        assert not any(
            op == multiply and 2 in (i, j)
            for t in picked for i, j, _, op, _ in t
        )
        expected, expected_trees, _ = reference_sequence(layer, x)
        np.testing.assert_array_equal(np_(trees), expected_trees)
        np.testing.assert_allclose(np_(output), expected, atol=1e-5)


def test_read_inputs_still_reaches_the_gru_tree_and_round_trips():
    from on_lstm_keras.rrnn import prefer_tree

    layer = RRNN(
        3,
        tree_config=TreeConfig(iterations=9, pool="roots"),
        search_config=SearchConfig(read_inputs=True),
        return_sequences=True,
        return_trees=True,
    )
    layer.build((None, None, 2))
    randomize(layer, seed=41)
    prefer_tree(layer.cell, gru_tree(), strength=1.0)
    layer.cell.score_kernel.assign(
        np.full(np_(layer.cell.score_kernel).shape, 0.05, "float32"))
    _, trees = layer(random_inputs((2, 3, 2), seed=42))
    wanted = np.array([
        [i, j, k, layer.operations.index(o), layer.activations.index(a)]
        for i, j, k, o, a in gru_tree()])
    np.testing.assert_array_equal(
        np_(trees), np.broadcast_to(wanted, np_(trees).shape))
    config = layer.get_config()
    assert config["read_inputs"] is True
    assert RRNN.from_config(config).get_config()["read_inputs"] is True
