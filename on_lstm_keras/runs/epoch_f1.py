"""F1 against training time: a Keras callback that scores the trees of the
language model being trained after every epoch.

`EpochF1` copies the model into a stateless twin after each epoch and
scores it with `runs.evaluate_readings` on a treebank's halves:
the forward model's layers (each, and their mean) while it trains; the
backward model's, and both readings combined (with the trained forward
model), while the backward one trains; the same-size LSTM's layers (its
forget gates' `1 − mean(f_t)`, see `ONLSTM.forget_gate_distances`) while
it trains, so that its trees can be set beside the ON-LSTM's at the same
validation perplexity. Each row of the log it writes
(`f1_by_epoch.csv` in the run directory, fields `F1_CURVE_FIELDS`) holds
the run, the epoch, the training seconds of that run and of all the
runs so far (training and validation; the scoring itself is not
counted), the validation perplexity, the reading, layer and tree rule,
the half and its sentence and corpus F1; `f1_by_epoch.png` draws the dev half's sentence
F1 against training time (`plotting.plot_f1_curves`). A resumed training
drops the rows of the epochs it redoes, and its clock continues from the
last row kept.

Example (a tiny model, scored on the PTB sample when nltk has it):

>>> callback = EpochF1("runs/ptb", "ptb", max_length=10)
>>> callback.csv_path
'runs/ptb/f1_by_epoch.csv'
>>> EpochF1("runs/ptb", "wsj")
Traceback (most recent call last):
...
ValueError: Argument `treebank` must be one of 'ptb', 'sinica', received: treebank='wsj'
"""

import csv
import io
import os
import time

import keras

from on_lstm_keras.data.vocabulary import Vocabulary
from on_lstm_keras.models.saving import MODEL_FILE
from on_lstm_keras.models.saving import VOCAB_FILE
from on_lstm_keras.models.saving import LoadedRun
from on_lstm_keras.models.saving import load_run
from on_lstm_keras.models.saving import read_run_info
from on_lstm_keras.parsing.model_parser import model_direction
from on_lstm_keras.parsing.treebanks import CorpusNotFoundError
from on_lstm_keras.parsing.trees import tree_rule_arg
from on_lstm_keras.plotting import plot_f1_curves
from on_lstm_keras.runs.evaluation import TREEBANKS
from on_lstm_keras.runs.evaluation import evaluate_readings
from on_lstm_keras.runs.layout import BACKWARD_DIR
from on_lstm_keras.runs.layout import LSTM_DIR
from on_lstm_keras.utils import validation as check
from on_lstm_keras.utils.atomic import write_text
from on_lstm_keras.utils.extras import MissingExtraError

F1_CURVE_FIELDS = ("run", "epoch", "seconds", "total_seconds",
                   "val_perplexity", "half", "reading", "layer",
                   "tree_rule", "sentences", "sentence_f1", "corpus_f1")
F1_CURVE_CSV = "f1_by_epoch.csv"
F1_CURVE_PICTURE = "f1_by_epoch.png"


def read_f1_curve(path):
    """The rows of a per-epoch F1 log (`EpochF1`), numbers as numbers; `[]`
    when the file does not exist.

    Raises:
        ValueError: The file is not such a log (the message names it).
    """
    if not os.path.exists(path):
        return []
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    try:
        for row in rows:
            for key in ("epoch", "sentences"):
                row[key] = int(row[key])
            for key in ("seconds", "total_seconds", "val_perplexity",
                        "sentence_f1", "corpus_f1"):
                row[key] = float(row[key] or "nan")
            if row["layer"] != "mean":
                row["layer"] = int(row["layer"])
    except (KeyError, TypeError, ValueError) as e:
        raise ValueError(f"{path} is not a per-epoch F1 log "
                         f"({type(e).__name__}: {e})") from None
    return rows


def draw_f1_curve(rows, baselines, path, tree_rule="official", label=None):
    """Draws the dev half's sentence F1 of each reading and layer with `tree_rule`
    against training time, with the dev half's `baselines`, into `path`;
    returns whether there was anything to draw."""
    dev = [r for r in rows if r["half"] == "dev" and r["tree_rule"] == tree_rule]
    if not dev:
        return False
    plot_f1_curves(dev, path, baselines=baselines, title=(
        f"{label + ' ' if label else ''}dev half, tree rule {tree_rule}: "
        "sentence F1 after each epoch"))
    return True


class EpochF1(keras.callbacks.Callback):
    """Scores the trees of the language model being trained after every
    epoch, into `<output>/f1_by_epoch.csv` and `.png` (see the module's
    docstring).

    One callback serves every run of a directory: the forward model trained
    into `output`, the backward one trained into `output/backward`
    (the backward model is scored alone and combined with the forward
    model, so that must be trained first) and the LSTM trained into
    `output/lstm` (its rows are the run `"lstm"`). Nothing is scored when
    the treebank is missing (a message says so; training goes on).

    Args:
        output: The forward run's directory (the one holding `run.json`).
        treebank: `"ptb"` or `"sinica"` (see `evaluate_readings`).
        max_length: Score only sentences of at most this many words
            (e.g. 10: WSJ10-style); default all.
        halves: The halves of the treebank to score (default both; the
            picture draws the dev half).
        nltk_data: Where nltk's data is (default nltk's own path).
        tree_rule: The tree rule the picture draws (both are logged).
        label: What the picture's title calls the sentences scored, e.g.
            `"WSJ10-style"`.
        verbose: Print one line per epoch (the best reading on the dev half
            and the best baseline).

    Example:

    >>> callback = EpochF1("runs/lm_chinese", "sinica", halves=("dev",))
    >>> callback.picture_path
    'runs/lm_chinese/f1_by_epoch.png'
    """

    def __init__(self, output, treebank, *, max_length=None,
                 halves=("dev", "test"), nltk_data=None,
                 tree_rule="official", label=None, verbose=True):
        super().__init__()
        self.output = os.fspath(output)
        self.treebank = check.choice("treebank", treebank, TREEBANKS)
        if max_length is not None:
            max_length = check.positive_int("max_length", max_length)
        self.max_length = max_length
        halves = tuple(halves)
        if not halves or not set(halves) <= {"dev", "test"}:
            raise ValueError("Argument `halves` must name one or both halves "
                             f"('dev', 'test'), received: halves={halves!r}")
        self.halves = halves
        self.nltk_data = nltk_data
        self.tree_rule = tree_rule_arg(tree_rule)
        self.label = label
        self.verbose = bool(verbose)
        self.draw = True
        self.csv_path = os.path.join(self.output, F1_CURVE_CSV)
        self.picture_path = os.path.join(self.output, F1_CURVE_PICTURE)

    def on_train_begin(self, logs=None):
        self.active = True
        backward = model_direction(self.model) == "backward"
        main = read_run_info(self.output)["model"].get("direction", "forward")
        if getattr(self.model, "recurrent", None) == "lstm":
            # Read through its forget gates (`parsing.model_parser`), in
            # the main run's direction.
            if backward:
                self._say("F1 by epoch: no forward model to read with, "
                          "skipped")
                self.active = False
                return
            self.directory = os.path.join(self.output, LSTM_DIR)
            self.name = "lstm"
        else:
            self.directory = (os.path.join(self.output, BACKWARD_DIR)
                              if backward and main == "forward"
                              else self.output)
            self.name = "onlstm backward" if backward else "onlstm"
        self.vocab = Vocabulary.load(os.path.join(self.directory, VOCAB_FILE))
        self.info = read_run_info(self.directory)
        self.forward = None
        if backward:
            if main != "forward" or not os.path.exists(
                    os.path.join(self.output, MODEL_FILE)):
                self._say("F1 by epoch: no forward model to read with, "
                          "skipped")
                self.active = False
                return
            self.forward = load_run(self.output)
        self.export = None
        self.first = True

    def _say(self, text):
        if self.verbose:
            print(text)

    def on_epoch_begin(self, epoch, logs=None):
        if not self.active:
            return
        if self.first:
            # A resumed run redoes the epochs after `epoch`: drop their rows.
            self.first = False
            self.kept = [r for r in read_f1_curve(self.csv_path)
                         if r["run"] != self.name or r["epoch"] <= epoch]
            ours = [r["seconds"] for r in self.kept if r["run"] == self.name]
            self.seconds = max(ours, default=0.0)
            others = {}
            for r in self.kept:
                if r["run"] != self.name:
                    others[r["run"]] = max(others.get(r["run"], 0.0),
                                           r["seconds"])
            self.before = sum(others.values())
        self.clock = time.time()

    def _table(self, current):
        common = dict(halves=self.halves, max_length=self.max_length,
                      nltk_data=self.nltk_data)
        if self.forward is None:
            return evaluate_readings(current, self.treebank,
                                     readings=("forward",), **common)
        return evaluate_readings(self.forward, self.treebank,
                                 backward_model=current,
                                 readings=("backward", "both"), **common)

    def on_epoch_end(self, epoch, logs=None):
        if not self.active:
            return
        self.seconds += time.time() - self.clock
        if self.export is None:
            self.export = self.model.clone(stateful=False)
        else:
            self.export.copy_weights_from(self.model)
        current = LoadedRun(self.export, self.vocab, None, self.info)
        try:
            table = self._table(current)
        except CorpusNotFoundError as e:
            self._say(f"F1 by epoch: no {self.treebank} treebank, skipped "
                      f"({e})")
            self.active = False
            return
        common = {"run": self.name, "epoch": epoch + 1,
                  "seconds": round(self.seconds, 1),
                  "total_seconds": round(self.before + self.seconds, 1),
                  "val_perplexity": (logs or {}).get("val_perplexity")}
        for c in table["cells"]:
            self.kept.append({**common, **c, "sentences": table["halves"][
                c["half"]]["sentences"]})
        text = io.StringIO()
        writer = csv.DictWriter(text, F1_CURVE_FIELDS, extrasaction="ignore",
                                lineterminator="\n")
        writer.writeheader()
        writer.writerows(self.kept)
        write_text(self.csv_path, text.getvalue())
        first = self.halves[0]
        shown = [c for c in table["cells"] if c["half"] == first]
        best = max(shown, key=lambda c: c["sentence_f1"])
        baselines = [b for b in table["baselines"] if b["half"] == first]
        top = max(baselines, key=lambda b: b["sentence_f1"])
        self._say(
            f"{self.name} epoch {epoch + 1}: {self.label + ' ' if self.label else ''}"
            f"{first} sentence F1, best {best['sentence_f1']:.1f} "
            f"({best['reading']}, layer {best['layer']}, "
            f"{best['tree_rule']}), best baseline {top['baseline']} "
            f"{top['sentence_f1']:.1f}")
        if "dev" in self.halves and self.draw:
            try:
                draw_f1_curve(self.kept, [b for b in table["baselines"]
                                          if b["half"] == "dev"],
                              self.picture_path, self.tree_rule, self.label)
            except MissingExtraError as e:
                self._say(f"F1 by epoch: no picture ({e})")
                self.draw = False
