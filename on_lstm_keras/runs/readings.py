"""Choosing a run's reading on a treebank's dev half, recording it in
`run.json` (`default_reading`), and the table of every reading's F1."""

from on_lstm_keras.models.saving import read_run_info
from on_lstm_keras.models.saving import update_run_info
from on_lstm_keras.parsing.scores import reading_arg
from on_lstm_keras.parsing.trees import tree_rule_arg
from on_lstm_keras.runs.defaults import DEFAULT_READING
from on_lstm_keras.runs.evaluation import TREEBANKS
from on_lstm_keras.runs.evaluation import evaluate_readings
from on_lstm_keras.utils import validation as check

METRICS = ("sentence_f1", "corpus_f1")


def best_reading(cells, half="dev", metric="sentence_f1"):
    """The best reading of a table: the cell of `half` with the highest
    `metric`; on a tie, the first such cell in `cells`' order.

    Args:
        cells: Dicts with `reading`, `layer`, `tree_rule`, `half` and the
            metric (the `cells` of `evaluate_readings`).
        half: The half the choice is made on (`"dev"`); only its cells are
            looked at.
        metric: `"sentence_f1"` or `"corpus_f1"`.

    Returns:
        A dict: `reading`, `layer`, `tree_rule`, `metric`, and the
        metric's value (e.g. `sentence_f1`).

    Raises:
        ValueError: No cell of `half`.

    Example:

    >>> best_reading([
    ...     {"reading": "forward", "layer": 1, "tree_rule": "official",
    ...      "half": "dev", "sentence_f1": 20.0},
    ...     {"reading": "both", "layer": "mean", "tree_rule": "plain",
    ...      "half": "dev", "sentence_f1": 25.0},
    ...     {"reading": "both", "layer": 2, "tree_rule": "plain",
    ...      "half": "test", "sentence_f1": 30.0}])
    {'reading': 'both', 'layer': 'mean', 'tree_rule': 'plain', 'metric': 'sentence_f1', 'sentence_f1': 25.0}
    """
    check.choice("metric", metric, METRICS)
    candidates = [c for c in cells if c.get("half") == half]
    if not candidates:
        raise ValueError(
            f"Argument `cells` holds no cell of half={half!r} to choose on")
    best = candidates[0]
    for cell in candidates[1:]:
        if cell[metric] > best[metric]:
            best = cell
    return {"reading": best["reading"], "layer": best["layer"],
            "tree_rule": best["tree_rule"], "metric": metric,
            metric: best[metric]}


def record_reading(run_dir, choice, chosen_on):
    """Records a reading as the run's default (`run.json`
    `default_reading`), which `parse` and `evaluate_treebank` (and the
    `parse` and `evaluate` commands) use for every setting not given.

    Args:
        run_dir: The forward run's directory.
        choice: A dict with `reading`, `layer`, `tree_rule` (as
            `best_reading` returns), and the score it was chosen by.
        chosen_on: What the choice was made on, e.g. `"sinica dev half"`.

    Returns:
        `run.json` as a dict.
    """
    if not read_run_info(run_dir).get("model"):
        raise FileNotFoundError(f"{run_dir} holds no run (no run.json)")
    reading_arg(choice["reading"])
    tree_rule_arg(choice["tree_rule"])
    if choice["layer"] != "mean":
        check.positive_int("layer", choice["layer"])
    return update_run_info(run_dir, **{DEFAULT_READING: {
        **choice, "chosen_on": chosen_on}})


def choose_reading(run_dir, treebank="sinica", *, nltk_data=None,
                   backward_model=None, metric="sentence_f1",
                   max_length=None, seed=0, progress=False):
    """Scores every reading on the dev half of the Sinica or the PTB
    sample, records the best as the run's default (`record_reading`) and
    returns it with the full table.

    Args:
        run_dir: The forward run's directory.
        treebank: `"sinica"` or `"ptb"`: chosen on the sample's dev half
            (Sinica's split by sentence, the PTB's by file, see
            `load_sinica` and `load_ptb`); the test half is scored too,
            held out.
        nltk_data, backward_model, max_length, seed, progress: As for
            `evaluate_readings` (e.g. `max_length=10` for the WSJ10-style
            sentences; the PTB choice records it in `chosen_on`).
        metric: What the choice maximises: `"sentence_f1"` or
            `"corpus_f1"`.

    Returns:
        `(choice, table)`: the recorded default (`reading`, `layer`,
        `tree_rule`, `metric`, the metric's value, `chosen_on`) and
        `evaluate_readings`' result.
    """
    treebank = check.choice("treebank", treebank, TREEBANKS)
    table = evaluate_readings(run_dir, treebank, backward_model=backward_model,
                              halves=("dev", "test"), nltk_data=nltk_data,
                              max_length=max_length, seed=seed,
                              progress=progress)
    choice = best_reading(table["cells"], "dev", metric)
    chosen_on = f"{treebank} dev half"
    if treebank == "ptb" and max_length is not None:
        chosen_on += f", sentences of at most {max_length} words"
    record_reading(run_dir, choice, chosen_on)
    return {**choice, "chosen_on": chosen_on}, table


BASELINE_LABELS = {"left": "left-branching", "right": "right-branching",
                   "balanced": "balanced"}


def _f1_columns(by_half, halves):
    return " | ".join(
        f"{by_half[h]['sentence_f1']:.1f} | {by_half[h]['corpus_f1']:.1f}"
        for h in halves)


def format_readings_table(table, choice=None):
    """Markdown lines: every reading's sentence / corpus F1 on each half
    (a table of `evaluate_readings`), then the baselines; the chosen
    reading (`choice`, as `choose_reading` returns) marked with `*`."""
    halves = list(table["halves"])
    head = "| reading | layer | tree rule | " + " | ".join(
        f"{h}: sentence F1 | {h}: corpus F1" for h in halves) + " |"
    lines = [head, "|" + "---|" * (3 + 2 * len(halves))]
    keyed = {}
    for c in table["cells"]:
        keyed.setdefault((c["reading"], c["layer"], c["tree_rule"]),
                         {})[c["half"]] = c
    for (reading, layer, rule), by_half in keyed.items():
        chosen = choice is not None and (reading, layer, rule) == (
            choice["reading"], choice["layer"], choice["tree_rule"])
        mark = " *" if chosen else ""
        lines.append(f"| {reading}{mark} | {layer} | {rule} | "
                     + _f1_columns(by_half, halves) + " |")
    baselines = {}
    for b in table["baselines"]:
        baselines.setdefault(b["baseline"], {})[b["half"]] = b
    for name, by_half in baselines.items():
        label = BASELINE_LABELS.get(name, name)
        if name == "random":
            label = f"random (seed {table.get('seed', 0)})"
        lines.append(f"| {label} baseline | | | "
                     + _f1_columns(by_half, halves) + " |")
    return lines
