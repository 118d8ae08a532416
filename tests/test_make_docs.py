"""`tools/make_docs.py`: the committed docs are what the records give, and
its figures (best baseline, margins, spreads) are those computed by hand."""

import copy
import importlib.util
import json
import shutil
import subprocess
import sys

import numpy as np
import pytest

from tests.conftest import REPO_ROOT

SCRIPT = REPO_ROOT / "tools" / "make_docs.py"


@pytest.fixture(scope="module")
def make_docs():
    spec = importlib.util.spec_from_file_location("make_docs", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *args],
                          capture_output=True, text=True, cwd=REPO_ROOT)


def test_committed_docs_are_what_the_records_give():
    done = run("--check")
    assert done.returncode == 0, done.stderr


def _copy_of_the_repo(tmp_path):
    root = tmp_path / "repo"
    shutil.copytree(REPO_ROOT / "docs", root / "docs")
    shutil.copy(REPO_ROOT / "README.md", root / "README.md")
    return root


def test_check_fails_on_an_edited_page_and_a_changed_record(tmp_path, make_docs,
                                                           capsys):
    root = str(_copy_of_the_repo(tmp_path))
    assert make_docs.main(["--check", "--repo", root]) == 0
    page = tmp_path / "repo" / "docs" / "results.md"
    page.write_text(page.read_text() + "a figure typed by hand\n")
    assert make_docs.main(["--check", "--repo", root]) == 1
    assert "docs/results.md" in capsys.readouterr().err
    assert make_docs.main(["--repo", root]) == 0  # rewrites it
    assert make_docs.main(["--check", "--repo", root]) == 0
    # a figure of a record changed: the docs built from it are stale
    records = sorted((tmp_path / "repo" / "docs" / "results").rglob("*.json"))
    assert records, "docs/results/ holds no record"
    for path in records:
        record = json.loads(path.read_text())
        for row in record["figures"].get("rows", []):
            if row.get("mode") == "lengths":  # benchmark records by kind
                row["onlstm_lengths_ratio"] *= 2
            elif row.get("mode") == "parse":
                row["sentences_per_s"] *= 2
            else:
                row["onlstm_ms"] = row.get("onlstm_ms", 1.0) * 2
            for cell in row.get("cells", {}).values():  # controls records
                cell["sentence_f1"] += 1.0
        for model in record["figures"].get("models", {}).values():
            model["valid_perplexity"] = 1.0
        path.write_text(json.dumps(record))
        assert make_docs.main(["--check", "--repo", root]) == 1, path
        assert make_docs.main(["--repo", root]) == 0


def test_a_file_that_is_not_a_record_is_refused(tmp_path, make_docs):
    root = _copy_of_the_repo(tmp_path)
    (root / "docs" / "results").mkdir(parents=True, exist_ok=True)
    (root / "docs" / "results" / "stray.json").write_text('{"seed": 0}')
    with pytest.raises(ValueError, match="stray.json is not a result record"):
        make_docs.main(["--check", "--repo", str(root)])


def test_spread_is_the_sample_mean_and_sd(make_docs):
    values = [25.8, 28.0, 22.1, 27.4]
    mean, sd, low, high = make_docs.spread(values)
    assert mean == pytest.approx(np.mean(values))
    assert sd == pytest.approx(np.std(values, ddof=1))
    assert (low, high) == (22.1, 28.0)
    assert make_docs.spread([3.0])[1] is None
    assert make_docs.fmt_spread([1.0, 2.0, 3.0]) == "2.0 ± 1.0"
    assert make_docs.fmt_range([1.0, -2.0], 2) == "-2.00 to 1.00"


def _record(seed, chosen_dev, chosen_test, balanced_dev, right_test, ppl):
    cells = []
    for reading, layer, rule, dev, test in [
            ("forward", 1, "official", 10.0, 11.0),
            ("both", 3, "plain", chosen_dev, chosen_test)]:
        cells += [{"reading": reading, "layer": layer, "tree_rule": rule,
                   "half": h, "sentence_f1": f1, "corpus_f1": f1 + 20}
                  for h, f1 in (("dev", dev), ("test", test))]
    baselines = [
        {"baseline": "balanced", "half": "dev", "sentence_f1": balanced_dev, "corpus_f1": 1.0},
        {"baseline": "balanced", "half": "test", "sentence_f1": 5.0, "corpus_f1": 1.0},
        {"baseline": "right", "half": "dev", "sentence_f1": 4.0, "corpus_f1": 1.0},
        {"baseline": "right", "half": "test", "sentence_f1": right_test, "corpus_f1": 1.0}]
    model = {"valid_perplexity": ppl, "test_perplexity": ppl + 1, "epochs": [ppl * 2, ppl]}
    return {
        "format": "on_lstm_keras.result/1", "name": "lm_chinese",
        "command": "python examples/lm_chinese.py", "commit": "0" * 40,
        "dirty": False, "date": "2026-01-01T00:00:00Z",
        "machine": {"cpu": "Some CPU", "cpu_id": "cpu family 6, model 1, stepping 1",
                    "logical_cores": 2, "usable_cores": 2},
        "versions": {"python": "3.11.0", "keras": "3.15.1", "tensorflow": "2.21.0"},
        "backend": "tensorflow", "seed": seed, "seconds": 1200.0 + 60 * seed,
        "path": f"docs/results/lm_chinese/seed{seed}.json",
        "figures": {
            "models": {"onlstm": dict(model), "onlstm backward": dict(model)},
            "default_reading": {"reading": "both", "layer": 3, "tree_rule": "plain",
                                "metric": "sentence_f1", "sentence_f1": chosen_dev,
                                "chosen_on": "sinica dev half"},
            "readings": {"halves": {"dev": {"sentences": 10, "skipped": 0},
                                    "test": {"sentences": 10, "skipped": 0}},
                         "cells": cells, "baselines": baselines}}}


def test_chosen_reading_against_the_best_baseline_of_each_half(make_docs):
    chosen = make_docs.chosen_cells(_record(0, 25.0, 26.0, 21.0, 22.0, 100.0)["figures"])
    assert chosen["f1"] == {"dev": 25.0, "test": 26.0}
    # balanced wins the dev half (21 > 4), right the test half (22 > 5)
    assert chosen["best_baseline"] == {"dev": ("balanced", 21.0), "test": ("right", 22.0)}


def test_the_seed_table_and_its_spreads(make_docs):
    records = [_record(1, 30.0, 28.0, 21.0, 22.0, 120.0),
               _record(0, 25.0, 26.0, 21.0, 22.0, 100.0)]
    lines = make_docs.lm_section(records)
    table = [line for line in lines if line.startswith("| ")]
    # seeds in order; margins by hand: 25 - 21 = +4.0, 26 - 22 = +4.0
    assert table[1].startswith("| 0 | 100.0 / 101.0 |") and "+4.0 / +4.0" in table[1]
    assert table[2].startswith("| 1 | 120.0 / 121.0 |") and "+9.0 / +6.0" in table[2]
    # mean ± sd of 100 and 120: 110 ± 14.1; of the dev margins 4 and 9: 6.5 ± 3.5
    assert table[3].startswith("| mean ± sd | 110.0 ± 14.1 / 111.0 ± 14.1 |")
    assert table[3].endswith("| 6.5 ± 3.5 / 5.0 ± 1.4 |")
    assert table[4].startswith("| min–max | 100.0 to 120.0 / 101.0 to 121.0 |")
    # every record it rests on is named
    assert any("seed0.json" in line and "seed1.json" in line for line in lines)


def _ptb_record(seed, wsj10, everything, lstm_ppl=None):
    """A PTB record: `wsj10` and `everything` are `_record`'s figures
    arguments for the WSJ10-style and all-lengths tables."""
    record = _record(seed, *wsj10)
    record.update(name="ptb_parsing", command="python examples/ptb_parsing.py",
                  path=f"docs/results/ptb_parsing/seed{seed}.json")
    record["figures"]["readings"] = {
        "wsj10": record["figures"]["readings"],
        "all": _record(seed, *everything)["figures"]["readings"]}
    if lstm_ppl is not None:
        record["figures"]["models"]["lstm"] = {"valid_perplexity": lstm_ppl,
                                               "test_perplexity": lstm_ppl + 1}
    return record


def test_the_ptb_table_per_length_and_its_spreads(make_docs):
    records = [_ptb_record(1, (60.0, 61.0, 10.0, 58.0, 90.0), (40.0, 42.0, 10.0, 37.0, 90.0)),
               _ptb_record(0, (62.0, 59.0, 61.0, 57.0, 90.0), (35.0, 36.0, 30.0, 33.0, 90.0),
                           lstm_ppl=150.0)]
    lines = make_docs.ptb_section(records)
    table = [line for line in lines if line.startswith("| ")]
    # an LSTM column since one record has an LSTM; the other's is empty
    assert table[0].startswith("| seed | forward ppl | backward ppl | LSTM ppl | chosen reading |")
    assert table[1].startswith("| 0 | 90.0 / 91.0 | 90.0 / 91.0 | 150.0 / 151.0 | both models, layer 3, plain rule |")
    # seed 0, WSJ10-style: balanced 61 wins the dev half (62 - 61 = +1.0),
    # right 57 the test half (59 - 57 = +2.0); all lengths: +5.0 / +3.0
    assert "| 62.0 / 59.0 | 61.0 (balanced) / 57.0 (right) | +1.0 / +2.0 |" in table[1]
    assert table[1].endswith("| 35.0 / 36.0 | 30.0 (balanced) / 33.0 (right) | +5.0 / +3.0 |")
    # seed 1: balanced (10) beats right (4) on the dev half: 60 - 10 = +50.0;
    # right (58) the test half: 61 - 58 = +3.0
    assert "| 60.0 / 61.0 | 10.0 (balanced) / 58.0 (right) | +50.0 / +3.0 |" in table[2]
    assert table[2].startswith("| 1 | 90.0 / 91.0 | 90.0 / 91.0 | – / – |")
    # mean ± sd of the margins (+1, +50): 25.5 ± 34.6; (+2, +3): 2.5 ± 0.7
    assert "| 25.5 ± 34.6 / 2.5 ± 0.7 |" in table[3]
    assert table[4].startswith("| min–max |") and "1.0 to 50.0 / 2.0 to 3.0" in table[4]
    assert any("ptb_parsing/seed0.json" in line for line in lines)


def test_the_readme_block_names_its_cpu_and_figures(make_docs):
    records = [_record(0, 25.0, 26.0, 21.0, 22.0, 100.0)]
    block = make_docs.readme_block({"lm_chinese": records})
    assert "Some CPU (cpu family 6, model 1), 2 cores" in block
    assert "| Sinica dev half, sentence F1: chosen reading / best trivial tree (balanced) | 25.0 / 21.0 |" in block


def test_the_readme_block_gives_the_ptb_line(make_docs):
    records = [_ptb_record(0, (62.0, 59.0, 61.0, 57.0, 90.0), (35.0, 36.0, 30.0, 33.0, 90.0)),
               _ptb_record(1, (60.0, 61.0, 10.0, 58.0, 90.0), (40.0, 42.0, 10.0, 37.0, 90.0))]
    block = make_docs.readme_block({"ptb_parsing": records})
    # chosen: dev 62, 60 -> 61.0 ± 1.4; test 59, 61 -> 60.0 ± 1.4; best
    # trivial: dev 61, 10 -> 35.5 ± 36.1; test 57, 58 -> 57.5 ± 0.7
    assert ("PTB sample, WSJ10-style sentences, `python examples/ptb_parsing.py`, "
            "seeds 0, 1: sentence F1 of the chosen reading, dev / test half, "
            "61.0 ± 1.4 / 60.0 ± 1.4; best trivial tree (balanced, right) "
            "35.5 ± 36.1 / 57.5 ± 0.7") in block


def test_an_examples_time_is_its_fastest_run_with_default_settings(make_docs):
    slow = _record(0, 25.0, 26.0, 21.0, 22.0, 100.0)          # 1,200 s
    fast = _record(1, 25.0, 26.0, 21.0, 22.0, 100.0)          # 1,260 s
    fast["seconds"] = 1100.0
    fast["command"] = "python examples/lm_chinese.py --seed 1 --output runs/s1"
    short = copy.deepcopy(fast)
    short["seconds"] = 60.0
    short["command"] += " --epochs 1"  # less work: not a default run

    def row(records):
        block = make_docs.examples_block({"lm_chinese": records})
        return next(line for line in block.splitlines() if "`lm_chinese.py`" in line)

    assert row([slow, fast, short]).endswith(
        "| 18 min (Some CPU (cpu family 6, model 1), 2 cores; fastest of 2 records) |")
    assert row([short]).endswith("| no record yet |")
    assert make_docs.default_settings(
        {"command": "python examples/lm_chinese.py --quiet --record=x.json"}, "lm_chinese")
    assert not make_docs.default_settings(
        {"command": "python examples/ptb_parsing.py"}, "lm_chinese")


def test_benchmark_ratios_over_runs(make_docs):
    rows = [{"backend": "tensorflow", "config": "small", "mode": "train", "jit": False,
             "onlstm_ms": a, "keras_lstm_ms": b} for a, b in ((10.0, 10.0), (12.0, 10.0))]
    record = {**_record(0, 1, 1, 1, 1, 1), "name": "bench_layer",
              "figures": {"configs": {"small": [32, 35, 128, 256, 8]}, "rows": rows[:1]}}
    second = {**record, "path": "docs/results/bench_layer/b.json",
              "figures": {"configs": {"small": [32, 35, 128, 256, 8]}, "rows": rows[1:]}}
    page = make_docs.benchmarks_page([record, second])
    # ratios 1.0 and 1.2: mean 1.10, sd 0.14
    assert ("| tensorflow | small (32×35×128×256, 8) | train | no | 11.0 ± 1.4 | 10.0 ± 0.0 "
            "| 1.10 ± 0.14 (1.00 to 1.20) | 2 |") in page
    assert "## Some CPU (cpu family 6, model 1), 2 cores" in page
    # One library set: "Libraries", not a plural of it.
    assert "Libraries: " in page and "Librariess" not in page
    # A row in another dtype policy is a cell of its own, named so, and
    # stays out of the README's float32 ratios.
    bf16 = {**record, "path": "docs/results/bench_layer/c.json",
            "figures": {"configs": {"small": [32, 35, 128, 256, 8]},
                        "rows": [{**rows[0], "onlstm_ms": 8.0,
                                  "dtype_policy": "mixed_bfloat16"}]}}
    page = make_docs.benchmarks_page([record, second, bf16])
    assert ("| tensorflow | small (32×35×128×256, 8), mixed_bfloat16 | train | no "
            "| 8.0 | 10.0 | 0.80 | 1 |") in page
    block = make_docs.readme_block({"bench_layer": [record, second, bf16]})
    assert "tensorflow train 1.00 to 1.20" in block


def test_lengths_and_parse_rows_have_tables_of_their_own(make_docs):
    lengths = {"mode": "lengths", "backend": "jax", "config": "small",
               "lengths": list(range(18, 54, 2)),
               "onlstm_one_first_s": 2.0, "onlstm_many_first_s": 8.0,
               "onlstm_one_s": 0.3, "onlstm_many_s": 0.5,
               "onlstm_lengths_ratio": 4.0,
               "keras_lstm_one_first_s": 1.0, "keras_lstm_many_first_s": 6.0,
               "keras_lstm_one_s": 0.4, "keras_lstm_many_s": 0.4,
               "keras_lstm_lengths_ratio": 6.0}
    parse = {"mode": "parse", "backend": "tensorflow", "model": "random weights",
             "sentences": 4937, "sentences_per_s": 1000.4, "distances_share": 0.9,
             "first_pass_sentences_per_s": 600.6}
    record = {**_record(0, 1, 1, 1, 1, 1), "name": "bench_layer",
              "figures": {"mode": "lengths", "configs": {"small": [32, 35, 128, 256, 8]},
                          "rows": [lengths]}}
    other = {**record, "path": "docs/results/bench_layer/p.json",
             "figures": {"mode": "parse", "rows": [parse]}}
    page = make_docs.benchmarks_page([record, other])
    assert "| jax | small (32×35×128×256, 8) | 4.00 | 6.00 | 8.00 (0.50) | 6.00 (0.40) |" in page
    assert "| tensorflow | random weights | 4937 | 1000 | 601 | 90% |" in page
    assert "| backend | config | step |" not in page  # no step timings: no table
    # Nor do they enter the README's step-time ratios.
    assert "step time" not in make_docs.readme_block({"bench_layer": [record, other]})


def _logic_record(seed, onlstm, lstm):
    record = _record(seed, 1, 1, 1, 1, 1)
    record.update(name="logical_inference",
                  command=f"python examples/logical_inference.py --seed {seed}",
                  path=f"docs/results/logical_inference/seed{seed}.json")
    record["figures"] = {
        "onlstm": {str(n): a for n, a in enumerate(onlstm, 1)},
        "lstm": {str(n): a for n, a in enumerate(lstm, 1)}}
    return record


def test_logical_inference_by_operator_count_over_seeds(make_docs, tmp_path):
    # 8 operator counts: 1-6 seen, 7-8 unseen
    records = [_logic_record(0, [1.0] * 6 + [0.6, 0.5], [1.0] * 6 + [0.5, 0.4]),
               _logic_record(1, [0.9] * 6 + [0.8, 0.7], [1.0] * 6 + [0.6, 0.5])]
    lines = make_docs.logic_section(records)
    rows = [line for line in lines if line.startswith("| ")]
    assert rows[0] == "| model | 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8 | 1–6 | 7–8 |"
    # onlstm: count 1 is 100 and 90 (95.0 ± 7.1); unseen means 55 and 75
    assert rows[1].startswith("| onlstm | 95.0 ± 7.1 |")
    assert rows[1].endswith("| 95.0 ± 7.1 | 65.0 ± 14.1 |")
    assert rows[2].endswith("| 90.0 to 100.0 | 55.0 to 75.0 |")
    assert rows[3].startswith("| lstm | 100.0 ± 0.0 |") and rows[3].endswith("| 50.0 ± 7.1 |")
    picture = make_docs.logic_picture(records, str(tmp_path / "l.svg"))
    svg = picture[str(tmp_path / "l.svg")]
    assert svg.startswith("<?xml") and "onlstm" in svg and "Date" not in svg
    # the same records draw the same file
    assert make_docs.logic_picture(records, "again")["again"] == svg


def test_the_command_shown_leaves_out_where_the_record_went(make_docs):
    record = {"command": "python benchmarks/bench_layer.py --record /tmp/x.json --jit both"}
    assert make_docs.shown_command(record) == "python benchmarks/bench_layer.py --jit both"
    record["command"] = "on-lstm evaluate --record=a.json --baseline right"
    assert make_docs.shown_command(record) == "on-lstm evaluate --baseline right"


def _controls_record(seed, official_dev, plain_dev, lstm_interval):
    def cells(dev):
        return {"dev": {"sentence_f1": dev, "corpus_f1": 0.0},
                "test": {"sentence_f1": dev + 1, "corpus_f1": 0.0},
                "dev mirrored": {"sentence_f1": dev - 3, "corpus_f1": 0.0},
                "test mirrored": {"sentence_f1": dev - 2, "corpus_f1": 0.0}}

    rows = [{"system": "onlstm", "tree_rule": rule, "reading": "both",
             "layer": 3, "cells": cells(dev)}
            for rule, dev in (("official", official_dev), ("plain", plain_dev))]
    rows += [{"system": "lstm", "tree_rule": "plain", "reading": "forward",
              "layer": 1, "cells": cells(20.0)},
             {"system": "right", "tree_rule": None, "reading": None,
              "layer": None, "cells": cells(18.0)}]
    low, high = lstm_interval
    differences = [
        {"tree_rule": rule, "column": column, "minus": minus,
         "best_baseline": minus == "right", "difference": (low + high) / 2,
         "low": low, "high": high, "confidence": 0.95, "resamples": 100}
        for rule in ("official", "plain") for column in ("dev", "test")
        for minus in ("lstm", "right")]
    return {"format": "on_lstm_keras.result/1", "name": "controls",
            "command": "on-lstm controls --model runs/x --treebank sinica",
            "commit": "0" * 40, "dirty": False, "date": "2026-01-01T00:00:00Z",
            "machine": {"cpu": "Some CPU", "cpu_id": "cpu family 6, model 1, stepping 1",
                        "logical_cores": 2, "usable_cores": 2},
            "versions": {"keras": "3.15.1"}, "backend": "tensorflow",
            "seed": seed, "seconds": 10.0,
            "path": f"docs/results/controls/sinica-seed{seed}.json",
            "figures": {"treebank": "sinica", "max_length": None,
                        "run_seed": seed, "rows": rows,
                        "differences": differences,
                        "perplexity": {"onlstm": {"valid": 100.0, "test": 101.0},
                                       "lstm": {"valid": 110.0, "test": 111.0},
                                       "untrained": None}}}


def test_the_controls_table_and_its_claim(make_docs):
    # Seed 0: the plain rule wins the dev half (30 > 25); its LSTM interval
    # is above zero. Seed 1: the official rule wins; its interval holds 0.
    records = [_controls_record(1, 31.0, 24.0, (-1.0, 2.0)),
               _controls_record(0, 25.0, 30.0, (0.5, 4.0))]
    assert make_docs.default_row(records[1]["figures"])["tree_rule"] == "plain"
    claim = make_docs.claim_sentence(records)
    # Seed 0: every interval of its plain rule above zero; seed 1 not.
    assert "excludes zero, at 1 of 2 seeds (0, 1)." in claim
    assert ("Above the best trivial tree at 1/2 on the dev half and 1/2 on "
            "the test half; the LSTM's forget-gate trees at 1/2 on the dev "
            "half and 1/2 on the test half.") in claim
    # Both rules' test intervals: above zero at seed 0, holding it at seed 1.
    assert claim.endswith("by tree rule (each model's own reading): the "
                          "official rule above it at 1/2, below at 0/2; the "
                          "plain rule above it at 1/2, below at 0/2. There is "
                          "no untrained control at seeds 0, 1.")
    # so it does not speak of three controls
    assert "above every control it is compared with on both halves" in claim
    lines = make_docs.controls_section(records)
    table = [line for line in lines if line.startswith("| 0 | ON-LSTM |")]
    # plain row of seed 0: dev 30, test 31; mirrored 27 and 28, each 3
    # below its half
    assert ("| 0 | ON-LSTM | plain (both, layer 3) | 100.0 / 101.0 | 30.0 | "
            "31.0 | 27.0 (-3.0) | 28.0 (-3.0) |") in table
    assert "| 1 | official | dev | +0.5 [-1.0, +2.0] |  | +0.5 [-1.0, +2.0] (right) |" in lines
    block = make_docs.readme_block({"controls": records})
    assert "Controls on Sinica ([results](docs/results.md)): " + claim in block


def test_a_record_without_an_lstm_is_named_in_the_claim(make_docs):
    with_lstm = _controls_record(0, 25.0, 30.0, (0.5, 4.0))
    without = _controls_record(1, 25.0, 30.0, (0.5, 4.0))
    without["figures"]["differences"] = [
        d for d in without["figures"]["differences"] if d["minus"] != "lstm"]
    claim = make_docs.claim_sentence([with_lstm, without])
    # both above what they are compared with; the LSTM counted where it is
    assert "excludes zero, at 2 of 2 seeds (0, 1)." in claim
    assert "the LSTM's forget-gate trees at 1/1 on the dev half" in claim
    assert "There is no LSTM control at seed 1." in claim
    assert "all three controls" not in claim


def test_the_matmul_bound_share_where_records_have_it(make_docs):
    rows = [{"onlstm_ms": 200.0, "onlstm_bound_ms": 180.0},
            {"onlstm_ms": 100.0, "onlstm_bound_ms": 80.0},
            {"onlstm_ms": 100.0}]
    # 0.9 and 0.8: mean 0.85, sd 0.07; the row without a bound is left out
    assert make_docs.bound_share(rows) == "0.85 ± 0.07"
    assert make_docs.bound_share(rows[2:]) == "–"
