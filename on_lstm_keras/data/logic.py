"""The artificial language of logical inference (Bowman, Manning and Potts,
2015), the fourth experiment of the ON-LSTM paper (Shen et al., 2019, §5.4).

Formulas over six propositional variables `a`-`f`, built with `and`, `or`
and `not` and written fully bracketed, e.g. `( ( not a ) and ( b or c ) )`.
A pair of formulas stands in one of the seven relations of MacCartney's
natural logic; a model that reads both formulas predicts it. This module
holds the exact semantics, the seeded generator of training and per-length
test pairs, their encoding as token ids, and the per-length scoring of a
classifier.

A formula's meaning is its truth set: the truth assignments (of the 64 to
six variables) under which it holds, kept as 64 booleans; variable `k` is
true in assignment `j` when bit `k` of `j` is set. With `A` and `B` the
truth sets of a pair and `U` all 64 assignments:

| relation | symbol | sets |
|---|---|---|
| equivalence | `=` | `A = B` |
| forward entailment | `<` | `A ⊂ B` (strictly) |
| backward entailment | `>` | `A ⊃ B` (strictly) |
| negation | `^` | `A ∩ B = ∅` and `A ∪ B = U` |
| alternation | `\\|` | `A ∩ B = ∅`, `A ∪ B ≠ U` |
| cover | `v` | `A ∩ B ≠ ∅`, `A ∪ B = U`, neither contains the other |
| independence | `#` | everything else |

A contradiction (`A = ∅`) or a tautology (`A = U`) would stand in several
relations at once, so, as in Bowman et al., pairs are made only of formulas
whose truth set is neither; between two such sets the seven cases are
mutually exclusive and cover every pair.
"""

import numpy as np

__all__ = [
    "OPERATORS",
    "RELATIONS",
    "RELATION_NAMES",
    "TOKENS",
    "TOKEN_ID",
    "VARIABLES",
    "accuracy_by_operator_count",
    "count_operators",
    "encode_pairs",
    "formula_relation",
    "logic_datasets",
    "majority_accuracy",
    "random_formula",
    "random_pair",
    "relation",
    "truth_set",
]

VARIABLES = ("a", "b", "c", "d", "e", "f")
OPERATORS = ("and", "or", "not")
# Token ids: 0 is padding (masked), then brackets, operators and variables.
TOKENS = ("<pad>", "(", ")") + OPERATORS + VARIABLES
TOKEN_ID = {t: i for i, t in enumerate(TOKENS)}
# The seven relations of MacCartney's natural logic, in Bowman's notation.
RELATIONS = ("=", "<", ">", "^", "|", "v", "#")
RELATION_NAMES = {
    "=": "equivalence",
    "<": "forward entailment",
    ">": "backward entailment",
    "^": "negation",
    "|": "alternation",
    "v": "cover",
    "#": "independence",
}
_ASSIGNMENTS = 2 ** len(VARIABLES)


def _variable_set(index):
    """The 64 truth assignments under which variable number `index` holds."""
    return (np.arange(_ASSIGNMENTS) >> index) & 1 == 1


def truth_set(formula):
    """The truth set of a formula: the assignments under which it holds.

    Args:
        formula: Fully bracketed token sequence, e.g.
            `["(", "a", "and", "(", "not", "b", ")", ")"]`.

    Returns:
        A boolean NumPy array of shape `(64,)`.

    Raises:
        ValueError: If `formula` is not a well-formed formula.
    """
    tokens = list(formula)
    position = 0

    def parse():
        nonlocal position
        token = tokens[position]
        position += 1
        if token in VARIABLES:
            return _variable_set(VARIABLES.index(token))
        if token != "(":
            raise ValueError(f"unexpected token {token!r} in {formula!r}")
        if tokens[position] == "not":
            position += 1
            value = ~parse()
        else:
            left = parse()
            operator = tokens[position]
            position += 1
            right = parse()
            if operator == "and":
                value = left & right
            elif operator == "or":
                value = left | right
            else:
                raise ValueError(
                    f"unexpected operator {operator!r} in {formula!r}")
        if tokens[position] != ")":
            raise ValueError(f"missing ')' in {formula!r}")
        position += 1
        return value

    value = parse()
    if position != len(tokens):
        raise ValueError(f"trailing tokens in {formula!r}")
    return value


def relation(a, b):
    """The natural-logic relation between two truth sets.

    Args:
        a: Boolean array of shape `(64,)`, neither all false nor all true.
        b: Boolean array of shape `(64,)`, neither all false nor all true.

    Returns:
        One of the symbols in `RELATIONS`: `"=", "<", ">", "^", "|", "v",
        "#"`.

    Raises:
        ValueError: If `a` or `b` is a contradiction or a tautology.
    """
    a = np.asarray(a, dtype=bool)
    b = np.asarray(b, dtype=bool)
    for name, s in (("a", a), ("b", b)):
        if not s.any() or s.all():
            raise ValueError(
                f"Argument `{name}` is a contradiction or a tautology "
                "(empty or universal truth set); the seven relations are "
                "only defined here between non-degenerate sets")
    if np.array_equal(a, b):
        return "="
    meet = (a & b).any()
    exhaustive = (a | b).all()
    if not meet:
        return "^" if exhaustive else "|"
    if not (a & ~b).any():
        return "<"
    if not (b & ~a).any():
        return ">"
    return "v" if exhaustive else "#"


def formula_relation(left, right):
    """The relation between two formulas.

    Args:
        left: Token sequence of a formula.
        right: Token sequence of a formula.

    Returns:
        One of the symbols in `RELATIONS`.
    """
    return relation(truth_set(left), truth_set(right))


def count_operators(formula):
    """How many `and`, `or` and `not` a token sequence holds.

    Args:
        formula: Token sequence of a formula.

    Returns:
        The number of operators, an int.
    """
    return sum(t in OPERATORS for t in formula)


def random_formula(n_operators, rng, variables=VARIABLES):
    """A random fully bracketed formula with exactly `n_operators` operators.

    Drawn top-down: with no operator left the formula is a variable;
    otherwise the top operator is `not` (one third of the time) over a
    formula with `n_operators - 1` operators, or `and` / `or` over two
    formulas whose operator counts (uniformly split) add up to
    `n_operators - 1`.

    Args:
        n_operators: Number of `and`, `or` and `not` in the formula (>= 0).
        rng: A `numpy.random.Generator`.
        variables: The variables to draw leaves from.

    Returns:
        A list of tokens.
    """
    if n_operators == 0:
        return [variables[rng.integers(len(variables))]]
    operator = OPERATORS[rng.integers(3)]
    if operator == "not":
        return ["(", "not"] + random_formula(n_operators - 1, rng,
                                             variables) + [")"]
    n_left = int(rng.integers(n_operators))  # 0 .. n-1
    return (["("] + random_formula(n_left, rng, variables) + [operator]
            + random_formula(n_operators - 1 - n_left, rng, variables)
            + [")"])


def _random_proper_formula(n_operators, rng, variables):
    """`random_formula`, drawn again until it is neither always false nor
    always true; returns `(tokens, truth_set)`."""
    while True:
        tokens = random_formula(n_operators, rng, variables)
        value = truth_set(tokens)
        if value.any() and not value.all():
            return tokens, value


def random_pair(n_operators, rng):
    """A random pair whose longer formula has `n_operators` operators.

    Both formulas use the variables of one random subset of two to four of
    the six variables, so that they share variables and all seven relations
    occur (two formulas over unrelated variables are almost always
    independent). One formula gets `n_operators` operators, the other a
    count drawn uniformly from `0..n_operators`, and the two are swapped
    half of the time. Contradictions and tautologies are drawn again.

    Args:
        n_operators: Operator count of the longer formula (>= 0).
        rng: A `numpy.random.Generator`.

    Returns:
        `(left_tokens, right_tokens, relation_symbol)`.
    """
    k = int(rng.integers(2, 5))
    variables = tuple(sorted(rng.choice(VARIABLES, size=k, replace=False)))
    long_tokens, long_set = _random_proper_formula(n_operators, rng,
                                                   variables)
    n_other = int(rng.integers(n_operators + 1))
    other_tokens, other_set = _random_proper_formula(n_other, rng, variables)
    if rng.integers(2):
        return other_tokens, long_tokens, relation(other_set, long_set)
    return long_tokens, other_tokens, relation(long_set, other_set)


def _key(left, right):
    return " ".join(left) + " | " + " ".join(right)


def _test_buckets(rng, test_pairs, max_test_operators):
    """`test_pairs` distinct pairs for each operator count, and the keys of
    every test pair in both orders."""
    test, seen = {}, set()
    for n in range(1, max_test_operators + 1):
        bucket, keys = [], set()
        attempts = 0
        while len(bucket) < test_pairs:
            attempts += 1
            if attempts > 100 * test_pairs:
                raise ValueError(
                    f"cannot draw {test_pairs} distinct test pairs with {n} "
                    "operators; ask for fewer with `test_pairs`")
            left, right, rel = random_pair(n, rng)
            key = _key(left, right)
            if key in keys:
                continue
            keys.add(key)
            seen.add(key)
            seen.add(_key(right, left))
            bucket.append((left, right, rel))
        test[n] = bucket
    return test, seen


def _training_pairs(rng, train_pairs, max_train_operators, seen):
    """Distinct pairs outside `seen`, equally many of each operator count,
    except where short formulas run out of distinct pairs (with one
    operator there are only a few thousand): a count that stops yielding
    new pairs passes its remaining share on to the longer counts."""
    pairs, keys = [], set()
    for n in range(1, max_train_operators + 1):
        quota = -(-(train_pairs - len(pairs))
                  // (max_train_operators - n + 1))
        drawn, misses = 0, 0
        while drawn < quota:
            left, right, rel = random_pair(n, rng)
            key = _key(left, right)
            if key in seen or key in keys:
                misses += 1
                if misses > 20 * quota + 1000:
                    break
                continue
            keys.add(key)
            pairs.append((left, right, rel))
            drawn += 1
    if len(pairs) < train_pairs:
        raise ValueError(
            f"cannot draw {train_pairs} distinct training pairs with at most "
            f"{max_train_operators} operators (got {len(pairs)}); ask for "
            "fewer with `train_pairs`")
    return pairs


def logic_datasets(seed=0, train_pairs=50000, test_pairs=500,
                   max_train_operators=6, max_test_operators=12,
                   valid_fraction=0.1):
    """Draws the training, validation and per-length test pairs.

    The test pairs are drawn first, `test_pairs` for each operator count;
    then the training pairs, none equal to a test pair in either order, of
    which a shuffled `valid_fraction` is set aside for validation.
    Everything comes from one `numpy.random.default_rng(seed)`.

    Args:
        seed: Seed of the random generator; equal seeds give equal data.
        train_pairs: Training plus validation pairs (operator counts
            `1..max_train_operators`, equally many of each).
        test_pairs: Test pairs per operator count `1..max_test_operators`.
        max_train_operators: Largest operator count in training.
        max_test_operators: Largest operator count tested.
        valid_fraction: Share of the training pairs set aside, in `[0, 1)`.

    Returns:
        A dict with `"train"`, `"valid"` (lists of
        `(left, right, relation)`) and `"test"` (a dict from operator count
        to such a list).
    """
    for name, value in (("train_pairs", train_pairs),
                        ("test_pairs", test_pairs),
                        ("max_train_operators", max_train_operators),
                        ("max_test_operators", max_test_operators)):
        if int(value) != value or value < 1:
            raise ValueError(f"Argument `{name}` must be a positive integer, "
                             f"received: {name}={value!r}")
    if not 0.0 <= valid_fraction < 1.0:
        raise ValueError("Argument `valid_fraction` must be in [0, 1), "
                         f"received: valid_fraction={valid_fraction!r}")
    rng = np.random.default_rng(seed)
    test, seen = _test_buckets(rng, test_pairs, max_test_operators)
    pairs = _training_pairs(rng, train_pairs, max_train_operators, seen)
    order = rng.permutation(len(pairs))
    pairs = [pairs[i] for i in order]
    n_valid = int(round(valid_fraction * len(pairs)))
    return {"train": pairs[n_valid:], "valid": pairs[:n_valid],
            "test": test}


def encode_pairs(pairs, length=None):
    """Token ids of both formulas of each pair, and relation ids.

    Args:
        pairs: Sequence of `(left_tokens, right_tokens, relation)`.
        length: Padded length; the longest formula's when `None`.

    Returns:
        `(left_ids, right_ids, labels)`: int32 arrays of shapes
        `(len(pairs), length)` (right-padded with 0, the `"<pad>"` id) and
        `(len(pairs),)` (indices into `RELATIONS`).
    """
    if length is None:
        length = max(max(len(l), len(r)) for l, r, _ in pairs)
    left = np.zeros((len(pairs), length), dtype="int32")
    right = np.zeros((len(pairs), length), dtype="int32")
    for i, (l, r, _) in enumerate(pairs):
        left[i, : len(l)] = [TOKEN_ID[t] for t in l]
        right[i, : len(r)] = [TOKEN_ID[t] for t in r]
    labels = np.array([RELATIONS.index(rel) for _, _, rel in pairs],
                      dtype="int32")
    return left, right, labels


def accuracy_by_operator_count(model, test, batch_size=256):
    """A pair classifier's accuracy on each operator count's test pairs.

    All buckets are padded to one length, so that `model.predict` traces
    once.

    Args:
        model: A model whose `predict([left_ids, right_ids], batch_size=...,
            verbose=0)` gives one score per relation (the `RELATIONS`
            order), e.g. a `keras.Model` with two inputs.
        test: Dict from operator count to a list of
            `(left_tokens, right_tokens, relation)`, as
            `logic_datasets(...)["test"]`.
        batch_size: Batch size of `predict`.

    Returns:
        Dict from operator count to accuracy, a float in `[0, 1]`.
    """
    length = max(max(len(l), len(r)) for pairs in test.values()
                 for l, r, _ in pairs)
    accuracy = {}
    for n, pairs in test.items():
        left, right, labels = encode_pairs(pairs, length)
        predicted = np.asarray(model.predict(
            [left, right], batch_size=batch_size, verbose=0)).argmax(-1)
        accuracy[n] = float(np.mean(predicted == labels))
    return accuracy


def majority_accuracy(test):
    """The accuracy of always answering each bucket's most common relation:
    the floor a classifier must beat.

    Args:
        test: Dict from operator count to a list of
            `(left_tokens, right_tokens, relation)`.

    Returns:
        Dict from operator count to accuracy, a float in `[0, 1]`.
    """
    majority = {}
    for n, pairs in test.items():
        labels = [rel for _, _, rel in pairs]
        majority[n] = max(labels.count(r) for r in RELATIONS) / len(labels)
    return majority
