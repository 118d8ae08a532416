"""A run's recorded default reading (`run.json` `default_reading`), which
`parse` and `evaluate_treebank` use for each setting not given."""

from on_lstm_keras.models.saving import load_run
from on_lstm_keras.models.saving import read_run_info

DEFAULT_READING = "default_reading"
"""The `run.json` field holding the run's chosen reading (`record_reading`):
`reading`, `layer`, `tree_rule`, `metric`, the score they were chosen by,
and `chosen_on`."""


def loaded(run):
    """`run` as a `LoadedRun`: a directory is loaded, a `LoadedRun` is
    returned as it is."""
    return load_run(run) if isinstance(run, str) else run


def saved_reading(run):
    """The reading recorded in a run (`run.json` `default_reading`), or
    `None`.

    Args:
        run: A model directory or a `LoadedRun`.
    """
    info = read_run_info(run) if isinstance(run, str) else (run.info or {})
    return info.get(DEFAULT_READING)


def with_saved_reading(run, reading=None, layer=None, tree_rule=None):
    """`(reading, layer, tree_rule)` with each one not given (`None`) taken
    from the run's recorded default (`saved_reading`), if it has one;
    explicit values win. `tree_rule` falls back to `"official"`; `reading`
    and `layer` stay `None` (the model's own direction, the middle layer)
    when the run records no default."""
    saved = saved_reading(run) or {}
    if reading is None:
        reading = saved.get("reading")
    if layer is None:
        layer = saved.get("layer")
    if tree_rule is None:
        tree_rule = saved.get("tree_rule", "official")
    return reading, layer, tree_rule
