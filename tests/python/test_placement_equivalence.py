"""Policies that are one policy on a machine, measured (memtint.placement_equivalence)."""

from __future__ import annotations

import os

import pytest

from memtint import placement_equivalence as pe

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

pytestmark = pytest.mark.engine


def test_bpm_and_bank_only_are_one_policy_on_the_i7_860_and_the_strided_split_is_not():
    # BPM's even split of the 32 bank colours gives each of 4 programs the colours of one b21-b22
    # value: HVR's bank-only. Striding the split fixes b13-b14 instead: another placement.
    groups = pe.groups("i7-860", ["bpm", "bpm-strided", "bank-only", "cache-only"], processes=4,
                       options={"bpm-strided": {"policy": "bpm", "colour_split": "strided"}})
    assert groups == [["bpm", "bank-only"]]


def test_a_policy_that_cannot_run_on_the_machine_is_left_out():
    # bpm-plus needs the page-channel variant; on the default i7-860 it is refused, not grouped.
    assert pe.probe("i7-860", "bpm-plus", 4) is None
    assert all("bpm-plus" not in g for g in pe.groups("i7-860", ["bpm", "bpm-plus", "bank-only"], processes=4))


def test_presets_command_names_the_groups_and_refuses_an_unknown_machine(memtint, clean_error, tmp_path):
    # A machine TOML, as compare and sweep take it (a copy of the i7-860's, so the same groups).
    import shutil

    shutil.copy(os.path.join(REPO, "configs", "machines", "i7-860.toml"), tmp_path / "mine.toml")
    code, out, err = memtint("presets", "--same-placement", "mine.toml")
    assert code == 0 and "mine.toml: bpm, bank-only and bank-only-8 place every page alike" in out, err
    clean_error(memtint("presets", "--same-placement", "nosuch"), "--same-placement", "nosuch")


def test_probes_in_parallel_group_as_one_at_a_time_and_report_each_probe_once():
    labels = ["bpm", "bpm-strided", "bank-only", "cache-only", "bpm-plus"]
    options = {"bpm-strided": {"policy": "bpm", "colour_split": "strided"}}
    pe.probe.cache_clear()
    serial = pe.groups("i7-860", labels, processes=4, options=options)
    pe.probe.cache_clear()
    probed: list[str] = []
    parallel = pe.groups("i7-860", labels, processes=4, options=options, jobs=3, on_probe=probed.append)
    assert parallel == serial == [["bpm", "bank-only"]]
    assert sorted(probed) == sorted(labels)
