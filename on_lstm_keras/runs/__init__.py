"""A language-model run on disk, from typed configs to scored models: the
public API that `on-lstm` and the examples share.

Training, from the configs to the run directory:

    plan = runs.plan_training("runs/zh", model_config, training_config,
                              directions="both")
    with runs.output_lock(plan.output_dir):
        corpus = load_corpus("zh")
        results = runs.train(plan, corpus)

`plan_training` checks everything before anything is written;
`train` takes the directory's lock (re-entrant), trains each planned model
(resumed where it stopped, side by side where asked), scores it and
returns each run's `run.json`. `add_config_arguments` and
`configs_from_args` give a script the flags of the two configs.
"""

from on_lstm_keras.runs.flags import add_config_arguments
from on_lstm_keras.runs.flags import configs_from_args
from on_lstm_keras.runs.layout import BACKWARD_DIR
from on_lstm_keras.runs.layout import LSTM_DIR
from on_lstm_keras.runs.layout import load_corpus_of_run
from on_lstm_keras.runs.layout import planned_runs
from on_lstm_keras.runs.layout import recorded_configs
from on_lstm_keras.runs.layout import recorded_directions
from on_lstm_keras.runs.plan import PlannedRun
from on_lstm_keras.runs.plan import TrainingPlan
from on_lstm_keras.runs.plan import plan_training
from on_lstm_keras.runs.training import interrupted_message
from on_lstm_keras.runs.training import perplexity_summary
from on_lstm_keras.runs.training import resolve_side_by_side
from on_lstm_keras.runs.training import train
from on_lstm_keras.runs.training import train_run
from on_lstm_keras.utils.lock import DirectoryLocked
from on_lstm_keras.utils.lock import output_lock

__all__ = [
    "BACKWARD_DIR",
    "DirectoryLocked",
    "LSTM_DIR",
    "PlannedRun",
    "TrainingPlan",
    "add_config_arguments",
    "configs_from_args",
    "interrupted_message",
    "load_corpus_of_run",
    "output_lock",
    "perplexity_summary",
    "plan_training",
    "planned_runs",
    "recorded_configs",
    "recorded_directions",
    "resolve_side_by_side",
    "train",
    "train_run",
]
