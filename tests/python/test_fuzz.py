"""A fixed-seed slice of the run-file fuzzer (tests/fuzz_cli.py; `make fuzz` runs the rest)."""

from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import fuzz_cli  # noqa: E402


@pytest.mark.engine
def test_mutated_run_files_end_in_a_run_or_an_error_naming_its_place():
    t = fuzz_cli.fuzz(600, seed=1)
    findings = t["unnamed"] + t["internal"] + t["hang"]
    assert t["ok"] > 0 and t["clean"] > 0, t
    assert not findings, "\n".join(findings[:10])
