"""The benchmark script's own logic: flag checks, the environment it
prints, the CPU-time bookkeeping, the parse workload and the result record
it writes (its timings are not tested)."""

import json
import os
import time

import pytest

from on_lstm_keras import runs

from conftest import REPO_ROOT
from conftest import load_benchmark


@pytest.fixture(scope="module")
def bench():
    return load_benchmark("bench_layer")


@pytest.mark.parametrize("argv, flag", [
    (["--configs", "small,huge"], "huge"),
    (["--steps", "0"], "--steps"),
    (["--parse", "--sentences", "0"], "--sentences"),
    (["--parse", "--passes", "0"], "--passes"),
    (["--model", "runs/x"], "--model"),
    (["--parse", "--torch"], "--torch"),
    # Parse-only flags are refused without --parse, not ignored.
    (["--passes", "5"], "--passes 5"),
    (["--sentences", "300"], "--sentences 300"),
    (["--treebank", "sinica"], "--treebank sinica"),
    (["--parse", "--treebank", "ptb", "--sentences", "300"],
     "--sentences 300"),
    (["--parse", "--nltk-data", "/data/nltk"], "--nltk-data /data/nltk"),
    (["--lengths", "--backends", "tensorflow,jax"], "--backends"),
    (["--lengths", "--forward-only"], "--forward-only"),
    (["--lengths", "--parse"], "--parse"),
    (["--lengths", "--dtype-policy", "mixed_bfloat16"], "--dtype-policy"),
    (["--parse", "--dtype-policy", "mixed_bfloat16"], "--dtype-policy"),
])
def test_bad_flags_are_named(bench, capsys, argv, flag):
    with pytest.raises(SystemExit) as exit_info:
        bench.parse_args(argv)
    assert exit_info.value.code == 2
    assert flag in capsys.readouterr().err


def test_parse_flags_take_their_defaults_only_with_parse(bench):
    args = bench.parse_args(["--parse"])
    assert (args.sentences, args.passes) == (2000, 3)
    args = bench.parse_args(["--parse", "--treebank", "sinica", "--passes", "2"])
    assert (args.treebank, args.passes) == ("sinica", 2)


def test_dtype_policy_reaches_the_subprocesses_and_the_layers(
        bench, monkeypatch, capsys):
    import keras

    args = bench.parse_args(["--dtype-policy", "mixed_bfloat16"])
    argv = bench.child_argv(args)
    assert argv[argv.index("--dtype-policy") + 1] == "mixed_bfloat16"
    assert bench.parse_args(argv).dtype_policy == "mixed_bfloat16"
    assert bench.parse_args([]).dtype_policy == "float32"
    # The layers are built under the policy, and the row names it.
    monkeypatch.setitem(bench.CONFIGS, "tiny", (2, 3, 4, 4, 2))
    policies = []

    def step_fn(make, cfg, jit, forward_only=False):
        policies.append(make().dtype_policy.name)
        return lambda: None

    monkeypatch.setattr(bench, "keras_step_fn", step_fn)
    monkeypatch.setattr(bench, "matmul_bound",
                        lambda cfg, mode, rates: ({}, {(2048,) * 3: 1.0}))
    previous = keras.config.dtype_policy()
    try:
        rows = bench.run_here(bench.parse_args(
            ["--configs", "tiny", "--jit", "false", "--steps", "1",
             "--warmup", "0", "--dtype-policy", "mixed_bfloat16", "--json"]))
    finally:
        keras.config.set_dtype_policy(previous)
    assert policies == ["mixed_bfloat16"] * 2
    assert [r["dtype_policy"] for r in rows] == ["mixed_bfloat16"]
    capsys.readouterr()


def test_forward_only_reaches_the_backend_subprocesses(bench):
    args = bench.parse_args(["--forward-only", "--configs", "small"])
    assert "--forward-only" in bench.child_argv(args)
    assert "--forward-only" not in bench.child_argv(
        bench.parse_args(["--configs", "small"]))


def test_environment_names_the_machine(bench):
    from on_lstm_keras import runs

    env = bench.environment()
    assert env["logical_cores"] == os.cpu_count()
    assert isinstance(env["cpu"], str) and env["cpu"]
    # The CPU as the package's records name it (runs.cpu_info).
    cpu = runs.cpu_info()
    assert {k: env[k] for k in cpu} == cpu
    if hasattr(os, "sched_getaffinity"):
        assert env["usable_cores"] == len(os.sched_getaffinity(0))


def test_paper_config_is_the_papers_ptb_layer(bench):
    # Shen et al. 2019 (AWD-LSTM settings): batch 20, BPTT 70, 400-wide
    # embeddings into 1150 units, chunk size 10.
    assert bench.CONFIGS["paper"] == (20, 70, 400, 1150, 10)
    assert bench.parse_args(["--configs", "paper"]).configs == "paper"


def test_backend_environment_names_the_accelerators(bench):
    import keras

    env = bench.backend_environment()
    assert env["backend"] == keras.backend.backend()
    if env["backend"] == "tensorflow":
        import tensorflow as tf

        assert len(env["tf_gpus"]) == len(
            tf.config.list_physical_devices("GPU"))
    elif env["backend"] == "jax":
        import jax

        assert len(env["jax_devices"]) == len(jax.devices())


def test_cpu_time_tells_work_from_waiting(bench):
    def work():  # at least 20 ms of this process's CPU time
        start = time.process_time()
        while time.process_time() - start < 0.02:
            pass

    def wait():  # 20 ms of wall time, next to no CPU time
        time.sleep(0.02)

    cpu = {}
    wall = bench.time_interleaved({"work": work, "wait": wait}, n=3,
                                  warmup=0, cpu_times=cpu)
    assert sorted(cpu) == sorted(wall) == ["wait", "work"]
    assert cpu["work"] >= 0.02 and wall["work"] >= 0.02
    assert wall["wait"] >= 0.02 and cpu["wait"] < 0.01


def test_random_parse_workload(bench):
    from on_lstm_keras.data.vocabulary import SPECIALS
    from on_lstm_keras.data.vocabulary import Vocabulary

    vocab = Vocabulary.build([["a", "b", "c", "d"]])
    args = bench.parse_args(["--parse", "--sentences", "50"])
    sentences = bench.parse_workload(args, vocab)
    assert len(sentences) == 50
    low, high = bench.PARSE_LENGTHS
    assert all(low <= len(s) <= high for s in sentences)
    assert {w for s in sentences for w in s} <= {"a", "b", "c", "d"}
    assert not {w for s in sentences for w in s} & set(SPECIALS)
    # Seeded: the same workload every run.
    assert sentences == bench.parse_workload(args, vocab)


def test_random_run_has_the_small_preset_size(bench):
    from on_lstm_keras.config import PRESETS

    model_config, training_config = PRESETS["small"]
    model, vocab = bench.random_run()
    assert len(vocab) == training_config.max_vocab
    assert len(model.rnn_layers) == model_config.num_layers
    assert model.model_config == model_config


def test_breakdown_needs_forward_only_and_reaches_the_subprocesses(
        bench, capsys):
    with pytest.raises(SystemExit) as exit_info:
        bench.parse_args(["--breakdown"])
    assert exit_info.value.code == 2
    assert "--breakdown" in capsys.readouterr().err
    args = bench.parse_args(["--forward-only", "--breakdown"])
    assert "--breakdown" in bench.child_argv(args)


@pytest.mark.backend
@pytest.mark.parametrize("name", ["loop_lstm_cell", "loop_lstm_cell_wide"])
def test_breakdown_stand_ins_are_keras_lstm(bench, name):
    """The stand-ins run ONLSTM's loop with an LSTM's cell: with the first
    `4 * units` columns of ONLSTM's weights in `keras.layers.LSTM` (the
    reference), both give its outputs; the layer is ONLSTM again after."""
    import keras
    import numpy as np

    from on_lstm_keras import ONLSTM
    from on_lstm_keras.layers.fused import fused_path_unsupported

    units = 8
    rng = np.random.default_rng(0)
    x = rng.normal(size=(3, 6, 5)).astype("float32")
    layer = ONLSTM(units, 2, return_sequences=True)
    layer.build(x.shape)
    if fused_path_unsupported(layer.cell):
        pytest.skip("no fused recurrence on this backend")
    for w in layer.weights:
        w.assign(rng.normal(scale=0.5, size=w.shape).astype("float32"))
    lstm = keras.layers.LSTM(units, return_sequences=True)
    lstm.build(x.shape)
    n = 4 * units
    cell = layer.cell
    lstm.set_weights([
        np.asarray(cell.kernel)[:, :n],
        np.asarray(cell.recurrent_kernel)[:, :n],
        np.asarray(cell.bias)[:n],
    ])
    with bench.fused_recurrence_class(bench.breakdown_recurrences()[name]):
        stand_in = np.asarray(layer(x))
    np.testing.assert_allclose(stand_in, np.asarray(lstm(x)),
                               rtol=1e-5, atol=1e-5)
    onlstm = np.asarray(layer(x))
    assert np.abs(onlstm - stand_in).max() > 1e-2


def test_parse_mode_reports_medians_of_its_passes(bench, monkeypatch,
                                                   capsys, tmp_path):
    import statistics

    from on_lstm_keras.config import ModelConfig
    from on_lstm_keras.data.vocabulary import Vocabulary
    from on_lstm_keras.models import ONLSTMLanguageModel

    def tiny_run():
        vocab = Vocabulary.build([["a", "b", "c", "d"]])
        config = ModelConfig(embedding_size=4, hidden_size=4, num_layers=2,
                             chunk_size=2, tie_weights=False)
        return ONLSTMLanguageModel.from_model_config(config, len(vocab)), vocab

    monkeypatch.setattr(bench, "random_run", tiny_run)
    monkeypatch.chdir(REPO_ROOT)
    path = tmp_path / "parse.json"
    bench.main(["--parse", "--sentences", "12", "--passes", "3", "--json",
                "--record", str(path)])
    row = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    each = row["seconds_each_pass"]
    assert row["passes"] == 3 and len(each) == 3
    assert row["seconds"] == statistics.median(each)
    assert row["sentences"] == 12
    assert row["sentences_per_s"] == pytest.approx(12 / row["seconds"])
    assert 0 < row["distances_seconds"] <= max(each) * 10
    # The first pass, which compiled the reader, is timed on its own.
    assert row["first_pass_seconds"] > 0
    assert row["first_pass_sentences_per_s"] == pytest.approx(
        12 / row["first_pass_seconds"])
    # The record keeps the row printed, and the backend's versions.
    record = runs.read_record(path)
    assert record["name"] == "bench_layer"
    assert record["command"].startswith(
        "python benchmarks/bench_layer.py --parse --sentences 12")
    assert record["figures"] == {
        "mode": "parse", "rows": [row],
        "environments": {row["backend"]: bench.backend_environment()}}


def _xspace(events_by_line):
    """A TensorFlow profiler trace with one host plane whose lines hold
    `(event name, microseconds)`."""
    from tensorflow.tsl.profiler.protobuf import xplane_pb2

    space = xplane_pb2.XSpace()
    plane = space.planes.add(name="/host:CPU")
    ids = {}
    for n, events in enumerate(events_by_line):
        line = plane.lines.add(name="thread %d" % n)
        for name, micros in events:
            if name not in ids:
                ids[name] = len(ids) + 1
                plane.event_metadata[ids[name]].name = name
                plane.event_metadata[ids[name]].id = ids[name]
            line.events.add(metadata_id=ids[name],
                            duration_ps=int(micros * 1e6))
    return space


def test_profile_counts_kernels_by_op_type_and_not_their_enclosing_events(
        bench):
    space = _xspace([
        [("ExecutorState::Process", 10_000),
         ("model/onlstm/while/MatMul:_MklMatMul", 2_000),
         ("model/onlstm/while/mul_3:Mul", 250),
         ("EagerLocalExecute: __inference_one_step_on_data_574", 20_000),
         ("KernelAndDeviceFunc::Run", 20_000)],
        [("model/onlstm/while/MatMul_1:_MklMatMul", 3_000),
         ("ParallelFor", 1_500),
         ("model/onlstm/while/mul_4:Mul", 500)],
    ])
    assert bench.op_times(space) == {
        "_MklMatMul": (5.0, 2), "Mul": (0.75, 2), "ParallelFor": (1.5, 1)}
    compiled = _xspace([[("one_step_on_data:__inference_one_step_on_data_4352",
                          7_000)]])
    assert bench.op_times(compiled) == {"one_step_on_data (XLA)": (7.0, 1)}


def test_profile_table_lists_the_largest_op_types_per_step(bench):
    per_layer = {
        "ONLSTM": {"MatMul": (40.0, 20), "Mul": (10.0, 100), "Sub": (2.0, 8)},
        "keras LSTM": {"MatMul": (44.0, 20), "AddN": (12.0, 30)},
    }
    lines = bench.profile_table(per_layer, steps=2, top=2)
    assert lines[0] == ("| op type | ONLSTM ms | ONLSTM calls | keras LSTM ms "
                        "| keras LSTM calls |")
    # MatMul (84 in all), then AddN (12); Mul (10) and Sub (2) summed.
    assert lines[2:] == [
        "| MatMul | 20.0 | 10 | 22.0 | 10 |",
        "| AddN | 0.0 | 0 | 6.0 | 15 |",
        "| 2 other op types | 6.0 | 54 | 0.0 | 0 |",
        "| **all kernels** | 26.0 | 64 | 28.0 | 25 |",
    ]


@pytest.mark.parametrize("argv, flag", [
    (["--top", "5"], "--top 5"),
    (["--profile", "--top", "0"], "--top"),
    (["--profile", "--backends", "tensorflow"], "--backends"),
    (["--profile", "--parse"], "--parse"),
])
def test_profile_flags_are_checked(bench, capsys, argv, flag):
    with pytest.raises(SystemExit) as exit_info:
        bench.parse_args(argv)
    assert exit_info.value.code == 2
    assert flag in capsys.readouterr().err


def test_profile_runs_both_layers_on_tensorflow(bench, monkeypatch, capsys):
    import keras

    if keras.backend.backend() != "tensorflow":
        with pytest.raises(SystemExit, match="KERAS_BACKEND=tensorflow"):
            bench.run_profile(bench.parse_args(["--profile"]))
        return
    monkeypatch.setitem(bench.CONFIGS, "tiny", (2, 4, 3, 8, 2))
    profiled = bench.run_profile(bench.parse_args(
        ["--profile", "--configs", "tiny", "--jit", "false", "--steps", "2",
         "--warmup", "1"]))
    out = capsys.readouterr().out
    assert "tiny, training step, XLA no" in out
    rows = {}
    for line in out.splitlines():
        if line.startswith("| ") and not line.startswith("| op type"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            rows[cells[0]] = [float(c) for c in cells[1:]]
    # Both layers ran kernels, among them the step's matmuls (the times
    # of so small a step may print as 0.0 ms; the counts may not be 0).
    matmul_calls = [(cells[1], cells[3])
                    for op, cells in rows.items() if "MatMul" in op]
    assert matmul_calls, out
    assert all(sum(column) > 0 for column in zip(*matmul_calls)), out
    totals = rows["**all kernels**"]
    assert totals[1] > 0 and totals[3] > 0, out
    # What a record keeps: the op times the table was built from.
    assert [(r["config"], r["jit"], r["mode"], r["steps"])
            for r in profiled] == [("tiny", False, "train", 2)]
    times = profiled[0]["op_times"]
    assert list(times) == ["ONLSTM", "keras LSTM"]
    for k, layer in enumerate(times):  # per step, as printed
        ms = sum(m for m, _ in times[layer].values()) / 2
        calls = sum(c for _, c in times[layer].values()) / 2
        assert totals[2 * k:2 * k + 2] == [float("%.1f" % ms),
                                           float("%.0f" % calls)]


def _table_rows(out):
    """`{(backend, config, step, XLA): (ONLSTM ms, keras LSTM ms)}` of the
    Markdown table printed at the end."""
    found = {}
    for line in out.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| ") and cells[0] != "backend":
            found[tuple(cells[:4])] = (float(cells[4]), float(cells[5]))
    return found


def test_timing_record_keeps_the_rows_of_the_table(bench, monkeypatch,
                                                    capsys, tmp_path):
    import keras

    monkeypatch.setitem(bench.CONFIGS, "tiny", (2, 4, 3, 8, 2))
    monkeypatch.setattr(bench, "LARGE_MATMUL", 32)
    monkeypatch.chdir(REPO_ROOT)
    path = tmp_path / "record.json"
    bench.main(["--configs", "tiny", "--steps", "2", "--warmup", "1",
                "--jit", "false", "--record", str(path)])
    table = _table_rows(capsys.readouterr().out)
    record = runs.read_record(path)
    assert record["name"] == "bench_layer"
    assert record["command"].startswith(
        "python benchmarks/bench_layer.py --configs tiny")
    figures = record["figures"]
    backend = keras.backend.backend()
    assert sorted(figures) == ["configs", "environments", "mode", "rows"]
    assert figures["mode"] == "train"
    assert figures["configs"] == {"tiny": [2, 4, 3, 8, 2]}
    assert figures["environments"] == {backend: bench.backend_environment()}
    rows = figures["rows"]
    assert [(r["backend"], r["config"], r["mode"]) for r in rows] == [
        (backend, "tiny", "train")]
    assert all(r["onlstm_cpu_ms"] > 0 and r["keras_lstm_cpu_ms"] > 0
               for r in rows)
    # The bound: tiny's matmuls (gates 32 + 2 * 4 for ONLSTM, inner 3 + 8)
    # at the rates measured beside the steps.
    [row] = rows
    assert set(row["step_matmul_gflops"]) == {
        "2x11x40", "2x40x11", "11x8x40", "2x11x32", "2x32x11", "11x8x32"}
    assert row["large_matmul_gflops"] > 0
    rate = row["step_matmul_gflops"]
    assert row["onlstm_bound_ms"] == pytest.approx(1000 * (
        4 * 2 * 2 * 11 * 40 / 1e9 / rate["2x11x40"]
        + 4 * 2 * 2 * 40 * 11 / 1e9 / rate["2x40x11"]
        + 2 * 11 * 8 * 40 / 1e9 / rate["11x8x40"]))
    assert row["onlstm_matmul_gflop"] == pytest.approx(3 * 4 * 2 * 2 * 11 * 40 / 1e9)
    assert table == {
        (r["backend"], r["config"], r["mode"], "yes" if r["jit"] else "no"): (
            round(r["onlstm_ms"], 1), round(r["keras_lstm_ms"], 1))
        for r in rows}


def test_backends_record_keeps_each_childs_environment(bench, monkeypatch,
                                                        capsys, tmp_path):
    """With `--backends` (and `--torch`) the rows come from subprocesses,
    here stand-ins: the record keeps each one's rows and environment, and
    torch's lowest median per config."""
    def child(argv, env):
        if "--torch-only" in argv:
            yield {"config": "small", "torch_lstm_ms": 9.0 + len(calls),
                   "torch_device": "cpu"}
            calls.append(argv)
            return
        backend = env["KERAS_BACKEND"]
        yield {"environment": {"backend": backend, "keras": "3.x"}}
        yield {"backend": backend, "config": "small", "jit": True,
               "mode": "forward", "onlstm_ms": 20.0, "keras_lstm_ms": 10.0,
               "onlstm_cpu_ms": 30.0, "keras_lstm_cpu_ms": 15.0}

    calls = []
    monkeypatch.setattr(bench, "run_child", child)
    monkeypatch.setattr(bench, "check_torch", lambda: None)
    path = tmp_path / "record.json"
    bench.main(["--backends", "tensorflow,jax", "--torch", "--configs",
                "small", "--forward-only", "--record", str(path)])
    out = capsys.readouterr().out
    figures = runs.read_record(path)["figures"]
    assert figures["mode"] == "forward"
    assert figures["configs"] == {"small": list(bench.CONFIGS["small"])}
    assert figures["environments"] == {
        "tensorflow": {"backend": "tensorflow", "keras": "3.x"},
        "jax": {"backend": "jax", "keras": "3.x"}}
    assert [r["backend"] for r in figures["rows"]] == ["tensorflow", "jax"]
    assert len(calls) == bench.TORCH_PROCESSES
    assert figures["torch_ms"] == {"small": 9.0}
    assert figures["torch_devices"] == {"small": "cpu"}
    assert ("| jax | small | forward | yes | 20.0 | 10.0 | 2.00 | 9.0 | 2.22 |"
            in out)


def test_matmul_flops_of_a_step_by_hand(bench):
    """The big config's figures as counted by hand: per time step a
    (64, 200 + 650) by (850, 4 * 650 + 2 * 65) product forward, 70 steps;
    a training step three times that."""
    big = bench.CONFIGS["big"]
    forward = 2 * 64 * 850 * 2730 * 70 / 1e9
    assert bench.matmul_gflop(bench.step_matmuls(big, "onlstm", "forward")) == (
        pytest.approx(forward))
    assert round(forward, 1) == 20.8
    train = bench.matmul_gflop(bench.step_matmuls(big, "onlstm", "train"))
    assert train == pytest.approx(3 * forward) and round(train, 1) == 62.4
    lstm = bench.matmul_gflop(bench.step_matmuls(big, "keras_lstm", "train"))
    assert lstm == pytest.approx(3 * 2 * 64 * 850 * 2600 * 70 / 1e9)
    assert round(lstm, 1) == 59.4


def test_matmul_bound_is_the_flops_at_the_rates_measured(bench, monkeypatch):
    # A machine whose matmul runs at 100 GFLOP/s at every shape.
    monkeypatch.setattr(bench, "matmul_rate", lambda m, k, n: 100.0)
    bounds, rates = bench.matmul_bound(bench.CONFIGS["small"], "train")
    for layer in ("onlstm", "keras_lstm"):
        gflop, seconds = bounds[layer]
        assert seconds == pytest.approx(gflop / 100.0)
    assert (bench.LARGE_MATMUL,) * 3 in rates


def test_matmul_rate_is_a_rate(bench):
    rate = bench.matmul_rate(64, 64, 64)
    assert 0.01 < rate < 1e5


@pytest.mark.parametrize("time_steps", [20, 35, 70])
def test_length_spread_is_twenty_lengths_around_the_configs(bench,
                                                            time_steps):
    lengths = bench.length_spread(time_steps)
    assert len(lengths) == len(set(lengths)) == bench.LENGTHS == 20
    assert lengths == sorted(lengths)
    assert lengths[0] == round(time_steps / 2)
    assert lengths[-1] == round(3 * time_steps / 2)
    assert sum(lengths) / len(lengths) == pytest.approx(time_steps, rel=0.03)
    with pytest.raises(ValueError, match="at least 20"):
        bench.length_spread(10)


def test_lengths_mode_times_both_layers_on_fresh_models(bench, monkeypatch,
                                                         capsys, tmp_path):
    """Each layer is timed on a model built for each kind of batch, over
    the batches of every length it is given; the ratio is of the first
    passes, and the record keeps the rows."""
    import keras

    built, fed = [], []
    real_sequential = keras.Sequential

    def sequential(layers):
        model = real_sequential(layers)
        built.append(type(layers[1]).__name__)
        real_predict = model.predict_on_batch

        def predict_on_batch(x):
            fed.append((type(layers[1]).__name__, tuple(x.shape)))
            return real_predict(x)

        model.predict_on_batch = predict_on_batch
        return model

    monkeypatch.setattr(keras, "Sequential", sequential)
    monkeypatch.setitem(bench.CONFIGS, "tiny", (2, 20, 3, 4, 2))
    monkeypatch.chdir(REPO_ROOT)
    path = tmp_path / "lengths.json"
    bench.main(["--lengths", "--configs", "tiny", "--json", "--record",
                str(path)])
    row = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert built == ["ONLSTM", "ONLSTM", "LSTM", "LSTM"]
    lengths = bench.length_spread(20)
    assert row["lengths"] == lengths
    for name in ("ONLSTM", "LSTM"):
        shapes = [shape for layer, shape in fed if layer == name]
        # Two passes over batches of one length, then two over all lengths.
        assert shapes == 2 * [(2, 20, 3)] * 20 + 2 * [
            (2, n, 3) for n in lengths]
    for key in ("onlstm", "keras_lstm"):
        assert row[f"{key}_lengths_ratio"] == pytest.approx(
            row[f"{key}_many_first_s"] / row[f"{key}_one_first_s"])
    record = runs.read_record(path)
    assert record["figures"]["mode"] == "lengths"
    assert record["figures"]["rows"] == [row]
    assert record["figures"]["configs"] == {"tiny": [2, 20, 3, 4, 2]}
