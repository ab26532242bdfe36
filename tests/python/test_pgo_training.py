"""The profile-guided build: its training runs (bench/pgo/training.json) are valid run specs,
and its commands refuse bad input clearly.

`make pgo` is optional and too slow for CI (two instrumented builds), so this checks the part
that can break silently: every training spec, expanded the way both trainers expand it, is
accepted by the engine and runs (shortened here).
"""

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memtint import _engine

ROOT = Path(__file__).resolve().parents[2]


def load_trainer():
    path = ROOT / "bench" / "pgo" / "train_extension.py"
    spec = importlib.util.spec_from_file_location("train_extension", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.engine
def test_every_training_run_is_a_valid_spec():
    training = json.loads((ROOT / "bench" / "pgo" / "training.json").read_text())
    training["dram_requests"] = 2000
    runs = list(load_trainer().training_specs(training))
    assert sum(kind == "dram" for kind, _ in runs) == len(training["dram"]) * len(training["dram_workloads"])
    for kind, spec in runs:
        if kind == "dram":
            stats = json.loads(_engine.run_dram(json.dumps(spec)))
            assert stats["requests"] == 2000, spec
        else:
            spec["instructions"] = 20_000
            stats = json.loads(_engine.run_sim(json.dumps(spec)))
            assert all(c["instructions"] >= 20_000 for c in stats["cores"]), spec


def _env_without_make():
    # Run make as a user would, not as a child of the `make test` that runs pytest.
    return {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS", "MAKEOVERRIDES")}


def test_a_pgo_build_without_a_profile_says_to_run_make_pgo(tmp_path):
    done = subprocess.run(
        ["make", "--no-print-directory", "build", "PGO=1", f"PGO_DATA={tmp_path / 'missing.profdata'}"],
        cwd=ROOT, capture_output=True, text=True, env=_env_without_make(), timeout=300,
    )
    assert done.returncode != 0
    assert "no profile yet; run 'make pgo' first" in done.stdout + done.stderr


def test_the_extension_trainer_explains_its_argument(tmp_path):
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "pgo" / "train_extension.py"), str(tmp_path / "no.so")],
        capture_output=True, text=True, timeout=60,
    )
    assert done.returncode != 0
    assert "usage: train_extension.py" in done.stderr
