"""Fixed-seed slices of the command-line fuzzer (tests/fuzz_cli.py; `make fuzz` runs the rest)."""

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


@pytest.mark.engine
@pytest.mark.parametrize("kind, cases", [("combos", 150), ("overrides", 300), ("sweep", 200), ("outputs", 150),
                                                 ("tiering", 150), ("rules", 400), ("rt", 100), ("machine", 150),
                                                 ("traces", 200), ("store", 40), ("mixes", 200)])
def test_other_cli_inputs_end_in_a_result_or_an_error_naming_its_place(kind, cases):
    # combos: valid run files combining registered components, some values at an edge;
    # overrides: extreme --set values; sweep: mutated specifications; outputs: outputs that
    # collide with inputs or cannot be written, where every input must keep its bytes and inode;
    # tiering: tier placement options on a fake kernel, whose files must be as they were after;
    # rules: mutated rules files, refused by file or deciding every class vector; rt: mutated
    # task sets, a task's key named with its line; machine: mutated machine files a run names,
    # an error naming the machine file; traces: mutated and binary traces and profile parameters,
    # errors that name the place and echo no raw byte; store: hand-edited store manifests and
    # damaged batches under `report`, never a run counted twice; mixes: mutated mix files, read
    # by --mix and a sweep's preset, an error naming the file.
    t = fuzz_cli.fuzz(cases, seed=1, kind=kind)
    findings = t["unnamed"] + t["internal"] + t["hang"]
    assert t["ok"] > 0 and t["clean"] > 0, t
    assert not findings, "\n".join(findings[:10])


@pytest.mark.engine
def test_a_damaged_alone_cache_entry_never_changes_a_comparison():
    t = fuzz_cli.fuzz(30, seed=1, kind="cache")
    findings = t["unnamed"] + t["internal"] + t["hang"]
    assert t["ok"] == 30, "\n".join(findings[:10])
