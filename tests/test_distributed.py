"""Data-parallel training on two logical CPU devices equals one device."""

import json
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.mark.parametrize("backend", ["tensorflow", "jax"])
def test_two_devices_match_one(backend):
    pytest.importorskip(backend)
    done = subprocess.run(
        [sys.executable, os.path.join(HERE, "distributed_check.py"), backend],
        capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["devices"] == 2
    for one, two in zip(result["one_device_loss"], result["two_device_loss"]):
        assert two == pytest.approx(one, rel=1e-5)
    assert result["max_weight_difference"] < 1e-5
