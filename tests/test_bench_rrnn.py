"""`benchmarks/bench_rrnn.py`'s own logic: flag checks, what each kind
trains, the row of a run and the ratios it reports (its timings are not
tested)."""

import pytest

from conftest import load_benchmark


@pytest.fixture(scope="module")
def bench():
    return load_benchmark("bench_rrnn")


@pytest.mark.parametrize("argv, flag", [
    (["--kinds", "search,lstm"], "'search,lstm'"),
    (["--kinds", ","], "--kinds"),
    (["--sequences", "0"], "--sequences"),
    (["--batch-size", "0"], "--batch-size"),
    (["--repeats", "0"], "--repeats"),
])
def test_bad_flags_are_named(bench, capsys, argv, flag):
    with pytest.raises(SystemExit) as exit_info:
        bench.parse_args(argv)
    assert exit_info.value.code == 2
    assert flag in capsys.readouterr().err


def test_the_fixing_stage_replays_a_tree_and_the_search_searches(bench):
    from on_lstm_keras.rrnn import RRNN, gru_tree, normalize_tree

    search, _, context = bench.models("search", 4, 3, seed=0)
    layer = next(x for x in search.layers if isinstance(x, RRNN)
                 and x.trainable)
    with context:
        assert layer.cell.selection == "hard"
    fix, _, context = bench.models("fix", 4, 3, seed=0)
    layer = next(x for x in fix.layers if isinstance(x, RRNN) and x.trainable)
    with context:
        assert layer.cell.selection == "forced"
        expected = normalize_tree(
            gru_tree(), iterations=layer.cell.iterations,
            tuples=layer.cell.tuples, operations=layer.cell.operations,
            activations=layer.cell.activations, pool=layer.cell.pool)
        assert [tuple(m) for m in layer.cell.tree] == [tuple(m)
                                                      for m in expected]
    assert layer.cell.selection == "hard"  # the search again after it


def test_a_row_and_the_ratio_to_the_gru(bench):
    row = bench.run_kind("gru", units=4, length=3, batch_size=4,
                         sequences=8, seed=0)
    assert row["kind"] == "gru" and row["seconds"] > 0
    assert row["sequences_per_s"] == pytest.approx(8 / row["seconds"])
    assert row["peak_memory_mb"] > 10
    rows = bench.with_ratios([{"kind": "search", "seconds": 6.0},
                              {"kind": "gru", "seconds": 1.5}])
    assert [r["over_gru"] for r in rows] == [4.0, 1.0]
    # without a GRU row there is nothing to divide by
    assert "over_gru" not in bench.with_ratios(
        [{"kind": "fix", "seconds": 2.0}])[0]
