"""`memtint probe` in the simulator, where the true mapping is known: every preset mapping is
recovered exactly (XOR functions included), the result is a machine preset the simulator runs
exactly as the original, noise ends in a refusal rather than a wrong preset, bad input is named."""

from __future__ import annotations

import json
import os
import re
import subprocess

import pytest

from memtint.api import MemtintError
from memtint.probe import gf2
from memtint.probe.search import Organisation, ProbeError, Search, Settings
from memtint.probe.simulated import Noise, SimulatedTimer
from memtint.probe.timer import AddressSpace

pytestmark = pytest.mark.engine


def _machines() -> list[str]:
    from memtint import _engine

    return [m["name"] for m in json.loads(_engine.presets_json())["machines"]]


def _truth(timer: SimulatedTimer) -> dict:
    return {k: [b[0] if len(b) == 1 else b for b in v] for k, v in timer.truth()["fields"].items()}


@pytest.mark.parametrize("machine", _machines())
def test_every_preset_mapping_is_recovered_exactly(machine):
    nodes = len(SimulatedTimer(machine).info["nodes"])
    for node in range(nodes):
        timer = SimulatedTimer(machine, node=node)
        org = Organisation.from_engine(timer.truth()["organisation"])
        result = Search(timer, org, Settings(max_pairs=40_000)).run()
        assert result.fields() == _truth(timer), (machine, node)
        assert not result.problems and not result.warnings
        assert result.confidence() == 1.0
        # The measurement count the docs give: thousands, not millions.
        assert 500 < result.measurements < 40_000, result.measurements


def test_xor_functions_are_found_as_xor_pairs_in_their_fields():
    timer = SimulatedTimer("ddr4-2400-xor")
    r = Search(timer, Organisation.from_engine(timer.truth()["organisation"]), Settings()).run()
    fields = r.fields()
    assert fields["channel"] == [[6, 18]]
    assert fields["bank_group"] == [[7, 19], [13, 20]]
    assert fields["bank"] == [[16, 21], [17, 22]]
    assert all(f.consistency == 1.0 for f in r.functions)
    # Bank groups were told from banks by their timing (tCCD_S against tCCD_L), with a margin.
    assert all(f.margin > 1 for f in r.functions if f.field == "bank_group")


def test_mild_noise_still_recovers_the_mapping():
    for noise in (Noise(jitter_ns=20), Noise(spike_rate=0.1), Noise(corunner_gbps=2)):
        timer = SimulatedTimer("i7-860", noise=noise, seed=2)
        r = Search(timer, Organisation.from_engine(timer.truth()["organisation"]), Settings(seed=2)).run()
        assert r.fields() == _truth(timer), noise


def test_a_buffer_too_small_for_a_bit_flip_is_a_named_error():
    # Before any timing: the frames show it (a measurement of minutes ended in it before).
    timer = SimulatedTimer("i7-860", share=0.00002)
    search = Search(timer, Organisation.from_engine(timer.truth()["organisation"]), Settings(max_pairs=20_000))
    with pytest.raises(ProbeError, match=r"give the probe more memory \(--buffer-mb\)"):
        search.run()
    assert search.pairs_timed == 0


def test_a_buffer_in_long_runs_probes_the_bits_below_them_and_says_so():
    # Two runs of frames, an eighth of memory each, 6/8 apart: b31 and b32 vary but only ever
    # flip together (as in a VM's guest-physical memory). They used to be found as a function
    # b31^b32 whose pairs the buffer cannot hold: "no pair of lines ... give the probe more memory".
    class Runs(SimulatedTimer):
        def space(self):
            n = self.truth()
            frames = 1 << (n["capacity_bits"] - 12)
            run = range(frames // 8)
            return AddressSpace(n["capacity_bits"], [*run, *(f + frames * 6 // 8 for f in run)], base=n["base"])

    timer = Runs("i7-860")
    r = Search(timer, Organisation.from_engine(timer.truth()["organisation"]), Settings(max_pairs=60_000)).run()
    assert r.fields() == _truth(timer)  # b31 and b32 are row bits there
    assert any("b31 and above are not probed" in w and "between 0.0 and 7.0 GiB, in 2 runs" in w for w in r.warnings), \
        r.warnings


def test_gf2_null_space_lightest_basis_and_duals():
    functions = [1 << 6, (1 << 13) | (1 << 17), (1 << 14) | (1 << 18)]
    # Differences that keep every function: random combinations of the complement.
    import random

    rng = random.Random(1)
    diffs = []
    for _ in range(60):
        d = rng.getrandbits(24) & ~0x3F
        for f in functions:
            if gf2.parity(f & d):
                d ^= 1 << gf2.bits(f)[-1]  # flip a bit of f only it holds
        diffs.append(d)
    null = gf2.null_space(diffs, 24, 6)
    assert sorted(gf2.lightest_basis(null)) == sorted(functions)
    duals = gf2.solve_duals(functions, 24)
    assert [[gf2.parity(f & d) for f in functions] for d in duals] == [[1, 0, 0], [0, 1, 0], [0, 0, 1]]


def test_json_to_stdout_is_the_json_alone(memtint):
    # The table and its lines go to stderr then, as every command's with --json -.
    code, out, err = memtint("probe", "--simulate", "ddr2-800", "--json", "-", "--no-progress")
    assert code == 0, err
    assert json.loads(out)["kind"] == "probe" and "DRAM mapping found" in err


def test_written_preset_runs_identically_to_the_original(memtint, tmp_path):
    code, out, err = memtint("probe", "--simulate", "i7-860", "--write-preset", "probed.toml", "--json", "probe.json",
                             "--no-progress")
    assert code == 0, err
    assert "matches the simulated machine's mapping exactly" in out
    mapping = (tmp_path / "probed.mapping.toml").read_text()
    assert "consistency 1.000" in mapping and "[fields]" in mapping
    # i7-860's page-channel variant is a machine of its mapping: bpm-plus would have run there.
    preset = (tmp_path / "probed.toml").read_text()
    assert "\n[variants]" not in preset and "but for its [variants]" in preset
    summary = json.loads((tmp_path / "probe.json").read_text())
    assert summary["nodes"][0]["exact"] is True and summary["nodes"][0]["raw"]["random_pair_ns"]
    results = {}
    for machine in ("i7-860", "probed.toml"):
        code, out, err = memtint("compare", "--machine", machine, "--mix", "stream,random,copy,light",
                                 "--policies", "buddy,bpm", "--instructions", "200000", "--warmup", "50000",
                                 "--no-cache", "--json", f"{machine}.json")
        assert code == 0, err
        results[machine] = json.loads((tmp_path / f"{machine}.json").read_text())

    def metrics(r):
        # Everything but the machine's name and the host's wall-clock times.
        def strip(x):
            if isinstance(x, dict):
                return {k: strip(v) for k, v in x.items() if k not in ("machine", "wall_seconds")}
            return [strip(v) for v in x] if isinstance(x, list) else x

        return json.dumps(strip(r), sort_keys=True)

    assert metrics(results["i7-860"]) == metrics(results["probed.toml"])


def test_a_multi_node_machine_gets_a_mapping_per_node(memtint, tmp_path):
    # The slow node is throttled DRAM: its row conflicts and bank groups show below the cap.
    code, out, err = memtint("probe", "--simulate", "tiering-10to1", "--write-preset", "tier.toml", "--no-progress")
    assert code == 0, err
    assert out.count("matches the simulated machine's mapping exactly") == 2
    assert (tmp_path / "tier.node0.mapping.toml").exists() and (tmp_path / "tier.node1.mapping.toml").exists()
    from memtint.probe.simulated import describe

    a, b = describe("tiering-10to1"), describe(str(tmp_path / "tier.toml"))
    assert [n["fields"] for n in a["nodes"]] == [n["fields"] for n in b["nodes"]]
    assert b["config"]["nodes"][1]["dram"]["mapping"].endswith("tier.node1.mapping.toml")
    assert b["config"]["nodes"][1]["dram"]["device"] == "ddr4-2400-throttled-10x"

    # One node of it: the others keep their mappings.
    code, out, err = memtint("probe", "--simulate", "tiering-2to1", "--node", "1", "--write-preset", "one.toml",
                             "--no-progress")
    assert code == 0, err
    assert (tmp_path / "one.mapping.toml").exists()
    c = describe(str(tmp_path / "one.toml"))
    assert [n["fields"] for n in c["nodes"]] == [n["fields"] for n in describe("tiering-2to1")["nodes"]]
    # ... and the preset and the command say which were not probed.
    assert "memory node(s) 0 keep tiering-2to1's mapping (not probed)" in err
    assert "# Probed: memory node(s) 1; memory node(s) 0 keep tiering-2to1's mapping (not probed)." in (
        tmp_path / "one.toml").read_text()
    assert "not probed" not in (tmp_path / "tier.toml").read_text()


def test_on_linux_node_binds_the_probes_buffer_in_its_child_before_exec(tmp_path, monkeypatch):
    from memtint.linux.numa import FAKE_ENV, MPOL_BIND
    from memtint.linux.numa_fake import FakeNuma
    from memtint.probe.command import _bound_node
    from memtint.probe.linux import _bound_to

    fake = FakeNuma.create(str(tmp_path / "fake"))
    monkeypatch.setenv(FAKE_ENV, str(tmp_path / "fake"))
    bind = _bound_node(1)
    assert bind is not None and bind[1] == 1 and _bound_to(None) is None
    before = len(fake.calls())
    subprocess.run(["true"], preexec_fn=_bound_to(bind), check=True)
    child = [c for c in fake.calls()[before:] if c.get("call") == "set_mempolicy"]
    assert child and child[-1]["mode"] == MPOL_BIND and child[-1]["nodes"] == [1], fake.calls()[before:]
    with pytest.raises(MemtintError, match="--node 2: this machine's memory nodes are node0,node1"):
        _bound_node(2)


def test_heavy_noise_refuses_instead_of_writing_a_wrong_preset(memtint, tmp_path):
    # Interrupts in nearly half the rounds: docs/probe.md's noise study refuses every run there.
    code, out, err = memtint("probe", "--simulate", "i7-860", "--spike-rate", "0.45", "--write-preset", "p.toml",
                             "--no-progress")
    assert code == 1
    assert not (tmp_path / "p.toml").exists() and not (tmp_path / "p.mapping.toml").exists()
    assert "no preset written" in err or "not row conflicts" in err or "too weak" in err


def test_a_signal_that_does_not_separate_is_refused_once_its_clusters_settle():
    # Timer jitter of 80 ns hides every conflict: the search went to its last pair (400,000 in
    # the command) before it refused; the same refusal now comes once 1,000 pairs were confirmed
    # slow without the clusters separating.
    timer = SimulatedTimer("i7-860", noise=Noise(jitter_ns=80))
    org = Organisation.from_engine(timer.truth()["organisation"])
    with pytest.raises(ProbeError, match="too weak") as early:
        Search(timer, org, Settings(max_pairs=40_000)).run()
    seen = int(re.search(r"in ([\d,]+) random pairs", str(early.value)).group(1).replace(",", ""))
    assert seen < 20_000, str(early.value)
    timer = SimulatedTimer("i7-860", noise=Noise(jitter_ns=80))
    with pytest.raises(ProbeError, match="in 40,[0-9]{3} random pairs"):
        Search(timer, org, Settings(max_pairs=40_000, settled_confirmed=0)).run()


@pytest.mark.parametrize(
    "args, words",
    [
        (["--simulate", "no-such-machine"], ["machine", "no-such-machine"]),
        (["--simulate", "tiering-2to1", "--node", "5"], ["--node 5", "2 memory node"]),
        (["--simulate", "i7-860", "--banks", "3"], ["--banks 3", "power of two"]),
        (["--simulate", "i7-860", "--jitter-ns", "-1"], ["--jitter-ns"]),
        (["--simulate", "i7-860", "--repetitions", "0"], ["--repetitions 0"]),
        (["--simulate", "i7-860", "--pair-span-mb", "3"], ["--pair-span-mb 3", "power of two"]),
        (["--simulate", "i7-860", "--write-preset", "nodir/p.toml"], ["--write-preset", "does not exist"]),
        # It wrote a machine file over another preset's mapping, breaking that preset.
        (["--simulate", "i7-860", "--write-preset", "probed.mapping.toml"],
         ["--write-preset probed.mapping.toml: names a preset's mapping file"]),
        (["--simulate", "i7-860", "--write-preset", "tier.node1.mapping.toml"], ["names a preset's mapping file"]),
        (["--simulate", "i7-860", "--jitter-ns", "nan"], ["--jitter-ns nan", "finite"]),
        (["--simulate", "i7-860", "--spike-rate", "2"], ["--spike-rate 2.0", "from 0 to 1"]),
        (["--simulate", "i7-860", "--seed", "-1"], ["--seed", "at least 0, got -1"]),
        # A flag of the other way of probing is refused, not ignored.
        (["--simulate", "i7-860", "--buffer-mb", "64"], ["--buffer-mb only applies on Linux"]),
        (["--simulate", "i7-860", "--like", "ddr4-2400", "--hugepages"], ["--like, --hugepages only apply on Linux"]),
        (["--jitter-ns", "5"], ["--jitter-ns only applies with --simulate"]),
        # On Linux, --node binds the buffer to a node this machine has, and names --like's node.
        (["--node", "999"], ["--node 999", "this machine's memory nodes are"]),
        (["--like", "tiering-2to1", "--node", "5"], ["--node 5", "--like tiering-2to1 has 2 memory node(s)"]),
        # It wrote node 0's preset from whichever node the buffer happened to be on.
        (["--like", "tiering-2to1", "--write-preset", "x.toml"], ["--like tiering-2to1 (2 memory nodes) needs --node N"]),
        # The engine's bounds, named by the flag (it said "noise.jitter_ns", "repetitions").
        (["--simulate", "i7-860", "--repetitions", "1000000"], ["--repetitions 1000000", "from 1 to 100,000"]),
        (["--simulate", "i7-860", "--jitter-ns", "2e6"], ["--jitter-ns 2000000.0", "from 0 to 1,000,000"]),
        (["--simulate", "i7-860", "--corunner-gbps", "1e5"], ["--corunner-gbps 100000.0", "from 0 to 10,000"]),
        # The preset went to /dev/null and its mapping into /dev/null.mapping.toml.
        (["--simulate", "i7-860", "--write-preset", "/dev/null"], ["--write-preset /dev/null", "not a regular file"]),
    ],
)
def test_bad_input_is_named(memtint, args, words):
    code, out, err = memtint("probe", *args, "--no-progress")
    # A bad value is a usage error like every command's: one line, exit 2 (it was 1, "memtint probe:").
    assert code == 2 and err.startswith("memtint: error: ") and err.count("\n") == 1, err
    text = out + err
    for w in words:
        assert w in text, text
    assert "Traceback" not in text


def test_the_machine_file_is_never_overwritten(memtint, tmp_path):
    machine = tmp_path / "m.toml"
    from memtint.probe.preset import dumps
    from memtint.probe.simulated import describe

    machine.write_text(dumps(describe("xor-bank")["config"]))
    before = machine.read_text()
    code, out, err = memtint("probe", "--simulate", str(machine), "--write-preset", str(machine), "--no-progress")
    assert code != 0 and "input" in err
    assert machine.read_text() == before


def test_linux_preset_needs_a_template(memtint):
    code, out, err = memtint("probe", "--write-preset", "x.toml", "--no-progress")
    assert code != 0 and "--like" in err


def test_pairs_within_a_span_see_only_the_functions_of_its_bits():
    # i7-860 with pairs inside 2 MiB blocks: the channel and bank bits below 21 are found, the
    # rank bits b21-b22 cannot vary, and the result says so instead of passing for a mapping.
    timer = SimulatedTimer("i7-860")
    r = Search(timer, Organisation.from_engine(timer.truth()["organisation"]), Settings(span_bits=21)).run()
    assert sorted(f.bits() for f in r.functions) == [[6], [13], [14], [15]]
    assert any("b21" in w and "untested" in w for w in r.warnings)
    assert any("bank functions" in p for p in r.problems)


def test_the_python_api_runs_the_search_and_checks_it():
    import memtint.probe

    r = memtint.probe.simulate("opteron-6128-node", seed=3)
    assert r["exact"] and r["fields"]["rank"] == [7] and r["measurements"] > 0
    with pytest.raises(ProbeError):
        memtint.probe.simulate("i7-860", jitter_ns=80, max_pairs=5_000)


def test_a_wrong_organisation_is_named_as_the_cause_not_noise():
    # The i7-860 has 4 ranks a channel; told 8, the probe finds one function fewer than the
    # organisation needs, and the field it cannot fill is blamed on the organisation given.
    import dataclasses

    timer = SimulatedTimer("i7-860")
    org = dataclasses.replace(Organisation.from_engine(timer.truth()["organisation"]), ranks=8)
    r = Search(timer, org, Settings(seed=1)).run()
    assert any("the organisation has 7" in p for p in r.problems), r.problems
    assert any("does not fit the functions found" in p for p in r.problems), r.problems
    assert not any("too much noise" in p for p in r.problems), r.problems


def test_the_table_says_a_field_taken_by_elimination_and_a_count_at_odds(capsys, monkeypatch):
    # A bit's agreement of 1.00 read as a confident column field while its count was wrong, and a
    # field that took the last candidates showed a bare "-" for its margin.
    import dataclasses

    from memtint.probe.command import _print

    monkeypatch.setenv("COLUMNS", "300")  # one line per row, whatever the terminal
    timer = SimulatedTimer("i7-860")
    right = Organisation.from_engine(timer.truth()["organisation"])
    r = Search(timer, right, Settings(seed=1)).run()
    wrong = dataclasses.replace(right, columns=2 * right.columns)
    _print([(0, r, right, None)], "simulated", 1.0)
    table = capsys.readouterr().out
    banks = [line for line in table.splitlines() if line.startswith("│ bank ")]
    assert banks and all("by elimination" in line for line in banks), table
    assert "the organisation's" not in table, table
    _print([(0, r, wrong, None)], "simulated", 1.0)
    table = capsys.readouterr().out
    assert "(10 bits; the organisation's 11)" in table and table.count("the organisation's") == 1, table


def _machine_with_mapping(tmp_path, name: str, fields: str) -> str:
    """xor-bank's machine with its mapping's [fields] replaced; the machine file's path."""
    from memtint.probe.preset import dumps
    from memtint.probe.simulated import describe

    config = describe("xor-bank")["config"]
    config["name"], config["dram"]["mapping"] = name, f"{name}.mapping.toml"
    config.pop("variants", None)
    (tmp_path / f"{name}.mapping.toml").write_text(
        f'name = "{name}"\n\n[organisation]\nchannels = 1\nranks = 2\nbank_groups = 1\nbanks_per_group = 8\n'
        f"rows = 16384\ncolumns = 1024\n\n[fields]\n{fields}")
    (tmp_path / f"{name}.toml").write_text(dumps(config))
    return f"{name}.toml"


def test_the_check_allows_what_timing_cannot_tell_and_nothing_more():
    from memtint.probe.simulated import mapping_differences

    truth = {"channel": [], "rank": [[16, 20]], "bank_group": [], "bank": [[13, 17], [14, 18], [15, 19]],
             "row": list(range(17, 31)), "column": list(range(3, 13))}
    same = dict(truth, bank=[[14, 18], [13, 17], [15, 19]])
    assert mapping_differences(same, truth) == []
    # An XOR's lower bit in the row instead of its higher: the same rows in every bank.
    assert mapping_differences(dict(truth, row=[13, 14, 15, 16, *range(21, 31)]), truth) == []
    # A rank function taken for a bank one, a row bit for a bank bit, a column bit that is a row bit.
    assert mapping_differences(dict(truth, rank=[[13, 17]], bank=[[16, 20], [14, 18], [15, 19]]), truth) == ["rank", "bank"]
    assert mapping_differences(dict(truth, bank=[[13, 17], [14, 18], 19], row=[15, 17, 18, *range(20, 31)]), truth) == ["bank"]
    assert mapping_differences(dict(truth, column=[*range(3, 12), 17]), truth) == ["column"]


def test_a_mapping_written_otherwise_is_matched_not_called_a_mismatch(memtint, tmp_path):
    # The bank XORs out of order and their lower bits in the row: the search finds this mapping,
    # as timing shows it; the check said MISMATCH and exited 1.
    machine = _machine_with_mapping(tmp_path, "other", "rank = [[16, 20]]\nbank = [[14, 18], [13, 17], [15, 19]]\n"
                                    "column = [3, 4, 5, 6, 7, 8, 9, 10, 11, 12]\n"
                                    "row = [13, 14, 15, 16, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30]\n")
    code, out, err = memtint("probe", "--simulate", machine, "--json", "p.json", "--no-progress")
    assert code == 0, out + err
    assert "MISMATCH" not in out and "up to what timing cannot tell" in out
    node = json.loads((tmp_path / "p.json").read_text())["nodes"][0]
    assert node["matches"] is True and node["exact"] is False
    # The noise study's outcome too (it counted this "wrong").
    from memtint.probe.noise_study import one

    assert one((str(tmp_path / machine), "jitter_ns", 0.0, 1))["outcome"] == "exact"


def test_a_mistake_in_a_machine_or_mapping_file_names_its_line(memtint, tmp_path):
    machine = _machine_with_mapping(tmp_path, "bad", "rank = [[16, 20]]\nbank = [[13, 13], [14, 18], [15, 19]]\n"
                                    "column = [3, 4, 5, 6, 7, 8, 9, 10, 11, 12]\n"
                                    "row = [17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30]\n")
    text = (tmp_path / "bad.mapping.toml").read_text().splitlines()
    line = next(i for i, t in enumerate(text, 1) if t.startswith("bank ="))
    for option in ("--simulate", "--like"):
        code, out, err = memtint("probe", option, machine, "--no-progress")
        assert code == 2 and err.startswith(f"memtint: error: bad.mapping.toml:{line}: fields.bank: "), err
    # A key of the machine file itself: its line there, as --machine gives it.
    text = (tmp_path / machine).read_text()
    (tmp_path / machine).write_text(text.replace("ranks = 2", "ranks = 3"))
    line = next(i for i, t in enumerate(text.splitlines(), 1) if t.startswith("ranks ="))
    for option in ("--simulate", "--like"):
        code, out, err = memtint("probe", option, machine, "--no-progress")
        assert code == 2 and err.startswith(f"memtint: error: bad.toml:{line}: ") and "dram.ranks" in err, err


def test_a_machine_or_mapping_file_not_utf8_and_a_directory_are_named(memtint, tmp_path):
    # The engine said "F: stream did not contain valid UTF-8" (no line) and "D: Is a directory" (no option).
    machine = _machine_with_mapping(tmp_path, "latin", "rank = [[16, 20]]\nbank = [[13, 17], [14, 18], [15, 19]]\n"
                                    "column = [3, 4, 5, 6, 7, 8, 9, 10, 11, 12]\n"
                                    "row = [17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30]\n")
    mapping = tmp_path / "latin.mapping.toml"
    mapping.write_bytes(mapping.read_bytes() + b"# caf\xe9\n")
    line = mapping.read_bytes().count(b"\n")
    code, out, err = memtint("probe", "--simulate", machine, "--no-progress")
    assert code == 2 and f"latin.mapping.toml:{line}: not UTF-8 text (byte 0xe9)" in err, err
    (tmp_path / "m.toml").write_bytes(b'name = "m"\n# caf\xe9\n')
    code, out, err = memtint("probe", "--simulate", "m.toml", "--no-progress")
    assert code == 2 and err.startswith("memtint: error: m.toml:2: not UTF-8 text (byte 0xe9)"), err
    (tmp_path / "adir").mkdir()
    code, out, err = memtint("probe", "--simulate", "adir", "--no-progress")
    assert code == 2 and "--simulate adir: a directory, not a machine file" in err, err
