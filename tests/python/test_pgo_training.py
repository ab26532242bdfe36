"""The profile-guided build: its training runs (bench/pgo/training.json) are valid run specs,
and its commands refuse bad input clearly.

`make pgo` is too slow for CI (two instrumented builds), so this checks the parts that can break
silently: every training spec, expanded the way both trainers expand it, is accepted by the engine
and runs (shortened here); the committed profile is the one the build reads; and a rustc too old
to read it builds without it, saying so.
"""

import gzip
import hashlib
import importlib.util
import json
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
        elif "sampling" in spec:  # shrunk with its units, so that it still measures two
            spec["instructions"] = 20_000
            spec["sampling"] = {"unit": 1_000, "warming": 1_000, "period": 10_000}
            stats = json.loads(_engine.run_sim(json.dumps(spec)))
            assert stats["sampling"]["segments"] >= 2 and all(c["sampling"]["units"] >= 1 for c in stats["cores"]), spec
        else:
            spec["instructions"] = 20_000
            stats = json.loads(_engine.run_sim(json.dumps(spec)))
            assert all(c["instructions"] >= 20_000 for c in stats["cores"]), spec


def test_a_pgo_build_without_a_profile_says_to_run_make_pgo(make, tmp_path):
    done = make("build", "PGO=1", f"PGO_COMMITTED={tmp_path / 'missing.profdata.gz'}")
    assert done.returncode != 0
    assert "no profile at" in done.stdout + done.stderr and "run 'make pgo'" in done.stdout + done.stderr


def test_the_committed_profile_is_unpacked_where_rustc_reads_it(make, tmp_path):
    # The default build (PGO=auto) with this machine's rustc, which wrote the profile or is newer.
    target = tmp_path / "memtint.profdata"
    done = make("pgo-profile", f"PGO_DATA={target}")
    assert done.returncode == 0, done.stdout + done.stderr
    assert target.read_bytes() == gzip.decompress((ROOT / "bench" / "pgo" / "memtint.profdata.gz").read_bytes())
    # llvm-profdata's indexed format: magic, then the version.
    assert target.read_bytes()[:8] == bytes.fromhex("ff6c70726f666981")


def test_a_rustc_too_old_for_the_profile_builds_without_it(make, tmp_path):
    # A stand-in rustc whose LLVM predates the profile's: PGO=auto says so and unpacks nothing.
    written = (ROOT / "bench" / "pgo" / "llvm-version").read_text().strip()
    older = int(written.split(".")[0]) - 1
    target = tmp_path / "memtint.profdata"
    done = make("pgo-profile", f"PGO_DATA={target}",
                rustc=["rustc 1.100.0 (0000000 2030-01-01)", f"LLVM version: {older}.0.1"])
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"rustc's LLVM {older}.0.1 cannot read the committed profile (written by LLVM {written})" in done.stdout
    assert not target.exists()


def test_engine_sources_changed_since_training_are_pointed_out(make, tmp_path):
    # The digest make pgo records: the .rs files the extension compiles (not tests or examples), in
    # byte order of their paths, concatenated.
    paths = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "crates").rglob("*.rs")
                   if not {"tests", "examples"} & set(p.relative_to(ROOT).parts[:-1]))
    digest = hashlib.sha256(b"".join((ROOT / p).read_bytes() for p in paths)).hexdigest()
    committed = (ROOT / "bench" / "pgo" / "sources").read_text().strip()
    assert len(committed) == 64 and int(committed, 16) >= 0
    target = tmp_path / "memtint.profdata"
    for recorded, stale in ((digest, False), ("0" * 64, True)):
        (tmp_path / "sources").write_text(recorded + "\n")
        done = make("pgo-profile", "PGO=1", f"PGO_DATA={target}", f"PGO_SOURCES={tmp_path / 'sources'}")
        assert done.returncode == 0, done.stdout + done.stderr
        assert ("the engine's sources changed since the committed profile was trained" in done.stdout) == stale
        assert ("'make pgo' retrains it" in done.stdout) == stale


def test_the_extension_trainer_explains_its_argument(tmp_path):
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "pgo" / "train_extension.py"), str(tmp_path / "no.so")],
        capture_output=True, text=True, timeout=60,
    )
    assert done.returncode != 0
    assert "usage: train_extension.py" in done.stderr
