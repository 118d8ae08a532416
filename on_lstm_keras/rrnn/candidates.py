"""The candidates of a merge of the RRNN search: their numbering and which
may be picked.

A candidate of merge `n` is a pair of slots `i < j < 3 + n` (numbered by
`pair_index`), a tuple, an operation and an activation, numbered in that
order (`candidate_index`); `pair_tables` lists the pairs of every merge.
`AllowedCandidates` is mixed into `TreeSearch` (and so into `RRNNCell`):
each method returns a 0/1 mask over the candidates of one merge, from the
cell's settings (`break_symmetry`, `read_inputs`, `pool`, `unique_roots`,
`bounded`) and the step's state (the chosen merges, the roots left, what
each root reads). The search multiplies the masks and gives the excluded
candidates a score no candidate can lose to.
"""

import numpy as np
from keras import ops

from on_lstm_keras.rrnn.trees import NUM_LEAVES


def pair_index(i, j, slots):
    """Index of the pair `(i, j)`, `i < j < slots`, in `pair_tables`' order.

    Works on integers and on integer tensors alike.
    """
    return i * slots - (i * (i + 1)) // 2 + (j - i - 1)


def candidate_index(choice, slots, tuples, n_ops, n_acts):
    """Index of the merge `(i, j, k, op, act)` among the candidates of a
    merge with `slots` slots (candidates are ordered pair, tuple,
    operation, activation)."""
    i, j, k, op, act = choice
    return ((pair_index(i, j, slots) * tuples + k) * n_ops + op) * n_acts + act


def pair_tables(iterations):
    """Static `(i, j)` children of every candidate pair, per iteration."""
    tables = []
    for n in range(iterations):
        slots = NUM_LEAVES + n
        pairs = [(i, j) for i in range(slots) for j in range(i + 1, slots)]
        left = np.array([p[0] for p in pairs], dtype="int32")
        right = np.array([p[1] for p in pairs], dtype="int32")
        generated = (left >= NUM_LEAVES).astype("int32") + (
            right >= NUM_LEAVES
        ).astype("int32")
        tables.append((left, right, generated))
    return tables


class AllowedCandidates:
    """The candidate masks of `TreeSearch`."""

    def _missing_leaves(self, n, reads, alive, pair_left, pair_right):
        """`(batch, pairs)`: how many of `x`, `h` no root holds after
        merging each pair. Each one costs a merge (bringing a leaf into a
        root), besides the merges that join the roots."""
        slots = NUM_LEAVES + n
        pair_reads = ops.maximum(
            ops.take(reads, pair_left, axis=1),
            ops.take(reads, pair_right, axis=1),
        )  # (batch, pairs, 2)
        if slots > NUM_LEAVES:
            live = alive[:, NUM_LEAVES:slots, None]
            root_reads = ops.max(reads[:, NUM_LEAVES:slots] * live, axis=1)
            pair_reads = ops.maximum(pair_reads, root_reads[:, None, :])
        return 2.0 - ops.sum(pair_reads, axis=-1)

    def _static_valid(self, n, reading=False):
        """`(C,)` float mask of merge `n`'s candidates allowed by the
        symmetry break and, with `reading` (`read_inputs`), that are not a
        product with the zero leaf (slot 2), or `None` when every candidate
        is allowed. Such a product is the constant `act(b_k)`: it reads
        neither of its children, so it may not stand in for reading `x_t`
        or `h_{t-1}`."""
        n_ops, n_acts = len(self.operations), len(self.activations)
        pair_left, pair_right, _ = self._pairs[n]
        # (pairs, K, ops, acts), ordered as the candidates are.
        allowed = np.ones(
            (len(pair_left), self.tuples, n_ops, n_acts), dtype=bool
        )
        if self.break_symmetry and n < min(2, self.tuples):
            allowed &= (np.arange(self.tuples) == n)[None, :, None, None]
        if reading:
            zero = NUM_LEAVES - 1
            with_zero = (pair_left == zero) | (pair_right == zero)
            product = np.array(
                [name == "multiply" for name in self.operations], dtype=bool
            )
            allowed &= ~(
                with_zero[:, None, None, None] & product[None, None, :, None]
            )
        if allowed.all():
            return None
        return allowed.reshape(-1).astype("float32")

    def _duplicates(self, n, choices, used, dtype):
        """`(batch, C)`: 1 where a candidate of merge `n` would remake a
        generated node that has not been used as a child yet."""
        count = self.num_candidates(n)
        slots = NUM_LEAVES + n
        taken = None
        for m, choice in enumerate(choices):
            index = candidate_index(
                [choice[:, q] for q in range(5)],
                slots,
                self.tuples,
                len(self.operations),
                len(self.activations),
            )
            unused = 1.0 - used[:, NUM_LEAVES + m : NUM_LEAVES + m + 1]
            hit = ops.one_hot(index, count, dtype=dtype) * unused
            taken = hit if taken is None else ops.maximum(taken, hit)
        return taken

    def _bounded(self, pre, dtype):
        """`(batch, C)`: 1 where the candidate passes the reference code's
        guard, an unbounded activation (identity, one-minus, relu) only
        where |pre-activation| < 1 throughout."""
        batch, n_pairs = ops.shape(pre)[0], pre.shape[1]
        small = ops.cast(
            ops.max(ops.abs(pre), axis=-1) < 1.0, dtype
        )  # (batch, pairs, K, ops)
        squashing = np.array(
            [name in ("sigmoid", "tanh") for name in self.activations],
            dtype="float32",
        )
        allowed = ops.maximum(
            ops.expand_dims(small, -1),
            ops.cast(ops.convert_to_tensor(squashing), dtype),
        )  # (batch, pairs, K, ops, acts)
        return ops.reshape(allowed, (batch, n_pairs * self._per_pair()))

    def _single_tree(self, n, alive, reads):
        """`(batch, C)`: 1 where both children are roots and the merges
        left can still end in one tree (pool "roots")."""
        pair_left, pair_right, pair_generated = self._pairs[n]
        slots = NUM_LEAVES + n
        live = alive[:, :slots]
        pair_valid = ops.take(live, pair_left, axis=1) * ops.take(
            live, pair_right, axis=1
        )
        roots = ops.sum(alive[:, NUM_LEAVES:slots], axis=1)
        remaining = self.iterations - n
        # Roots the pair must join so that the merges left can end in
        # one tree (and, with `read_inputs`, still bring in the leaves
        # that no root holds).
        needed = ops.expand_dims(roots - remaining + 1.0, 1)
        if reads is not None:
            needed = needed + self._missing_leaves(
                n, reads, alive, pair_left, pair_right
            )
        enough = ops.cast(
            ops.convert_to_tensor(pair_generated.astype("float32"))[
                None, :
            ]
            >= needed,
            pair_valid.dtype,
        )
        return ops.repeat(pair_valid * enough, self._per_pair(), axis=1)
