"""Result records (`runs.records`): the command line a record names, the
machine it names, and writing, reading and checking a record."""

import json
import os
import re
import shutil
import subprocess

import pytest

from on_lstm_keras import runs
from on_lstm_keras.runs import records


def test_command_line_of_the_console_script():
    # Wherever `on-lstm` was installed, the record says `on-lstm`.
    assert records.command_line(
        ["/opt/venv/bin/on-lstm", "evaluate", "--model", "runs/a b"]) == (
        "on-lstm evaluate --model 'runs/a b'")


def test_command_line_of_a_script_is_relative_to_the_working_folder(
        tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    script = str(tmp_path / "examples" / "x.py")
    assert records.command_line([script, "--seed", "0"]) == (
        "python examples/x.py --seed 0")
    assert records.command_line(["examples/x.py"]) == "python examples/x.py"


def test_command_line_of_python_c():
    # `python -c CODE ARGS` sets sys.argv to ["-c", *ARGS]: the code is
    # not known, the rest is kept.
    assert records.command_line(["-c", "--flag"]) == "python -c --flag"


def test_machine_label_names_the_cpu_without_its_stepping():
    machine = {"cpu": "Intel(R) Xeon(R) Processor",
               "cpu_id": "cpu family 6, model 207, stepping 2",
               "logical_cores": 8, "usable_cores": 2}
    assert runs.machine_label(machine) == (
        "Intel(R) Xeon(R) Processor (cpu family 6, model 207), 2 cores")
    # Without the affinity count, the logical cores; without an id, none.
    assert runs.machine_label({"cpu": "Apple M2", "logical_cores": 8}) == (
        "Apple M2, 8 cores")


def test_cpu_info_tells_two_machines_of_one_name_apart(tmp_path):
    # Two processors' blocks as Linux writes them; the first one counts.
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text(
        "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 26\n"
        "model\t\t: 2\nmodel name\t: AMD EPYC\nstepping\t: 1\n"
        "flags\t\t: fpu sse2 avx avx2 fma avx512f avx512bw avx512_bf16\n"
        "\nprocessor\t: 1\ncpu family\t: 23\nmodel\t\t: 49\n")
    assert runs.cpu_info(str(cpuinfo)) == {
        "cpu": "AMD EPYC", "cpu_id": "cpu family 26, model 2, stepping 1",
        "cpu_vector": "avx2 avx512f avx512_bf16"}
    older = tmp_path / "older"
    older.write_text("cpu family\t: 23\nmodel\t\t: 49\nmodel name\t: "
                     "AMD EPYC\nflags\t\t: fpu sse2 avx\n")
    assert runs.cpu_info(str(older)) == {
        "cpu": "AMD EPYC", "cpu_id": "cpu family 23, model 49",
        "cpu_vector": "none of avx2, avx512f"}
    # No /proc/cpuinfo (macOS, Windows): the platform's own name.
    assert runs.cpu_info(str(tmp_path / "absent"))["cpu"]


def test_a_record_is_written_and_read_back(tmp_path):
    record = runs.result_record("example", {"f1": 25.8, "rows": [1, 2]},
                                seed=3, seconds=12.345,
                                argv=["examples/x.py", "--seed", "3"])
    assert list(record) == list(records.FIELDS)
    assert record["format"] == records.RECORD_FORMAT
    assert (record["name"], record["seed"], record["seconds"]) == (
        "example", 3, 12.3)
    assert record["command"] == "python examples/x.py --seed 3"
    assert record["machine"]["logical_cores"] == os.cpu_count()
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", record["date"])
    path = tmp_path / "deeper" / "record.json"  # its folder is made
    assert runs.write_record(str(path), record) == str(path)
    assert runs.read_record(str(path)) == record


def test_a_nan_figure_is_written_as_null(tmp_path):
    record = runs.result_record("example", {"f1": float("nan"),
                                            "rows": [float("inf"), 1.5]})
    path = tmp_path / "record.json"
    runs.write_record(str(path), record)
    assert "NaN" not in path.read_text() and "Infinity" not in path.read_text()
    assert runs.read_record(str(path))["figures"] == {"f1": None,
                                                      "rows": [None, 1.5]}


def test_result_record_refuses_figures_that_are_not_a_dict():
    with pytest.raises(TypeError, match=r"`figures`.*list.*figures=\[25.8\]"):
        runs.result_record("example", [25.8])


def test_read_record_names_the_file_that_is_not_a_record(tmp_path):
    not_json = tmp_path / "notes.txt"
    not_json.write_text("F1 25.8\n")
    with pytest.raises(ValueError, match=f"{re.escape(str(not_json))} is "
                                         "not JSON"):
        runs.read_record(str(not_json))
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"name": "x", "figures": {}}))
    with pytest.raises(ValueError, match=f"{re.escape(str(other))} is not a "
                                         "result record"):
        runs.read_record(str(other))
    short = tmp_path / "short.json"
    short.write_text(json.dumps({"format": records.RECORD_FORMAT,
                                 "name": "x", "figures": {}}))
    with pytest.raises(ValueError, match=re.escape(str(short))
                       + r" lacks the record fields \['command', 'commit'"):
        runs.read_record(str(short))


def test_source_commit_is_the_checkouts_head():
    source = os.path.dirname(records.__file__)
    if shutil.which("git") is None or subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=source,
            capture_output=True).returncode:
        pytest.skip("the package's source is not a git checkout here")
    commit, dirty = records.source_commit()
    assert re.fullmatch(r"[0-9a-f]{40}", commit)
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=source,
                          capture_output=True, text=True, check=True)
    assert commit == head.stdout.strip()
    assert isinstance(dirty, bool)
