"""The tree search an `RRNNCell` runs at every step.

`TreeSearch` holds the cell's computation: it scores every candidate merge
of the pool, selects one (hard, soft or forced) and builds the step's
tree. It is mixed into `RRNNCell`, which owns the weights and settings it
reads (`tuples`, `units`, `iterations`, `selection`, `pool`, `operations`,
`activations`, `bounded`, `margin`, `break_symmetry`, `unique_roots`,
`merge_prior`, the kernels, the score MLP and the merge prior).

Why the three search options exist. The score `α(c)` sees only a
candidate's value, and a candidate built from the leaves alone has the same
value at every merge; with `pool="all"` the candidates of merge `n` also
include all those of merge `n − 1`, so the best score can never fall and
the search keeps re-picking one candidate. Such a search can hold at most
one distinct `(x, h)`-only node, and a GRU needs two (`z` and `r`).
`break_symmetry` restricts merge 0 to tuple 0 and merge 1 to tuple 1 (as
the authors' code does), `unique_roots` excludes a merge that would remake
a node that is still unused, and `merge_prior` adds a learned score per
merge and candidate. With the three, every tree of `iterations` merges
(with merges 0 and 1 on tuples 0 and 1, and no duplicate of an unused
node) is the hard search's choice for some setting of the weights: a prior
that is higher on the tree's candidates than anywhere else.
"""

import numpy as np
from keras import ops

from on_lstm_keras.rrnn.candidates import AllowedCandidates
from on_lstm_keras.rrnn.nodes import pad_to_width
from on_lstm_keras.rrnn.trees import NUM_LEAVES

_UNARY = {
    "sigmoid": ops.sigmoid,
    "tanh": ops.tanh,
    "one_minus": lambda v: 1.0 - v,
    "identity": lambda v: v,
    "relu": ops.relu,
}
_BINARY = {
    "add": lambda a, b: a + b,
    "multiply": lambda a, b: a * b,
}
# The merges of `gru_tree()` that make the gates (z, r, z again): the
# RRNN-GRU keeps them on their tuples (0, 1, 0) and searches the others.
GATE_MERGES = (0, 1, 6)



class TreeSearch(AllowedCandidates):
    """Candidates, scores and selection of the RRNN cell's merges."""

    def num_candidates(self, n):
        """Number of candidates merge `n` scores (0 in forced mode; for the
        RRNN-GRU, one per tuple, or 0 for the gates)."""
        if self.selection == "forced":
            return 0
        if self.variant == "rrnn_gru":
            return 0 if n in GATE_MERGES else self.tuples
        return (
            len(self._pairs[n][0])
            * self.tuples
            * len(self.operations)
            * len(self.activations)
        )

    def score(self, candidates):
        """`α(c)` for candidates `(..., units)`; returns `(...)`."""
        hidden = candidates
        if self.score_units:
            hidden = ops.relu(
                ops.matmul(hidden, self.score_hidden_kernel)
                + self.score_hidden_bias
            )
        return ops.squeeze(ops.matmul(hidden, self.score_kernel), axis=-1)

    def _project(self, value, node_kernel, batch):
        K, units = self.tuples, self.units
        both = ops.reshape(
            ops.matmul(value, node_kernel), (batch, 2, K, units)
        )
        return both[:, 0], both[:, 1]

    def tree_step(self, x_proj, h_tm1, node_kernel, x=None):
        """Builds one tree per sample.

        Args:
            x_proj: `(batch, K * units)`, `input_projection(x_t)`.
            h_tm1: `(batch, units)`, the previous state.
            node_kernel: `node_kernel()`.
            x: Optional `(batch, input_dim)`, the input itself; when given,
                the node values are returned.

        Returns:
            A dict: `"h"` `(batch, units)`; `"trees"` int32
            `(batch, iterations, 5)`; `"margin"` `(batch,)` the margin term
            (0 in forced mode); and, if `x` is given, `"nodes"`
            `(batch, 3 + iterations, node_width)`.
        """
        K, units = self.tuples, self.units
        batch = ops.shape(h_tm1)[0]
        dtype = h_tm1.dtype
        bias = ops.reshape(self.node_bias(), (K, units))
        zeros = ops.zeros_like(ops.reshape(x_proj, (batch, K, units)))
        left = [ops.reshape(x_proj, (batch, K, units))]
        right = [zeros]  # slot 0 is never a right child
        h_left, h_right = self._project(h_tm1, node_kernel, batch)
        left += [h_left, zeros]
        right += [h_right, zeros]
        values = []
        choices = []
        # used[:, s] = 1 once slot s has been a child (for `unique_roots`).
        used = ops.zeros((batch, self.num_slots), dtype=dtype)
        margin = ops.zeros((batch,), dtype=dtype)
        alive, reads = self._roots_state(batch, dtype)
        for n in range(self.iterations):
            if self.variant == "rrnn_gru":
                value, choice, merge_margin = self._skeleton_merge(
                    n, left, right, bias
                )
                choices.append(choice)
                margin = margin + merge_margin
            elif self.selection == "forced":
                i, j, k, o, a = self.tree[n]
                pre = _BINARY[self.operations[o]](
                    left[i][:, k], right[j][:, k]
                ) + bias[k]
                value = _UNARY[self.activations[a]](pre)
            else:
                value, choice, merge_margin, alive = self._search(
                    n, left, right, bias, alive, choices, used, reads
                )
                reads, used = self._track_children(n, choice, reads, used)
                choices.append(choice)
                margin = margin + merge_margin
            values.append(value)
            if n + 1 < self.iterations:
                new_left, new_right = self._project(value, node_kernel, batch)
                left.append(new_left)
                right.append(new_right)
        if self.selection == "forced" and self.variant != "rrnn_gru":
            trees = ops.broadcast_to(
                ops.convert_to_tensor(np.array(self.tree, dtype="int32")),
                (batch, self.iterations, 5),
            )
        else:
            trees = ops.stack(choices, axis=1)
        result = {"h": values[-1], "trees": trees, "margin": margin}
        if x is not None:
            result["nodes"] = self._node_values(x, h_tm1, values)
        return result

    def _roots_state(self, batch, dtype):
        """`(alive, reads)` at the start of a step: `alive[:, s]` = 1 while
        slot `s` is a root (pool "roots" of a search; else `None`);
        `reads[:, s]` = which of (x, h) slot `s`'s subtree holds (for
        `read_inputs`, which needs the single tree of pool "roots"; else
        `None`)."""
        alive = None
        if (
            self.pool == "roots"
            and self.selection != "forced"
            and self.variant == "rrnn"
        ):
            alive = ops.concatenate(
                [
                    ops.ones((batch, NUM_LEAVES), dtype=dtype),
                    ops.zeros((batch, self.iterations), dtype=dtype),
                ],
                axis=1,
            )
        reads = None
        if alive is not None and self.read_inputs:
            start = np.zeros((1, self.num_slots, 2), dtype="float32")
            start[0, 0, 0] = start[0, 1, 1] = 1.0
            reads = ops.zeros((batch, self.num_slots, 2), dtype=dtype) + (
                ops.cast(ops.convert_to_tensor(start), dtype)
            )
        return alive, reads

    def _track_children(self, n, choice, reads, used):
        """`(reads, used)` after merge `n` chose `choice`: the new node
        reads what its children read, and the children are used (for
        `unique_roots`)."""
        dtype = used.dtype
        if reads is not None:
            both = ops.one_hot(
                choice[:, 0], self.num_slots, dtype=dtype
            ) + ops.one_hot(choice[:, 1], self.num_slots, dtype=dtype)
            new_reads = ops.max(
                reads * ops.expand_dims(both, -1), axis=1
            )  # (batch, 2)
            slot = ops.one_hot(
                NUM_LEAVES + n, self.num_slots, dtype=dtype
            )[None, :, None]
            reads = reads + slot * ops.expand_dims(new_reads, 1)
        if self.unique_roots:
            used = ops.maximum(
                used,
                ops.one_hot(choice[:, 0], self.num_slots, dtype=dtype)
                + ops.one_hot(choice[:, 1], self.num_slots, dtype=dtype),
            )
        return reads, used

    def _node_values(self, x, h_tm1, values):
        """Every slot's value, `(batch, 3 + iterations, node_width)`:
        the leaves `x`, `h_tm1`, 0, then the generated `values`."""
        width = self.node_width
        batch, dtype = ops.shape(h_tm1)[0], h_tm1.dtype
        leaves = [
            pad_to_width(ops.cast(x, dtype), width),
            pad_to_width(h_tm1, width),
            ops.zeros((batch, width), dtype=dtype),
        ]
        return ops.stack(
            leaves + [pad_to_width(v, width) for v in values], axis=1
        )

    def _pick(self, scores, candidates):
        """Selects among `candidates` `(batch, C, units)` by `scores`
        `(batch, C)`: returns `(value, index, margin)`."""
        index = ops.argmax(scores, axis=-1)
        probs = ops.softmax(scores, axis=-1)
        if self.selection == "hard":
            # Forward: the one-hot of the argmax (p − p is exactly 0);
            # backward: the gradient of the softmax mixture.
            weights = ops.one_hot(
                index, ops.shape(scores)[1], dtype=probs.dtype
            )
            weights = weights + (probs - ops.stop_gradient(probs))
        else:
            weights = probs
        value = ops.einsum("bc,bcu->bu", weights, candidates)
        # The two best scores (a max, then a max without the argmax).
        first = ops.max(scores, axis=-1)
        without_first = ops.where(
            ops.one_hot(index, ops.shape(scores)[1], dtype="bool"),
            ops.min(scores, axis=-1, keepdims=True),
            scores,
        )
        second = ops.max(without_first, axis=-1)
        margin = ops.relu(self.margin - (first - second)) / self.margin
        return value, ops.cast(index, "int32"), margin

    def _normalized(self, candidates):
        """Candidates normalised over the batch, per candidate and feature
        (the authors' code: a BatchNorm without affine weights or running
        statistics)."""
        mean = ops.mean(candidates, axis=0, keepdims=True)
        variance = ops.var(candidates, axis=0, keepdims=True)
        return (candidates - mean) / ops.sqrt(variance + 1e-5)

    def _scored(self, n, candidates):
        """`(scores, candidates)` of merge `n`, with the candidate
        normalisation and the merge prior applied."""
        if self.candidate_norm == "value":
            candidates = self._normalized(candidates)
            scores = self.score(candidates)
        elif self.candidate_norm == "score":
            scores = self.score(self._normalized(candidates))
        else:
            scores = self.score(candidates)
        if self.merge_prior:
            start = self._prior_offsets[n]
            count = self.num_candidates(n)
            scores = scores + ops.cast(
                self.merge_prior_weight[start : start + count], scores.dtype
            )[None, :]
        return scores, candidates

    def _skeleton_merge(self, n, left, right, bias):
        """Merge `n` of the RRNN-GRU: the GRU tree's children, operation
        and activation, with the tuple chosen by score (or fixed for the
        gates `z`, `r`). Returns `(value, choice, margin)`."""
        i, j, k, o, a = self._skeleton[n]
        op = _BINARY[self.operations[o]]
        act = _UNARY[self.activations[a]]
        batch = ops.shape(left[0])[0]
        if n in GATE_MERGES:
            value = act(op(left[i][:, k], right[j][:, k]) + bias[k])
            tuple_index = ops.full((batch,), k, dtype="int32")
            margin = ops.zeros((batch,), dtype=value.dtype)
        else:
            # (batch, K, units): one candidate per tuple.
            candidates = act(op(left[i], right[j]) + bias[None])
            scores, candidates = self._scored(n, candidates)
            value, tuple_index, margin = self._pick(scores, candidates)
        fixed = [ops.full((batch,), v, dtype="int32") for v in (i, j)]
        rest = [ops.full((batch,), v, dtype="int32") for v in (o, a)]
        choice = ops.stack(fixed + [tuple_index] + rest, axis=-1)
        return value, choice, margin

    def merge_prior_offsets(self):
        """Start of each merge's block in the `merge_prior` weight, and the
        weight's size: `([o_0, ..., o_{N-1}], total)`."""
        offsets, total = [], 0
        for n in range(self.iterations):
            offsets.append(total)
            total += self.num_candidates(n)
        return offsets, total

    def _search(self, n, left, right, bias, alive, choices=(), used=None,
                reads=None):
        """Merge `n` by score: returns `(value, choice, margin, alive)`."""
        pre, candidates = self._candidates(n, left, right, bias)
        scores, candidates = self._scored(n, candidates)
        valid = None
        static = self._static_valid(n, reading=reads is not None)
        if static is not None:
            valid = ops.cast(ops.convert_to_tensor(static), scores.dtype)[
                None, :
            ]
        if self.unique_roots and choices:
            fresh = 1.0 - self._duplicates(n, choices, used, scores.dtype)
            valid = fresh if valid is None else valid * fresh
        if self.bounded:
            allowed = self._bounded(pre, scores.dtype)
            valid = allowed if valid is None else valid * allowed
        if alive is not None:
            pair_valid = self._single_tree(n, alive, reads)
            valid = pair_valid if valid is None else valid * pair_valid
        if valid is not None:
            floor = -3.0e4 if scores.dtype == "float16" else -1.0e9
            scores = ops.where(valid > 0, scores, floor)
        value, index, margin = self._pick(scores, candidates)
        choice = self._choice(n, index)
        if alive is not None:
            alive = self._after_merge(n, alive, choice)
        return value, choice, margin, alive

    def _candidates(self, n, left, right, bias):
        """Every candidate of merge `n`: the pre-activations `(batch,
        pairs, K, ops, units)` and the values `(batch, C, units)`."""
        K, units = self.tuples, self.units
        pair_left, pair_right, _ = self._pairs[n]
        batch = ops.shape(left[0])[0]
        a = ops.take(ops.stack(left, axis=1), pair_left, axis=1)
        b = ops.take(ops.stack(right, axis=1), pair_right, axis=1)
        # (batch, pairs, K, ops, units)
        pre = ops.stack(
            [_BINARY[name](a, b) for name in self.operations], axis=3
        ) + ops.reshape(bias, (1, 1, K, 1, units))
        # (batch, pairs, K, ops, acts, units) -> (batch, C, units)
        candidates = ops.stack(
            [_UNARY[name](pre) for name in self.activations], axis=4
        )
        count = len(pair_left) * self._per_pair()
        return pre, ops.reshape(candidates, (batch, count, units))

    def _per_pair(self):
        return self.tuples * len(self.operations) * len(self.activations)

    def _choice(self, n, index):
        """The merges `(batch, 5)` `(i, j, k, op, act)` of the candidates
        at `index`."""
        pair_left, pair_right, _ = self._pairs[n]
        n_ops, n_acts = len(self.operations), len(self.activations)
        act = index % n_acts
        rest = index // n_acts
        op = rest % n_ops
        rest = rest // n_ops
        k = rest % self.tuples
        pair = rest // self.tuples
        i = ops.take(ops.convert_to_tensor(pair_left), pair)
        j = ops.take(ops.convert_to_tensor(pair_right), pair)
        return ops.stack([i, j, k, op, act], axis=-1)

    def _after_merge(self, n, alive, choice):
        """`alive` after merge `n`: its generated children are no longer
        roots, the new node is one."""
        generated = np.zeros((self.num_slots,), dtype="float32")
        generated[NUM_LEAVES:] = 1.0
        generated = ops.cast(ops.convert_to_tensor(generated), alive.dtype)
        used = (
            ops.one_hot(choice[:, 0], self.num_slots, dtype=alive.dtype)
            + ops.one_hot(choice[:, 1], self.num_slots, dtype=alive.dtype)
        ) * generated
        new = np.zeros((self.num_slots,), dtype="float32")
        new[NUM_LEAVES + n] = 1.0
        return alive * (1.0 - used) + ops.cast(
            ops.convert_to_tensor(new), alive.dtype
        )
