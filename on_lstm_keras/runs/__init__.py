"""A language-model run on disk, from typed configs to trees: the public API
that the `on-lstm` command and the examples share.

Training, from the configs to the run directory:

    plan = runs.plan_training("runs/zh", model_config, training_config,
                              directions="both")
    with runs.output_lock(plan.output_dir):
        corpus = load_corpus("zh")
        results = runs.train(plan, corpus)

`plan_training` checks everything before anything is written; `train`
takes the directory's lock (re-entrant), trains each planned model (resumed
where it stopped, side by side where asked), scores it and returns each
run's `run.json`. `add_config_arguments` and `configs_from_args` give a
script the flags of the two configs.

Trees, from a trained run: `parse` gives the trees of raw sentences;
`evaluate_treebank` scores one reading of a run (or a baseline) against a
gold treebank; `evaluate_readings` scores every reading, layer and tree
rule at once; `choose_reading` picks the best on a dev half and records it
in the run (`run.json` `default_reading`), where `parse` and
`evaluate_treebank` find it. `EpochF1` logs that table after every epoch of
training.

Controls: `untrained_copy` writes a run's architecture untrained, as a run
that every function here reads (the trees an untrained network gives);
an LSTM run (`RUN/lstm`) gives the parser its forget gates;
`compare_controls` scores a run beside its LSTM, its untrained copy and
the trivial trees, on a treebank and its mirror, with paired bootstrap
intervals of the differences.

Records: `result_record` gives a run's figures with the command, commit,
machine and library versions they came from (`machine` and `cpu_info` say
which machine, `run_figures` and `readings_figures` gather a run's
figures); `write_record` and `read_record` store and load one (the
documentation's tables are built from such records).
"""

from on_lstm_keras.runs.comparison import compare_controls
from on_lstm_keras.runs.controls import untrained_copy
from on_lstm_keras.runs.controls import untrained_model
from on_lstm_keras.runs.defaults import DEFAULT_READING
from on_lstm_keras.runs.defaults import saved_reading
from on_lstm_keras.runs.epoch_f1 import EpochF1
from on_lstm_keras.runs.epoch_f1 import draw_f1_curve
from on_lstm_keras.runs.epoch_f1 import read_f1_curve
from on_lstm_keras.runs.evaluation import evaluate_readings
from on_lstm_keras.runs.evaluation import evaluate_treebank
from on_lstm_keras.runs.flags import add_config_arguments
from on_lstm_keras.runs.flags import configs_from_args
from on_lstm_keras.runs.layout import BACKWARD_DIR
from on_lstm_keras.runs.layout import LSTM_DIR
from on_lstm_keras.runs.layout import load_corpus_of_run
from on_lstm_keras.runs.layout import planned_runs
from on_lstm_keras.runs.layout import recorded_configs
from on_lstm_keras.runs.layout import recorded_directions
from on_lstm_keras.runs.parse import backward_of
from on_lstm_keras.runs.parse import mirror_reading
from on_lstm_keras.runs.parse import parse
from on_lstm_keras.runs.plan import PlannedRun
from on_lstm_keras.runs.plan import TrainingPlan
from on_lstm_keras.runs.plan import plan_training
from on_lstm_keras.runs.readings import best_reading
from on_lstm_keras.runs.readings import choose_reading
from on_lstm_keras.runs.readings import format_readings_table
from on_lstm_keras.runs.readings import record_reading
from on_lstm_keras.runs.records import cpu_info
from on_lstm_keras.runs.records import machine
from on_lstm_keras.runs.records import machine_label
from on_lstm_keras.runs.records import read_record
from on_lstm_keras.runs.records import readings_figures
from on_lstm_keras.runs.records import result_record
from on_lstm_keras.runs.records import run_figures
from on_lstm_keras.runs.records import write_record
from on_lstm_keras.runs.training import interrupted_message
from on_lstm_keras.runs.training import perplexity_summary
from on_lstm_keras.runs.training import resolve_side_by_side
from on_lstm_keras.runs.training import train
from on_lstm_keras.runs.training import train_run
from on_lstm_keras.utils.lock import DirectoryLocked
from on_lstm_keras.utils.lock import output_lock

__all__ = [
    "BACKWARD_DIR",
    "DEFAULT_READING",
    "DirectoryLocked",
    "EpochF1",
    "LSTM_DIR",
    "PlannedRun",
    "TrainingPlan",
    "add_config_arguments",
    "backward_of",
    "best_reading",
    "choose_reading",
    "compare_controls",
    "configs_from_args",
    "cpu_info",
    "draw_f1_curve",
    "evaluate_readings",
    "evaluate_treebank",
    "format_readings_table",
    "interrupted_message",
    "load_corpus_of_run",
    "machine",
    "machine_label",
    "mirror_reading",
    "output_lock",
    "parse",
    "perplexity_summary",
    "plan_training",
    "planned_runs",
    "read_f1_curve",
    "read_record",
    "readings_figures",
    "record_reading",
    "recorded_configs",
    "recorded_directions",
    "resolve_side_by_side",
    "result_record",
    "run_figures",
    "saved_reading",
    "train",
    "train_run",
    "untrained_copy",
    "untrained_model",
    "write_record",
]
