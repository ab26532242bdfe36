"""No command destroys its inputs, every output is checked before the work, every refusal names
its file and key, and a killed sweep leaves no worker behind (issue: nothing lost, second round).

Each case is the exact input a user found; each asserts the clear one-line error (or warning), the
exit status, and that no input changed: content, file type and inode."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import assert_clean_error

TRACE = "10 0x1000\n20 0x2000 0x3000\n5 0x4000\n"


def snapshot(*paths: Path) -> list[tuple[str, int, int, bytes]]:
    """What must not change about an input: its path, type, inode and bytes."""
    out = []
    for p in paths:
        st = os.lstat(p)
        out.append((str(p), stat.S_IFMT(st.st_mode), st.st_ino, p.read_bytes() if stat.S_ISREG(st.st_mode) else b""))
    return out


@pytest.fixture
def trace(tmp_path) -> Path:
    p = tmp_path / "a.txt"
    p.write_text(TRACE)
    return p


@pytest.fixture
def hard_link(tmp_path, trace) -> Path:
    link = tmp_path / "b.txt"
    os.link(trace, link)
    return link


def test_convert_into_a_hard_link_of_its_input_is_refused(memtint, trace, hard_link):
    before = snapshot(trace, hard_link)
    line = assert_clean_error(memtint("convert", trace, hard_link), "OUT", "b.txt", "same file by device and inode")
    assert "a.txt" in line
    assert snapshot(trace, hard_link) == before


@pytest.mark.parametrize("args, needles", [
    # Every file a capture writes or removes is an output: an earlier capture's thread files, the
    # summary and the log (only PREFIX.t1.mtt used to be checked).
    (["trace", "-o", "in", "--", "/bin/cat", "in.t2.mtt"], ["-o's earlier capture's in.t2.mtt (removed first)", "is an input"]),
    (["trace", "-o", "in", "--", "/bin/cat", "in.summary.json"], ["-o's summary", "is an input"]),
    (["trace", "-o", "in", "--", "/bin/cat", "in.valgrind.log"], ["-o's log", "is an input"]),
    (["trace", "-o", "in", "--", "/bin/sh", "-c", "cat in.valgrind.log"], ["-o's log", "is an input"]),
    (["trace", "-o", "q", "--json", "q.valgrind.log", "--", "/bin/true"], ["--json q.valgrind.log", "same file"]),
    (["trace", "-o", ".", "--", "/bin/true"], ["-o .: is a directory"]),
    (["trace", "-o", "nodir/x", "--", "/bin/true"], ["-o's trace nodir/x.t1.mtt: directory", "does not exist"]),
    (["trace", "-o", "in", "--limit", "0.5", "--", "/bin/true"], ["--limit", "whole number"]),
    (["trace", "-o", "in", "--warmup", "99999999999999999999999", "--", "/bin/true"], ["--warmup", "64-bit"]),
])
def test_trace_never_writes_over_what_its_program_reads(memtint, tmp_path, args, needles):
    inputs = []
    for name in ("in.t1.mtt", "in.t2.mtt", "in.summary.json", "in.valgrind.log", "q.valgrind.log"):
        (tmp_path / name).write_text(name)
        inputs.append(tmp_path / name)
    os.remove(tmp_path / "in.t1.mtt")  # t2 without t1: an earlier capture's leftover thread
    inputs = inputs[1:]
    before = snapshot(*inputs)
    assert_clean_error(memtint(*args), *needles)
    assert snapshot(*inputs) == before


@pytest.mark.parametrize("name", ["empty.txt", "empty.gz"])
def test_convert_of_an_empty_trace_is_refused_and_writes_nothing(memtint, tmp_path, name):
    import gzip

    if name.endswith(".gz"):
        with gzip.open(tmp_path / name, "wb"):
            pass
    else:
        (tmp_path / name).write_text("")
    assert_clean_error(memtint("convert", name, "o.mtt"), name, "has no records", "nothing written")
    assert not (tmp_path / "o.mtt").exists()


@pytest.mark.parametrize("through_link", [False, True])
def test_convert_of_an_empty_trace_keeps_the_existing_output(memtint, tmp_path, through_link):
    # It used to rename the empty trace over OUT and then delete OUT (through a symlink: replace
    # the target with an unfinished header and delete the link).
    (tmp_path / "empty.txt").write_text("")
    old = tmp_path / "old.mtt"
    old.write_text("OLD\n")
    out = tmp_path / "link.mtt" if through_link else old
    if through_link:
        out.symlink_to(old)
    before = snapshot(*{old, out})
    assert_clean_error(memtint("convert", "empty.txt", out), "has no records", "nothing written")
    assert snapshot(*{old, out}) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted({"empty.txt", old.name, out.name})


def test_mine_rules_through_a_symlink_into_its_store_is_refused(memtint, tmp_path):
    store = tmp_path / "st"
    (store / "batches").mkdir(parents=True)
    manifest = store / "manifest.json"
    manifest.write_text("{}\n")
    link = tmp_path / "rules.toml"
    link.symlink_to(manifest)
    before = snapshot(manifest, link)
    assert_clean_error(memtint("mine-rules", store, "--out", link), "--out", "reads as a whole")
    assert snapshot(manifest, link) == before


def test_a_figure_that_fails_to_save_leaves_the_earlier_one(tmp_path):
    from memtint.outputs import OutputError, save_figure

    class Failing:  # writes half a file, then fails as a full disk does
        def savefig(self, path, **options):
            with open(path, "wb") as out:
                out.write(b"half")
            raise OSError(28, "No space left on device")

    plot = tmp_path / "plot.png"
    plot.write_bytes(b"the earlier plot")
    with pytest.raises(OutputError, match="plot.png: cannot write: No space left on device"):
        save_figure(Failing(), str(plot))
    assert plot.read_bytes() == b"the earlier plot" and [p.name for p in tmp_path.iterdir()] == ["plot.png"]


@pytest.mark.engine
def test_a_failed_preset_write_leaves_no_new_mapping_beside_it(tmp_path):
    # The mapping file used to be renamed into place before the preset's write failed.
    machine, mapping = tmp_path / "p.toml", tmp_path / "p.mapping.toml"
    machine.write_text("old preset\n")
    mapping.write_text("old mapping\n")
    script = ("import builtins, os, sys\n"
              "real = builtins.open\n"
              "def failing(path, mode='r', *a, **k):\n"  # the preset's own write fails, as on a full disk
              "    if 'w' in mode and os.path.basename(str(path)).startswith('.p.toml.'):\n"
              "        raise OSError(28, 'No space left on device')\n"
              "    return real(path, mode, *a, **k)\n"
              "builtins.open = failing\n"
              "from memtint.cli import main; sys.exit(main(sys.argv[1:]))\n")
    completed = subprocess.run([sys.executable, "-c", script, "probe", "--simulate", "ddr4-2400", "--write-preset",
                                str(machine)], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert completed.returncode == 2, completed.stderr
    assert f"--write-preset {machine}: cannot write: No space left on device" in completed.stderr
    assert machine.read_text() == "old preset\n" and mapping.read_text() == "old mapping\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.mapping.toml", "p.toml"]


def test_convert_through_a_symlink_to_its_input_is_refused(memtint, tmp_path, trace):
    link = tmp_path / "link.mtt"
    link.symlink_to(trace)
    before = snapshot(trace, link)
    assert_clean_error(memtint("convert", trace, link), "OUT", "is an input of this command")
    assert snapshot(trace, link) == before


@pytest.mark.engine
def test_trace_stats_json_over_its_trace_is_refused(memtint, trace):
    before = snapshot(trace)
    assert_clean_error(memtint("trace-stats", trace, "--json", trace), "--json", "a.txt", "is an input")
    assert snapshot(trace) == before


def test_dram_json_over_its_trace_is_refused(memtint, tmp_path):
    t = tmp_path / "d.trace"
    t.write_text("0x1000 R\n0x2000 W\n")
    before = snapshot(t)
    assert_clean_error(memtint("dram", "--machine", "ddr4-2400", "--trace", t, "--json", t), "--json", "is an input")
    assert snapshot(t) == before


def test_sim_json_over_its_config_is_refused(memtint, tmp_path):
    config = tmp_path / "C.toml"
    config.write_text('machine = "i7-860"\nprograms = ["light"]\ninstructions = 1000\n')
    before = snapshot(config)
    assert_clean_error(memtint("sim", config, "--json", config), "--json", "C.toml", "is an input")
    assert snapshot(config) == before


def test_sim_json_over_a_trace_it_runs_is_refused(memtint, tmp_path, trace):
    config = tmp_path / "C.toml"
    config.write_text(f'machine = "i7-860"\nprograms = ["{trace}"]\ninstructions = 1000\n')
    before = snapshot(trace)
    assert_clean_error(memtint("sim", config, "--json", trace), "--json", "is an input")
    assert snapshot(trace) == before


def test_compare_json_over_a_mix_trace_is_refused(memtint, trace):
    before = snapshot(trace)
    assert_clean_error(memtint("compare", "--machine", "i7-860", "--mix", f"{trace},light", "--json", trace),
                       "--json", "is an input")
    assert snapshot(trace) == before


@pytest.mark.parametrize("command", ["sim", "compare", "trace-stats"])
def test_a_trace_inside_a_phases_program_is_an_input(memtint, tmp_path, trace, command):
    program = f"phases:stream@1000+{trace.name}"
    if command == "sim":
        (tmp_path / "ph.toml").write_text(f'machine = "i7-860"\nprograms = ["{program}", "light"]\ninstructions = 1000\n')
        args = ["sim", "ph.toml", "--json", trace.name]
    elif command == "compare":
        args = ["compare", "--machine", "i7-860", "--mix", f"{program},light", "--csv", trace.name]
    else:
        args = ["trace-stats", program, "--instructions", "1000", "--json", trace.name]
    before = snapshot(trace)
    assert_clean_error(memtint(*args), trace.name, "is an input")
    assert snapshot(trace) == before


@pytest.mark.parametrize("args, option", [
    (["compare", "--machine", "i7-860", "--mix", "light,light", "--instructions", "1000", "--csv", "-"], "--csv"),
    (["sim", "run.toml", "--export-dram", "-"], "--export-dram"),
])
def test_dash_is_stdout_only_for_json(memtint, tmp_path, args, option):
    # '-' used to become a file named '-' in the working directory, after the run
    (tmp_path / "run.toml").write_text('machine = "i7-860"\nprograms = ["light"]\ninstructions = 1000\n')
    assert_clean_error(memtint(*args), f"{option} -", "only by --json")
    assert not (tmp_path / "-").exists()


def test_compare_json_and_csv_into_one_file_is_refused(memtint, tmp_path):
    out = tmp_path / "x.json"
    assert_clean_error(memtint("compare", "--machine", "i7-860", "--mix", "light,light", "--json", out, "--csv", out),
                       "--csv", "--json", "are the same file")
    assert not out.exists()


def test_machine_file_and_its_device_file_are_inputs(memtint, tmp_path):
    device = tmp_path / "dev.toml"
    device.write_text("# a device\n")
    machine = tmp_path / "m.toml"
    machine.write_text('[dram]\ndevice = "dev.toml"\n')
    before = snapshot(device, machine)
    assert_clean_error(memtint("dram", "--machine", machine, "--generate", "random", "--requests", "10",
                               "--json", device), "--json", "dev.toml", "is an input")
    assert snapshot(device, machine) == before


def _probed_machine(tmp_path: Path) -> tuple[Path, Path]:
    """A machine file that names a mapping file beside it, as `probe --write-preset` writes."""
    mapping = tmp_path / "probed.mapping.toml"
    mapping.write_text("# the probed mapping\n")
    machine = tmp_path / "probed.toml"
    machine.write_text('[dram]\ndevice = "ddr3-1333"\nmapping = "probed.mapping.toml"\n')
    return machine, mapping


@pytest.mark.parametrize("command", [
    ["compare", "--mix", "light,light", "--instructions", "1000", "--warmup", "0", "--csv"],
    ["dram", "--generate", "random", "--requests", "10", "--json"],
])
def test_a_mapping_file_that_a_machine_file_names_is_an_input(memtint, tmp_path, command):
    # compare --csv and dram --json onto it used to succeed and leave a machine that no longer loads.
    machine, mapping = _probed_machine(tmp_path)
    before = snapshot(machine, mapping)
    assert_clean_error(memtint(*command[:1], "--machine", machine, *command[1:], mapping), "probed.mapping.toml",
                       "is an input")
    assert snapshot(machine, mapping) == before


def test_a_file_a_run_names_anywhere_is_an_input_of_sim(memtint, tmp_path):
    # The machine's mapping, and a rules file named in the run file or by --set: each used to be
    # overwritten by --json or --export-dram, exit status 0.
    machine, mapping = _probed_machine(tmp_path)
    rules = tmp_path / "rules.toml"
    rules.write_text('default = "a-vp"\n')
    run = tmp_path / "run.toml"
    run.write_text('machine = "probed.toml"\nprograms = ["light"]\ninstructions = 1000\n'
                   '[os]\npolicy = "hvr"\ndynamic = "hvr-online"\n[os.hvr-online]\nrules = "rules.toml"\n')
    before = snapshot(machine, mapping, rules, run)
    for option, target in [("--json", mapping), ("--export-dram", mapping), ("--json", rules), ("--export-dram", rules)]:
        assert_clean_error(memtint("sim", run, option, target), option, target.name, "is an input")
    other = tmp_path / "other.toml"
    other.write_text(rules.read_text())
    assert_clean_error(memtint("sim", run, "--set", f"os.hvr-online.rules={other}", "--json", other),
                       "--json", "other.toml", "is an input")
    assert snapshot(machine, mapping, rules, run) == before


def test_a_probe_does_not_write_over_the_mapping_of_the_machine_it_simulates(memtint, tmp_path):
    machine, mapping = tmp_path / "probed.toml", tmp_path / "probed.mapping.toml"
    code, _, err = memtint("probe", "--simulate", "i7-860", "--write-preset", machine)
    assert code == 0, err
    like = tmp_path / "q.toml"
    like.write_text(machine.read_text())
    before = snapshot(machine, mapping)
    assert_clean_error(memtint("probe", "--simulate", like, "--write-preset", machine), "probed.mapping.toml",
                       "is an input")
    assert snapshot(machine, mapping) == before


def test_mine_rules_writes_nothing_into_the_store_it_reads(memtint, tmp_path):
    # --out store/manifest.json used to replace the manifest with rules: the store no longer loaded.
    store = tmp_path / "st"
    (store / "batches").mkdir(parents=True)
    manifest = store / "manifest.json"
    manifest.write_text("{}\n")
    before = snapshot(manifest)
    for option, target in [("--out", manifest), ("--out", store / "batches" / "b.parquet"), ("--json", store / "m.json")]:
        extra = ["--out", tmp_path / "m.toml"] if option == "--json" else []
        assert_clean_error(memtint("mine-rules", store, option, target, *extra), option, "reads as a whole")
    assert snapshot(manifest) == before and sorted(p.name for p in store.rglob("*")) == ["batches", "manifest.json"]


def test_a_run_file_s_rules_are_relative_to_it(memtint, tmp_path, monkeypatch):
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "mine.toml").write_text("this is not TOML [\n")
    run = sub / "run.toml"
    run.write_text('machine = "i7-860"\nprograms = ["light"]\ninstructions = 1000\n'
                   '[os]\npolicy = "hvr"\ndynamic = "hvr-online"\n[os.hvr-online]\nrules = "mine.toml"\n')
    monkeypatch.chdir(tmp_path)
    # Found beside the run file (so its own error), not "No such file" from the working directory.
    code, _, err = memtint("sim", run)
    assert code != 0 and "mine.toml" in err and "No such file" not in err, err


@pytest.mark.parametrize("command", [
    ["trace-stats", "light", "--instructions", "1000"],
    ["dram", "--machine", "ddr4-2400", "--generate", "random", "--requests", "100"],
    ["compare", "--machine", "i7-860", "--mix", "light,light", "--instructions", "1000", "--warmup", "0"],
])
def test_json_into_a_place_without_files_is_refused_before_work(memtint, command):
    start = time.monotonic()
    assert_clean_error(memtint(*command, "--json", "/proc/x"), "--json /proc/x: is in /proc", "the kernel's interface")
    assert time.monotonic() - start < 30


@pytest.mark.parametrize("path", ["/proc/self/status", "/sys/kernel/mm/transparent_hugepage/enabled"])
def test_json_into_the_kernels_files_is_refused_before_work(memtint, path):
    # /proc/PID/maps (read by inspect) exists and looks writable to root: the write then failed
    # with "No such file or directory".
    assert_clean_error(memtint("dram", "--machine", "ddr4-2400", "--generate", "random", "--requests", "100",
                               "--json", path), f"--json {path}: is in /", "the kernel's interface")


@pytest.mark.engine
@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full on this system")
@pytest.mark.parametrize("command", [
    ["trace-stats", "light", "--instructions", "1000"],
    ["dram", "--machine", "ddr4-2400", "--generate", "random", "--requests", "100"],
    ["compare", "--machine", "i7-860", "--mix", "light,light", "--instructions", "1000", "--warmup", "0",
     "--no-cache"],
])
def test_write_errors_name_the_file(memtint, command):
    assert_clean_error(memtint(*command, "--json", "/dev/full"), "--json /dev/full", "No space left on device")


@pytest.mark.engine
@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full on this system")
def test_outputs_the_engine_writes_are_named_by_their_option(memtint, tmp_path):
    trace = tmp_path / "in.txt"
    trace.write_text("10 0x1000\n20 0x2000 0x3000\n")
    # The engine's own words, without Rust's "(os error 28)", after the option that gave the file.
    err = assert_clean_error(memtint("convert", "--to", "ramulator", trace, "/dev/full"),
                             "OUT /dev/full: cannot write: No space left on device")
    assert "os error" not in err
    assert_clean_error(memtint("dram", "--machine", "ddr4-2400", "--generate", "random", "--requests", "50",
                               "--export-drampower", "/proc/x"), "--export-drampower /proc/x")


@pytest.mark.parametrize("command", [
    ["dram", "--machine", "ddr4-2400", "--generate", "random", "--requests", "50", "--export-drampower", "-"],
    ["reproduce", "bpm", "--quick", "--out", "-"],
    ["report", "results", "--out", "-"],
])
def test_a_directory_output_named_dash_is_refused_not_made(memtint, tmp_path, command):
    # '-' is stdout for --json only; as a directory it was made in the working directory.
    assert_clean_error(memtint(*command), "-: names a directory")
    assert not (tmp_path / "-").exists()


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full on this system")
@pytest.mark.parametrize("command", [["presets"], ["presets", "--json"]])
def test_a_full_standard_output_is_named(tmp_path, command):
    # `memtint presets > file` on a full disk: the error says which file it could not write.
    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, "-m", "memtint.cli", *command], stdout=full, stderr=subprocess.PIPE,
                              text=True, timeout=120, cwd=tmp_path, env=dict(os.environ, COLUMNS="200"))
    assert_clean_error((done.returncode, "", done.stderr), "standard output: No space left on device")


def test_json_into_dev_null_writes_into_the_device(memtint):
    before = os.stat("/dev/null")
    code, _, err = memtint("dram", "--machine", "ddr4-2400", "--generate", "random", "--requests", "100",
                           "--json", "/dev/null")
    assert code == 0, err
    after = os.stat("/dev/null")
    assert stat.S_ISCHR(after.st_mode) and after.st_ino == before.st_ino


@pytest.mark.engine
def test_json_over_a_regular_file_keeps_it_on_failure(memtint, tmp_path):
    """A failed run leaves an existing output as it was (written through a temporary file)."""
    out = tmp_path / "old.json"
    out.write_text("old\n")
    code, _, _ = memtint("dram", "--machine", "ddr4-2400", "--generate", "random", "--requests", "100", "--json", out)
    assert code == 0 and out.read_text().startswith("{")
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_reproduce_out_is_checked_before_any_run(memtint):
    start = time.monotonic()
    assert_clean_error(memtint("reproduce", "--quick", "--out", "/proc/x"), "--out /proc/x")
    assert time.monotonic() - start < 20


def test_demo_out_is_checked_before_any_run(memtint, tmp_path):
    f = tmp_path / "file"
    f.write_text("keep\n")
    assert_clean_error(memtint("demo", "--out", f), "--out", "not a directory")
    assert f.read_text() == "keep\n"


def test_report_of_a_file_names_the_file_not_a_default_out(memtint, tmp_path):
    spec = tmp_path / "s.toml"
    spec.write_text('name = "x"\n')
    err = assert_clean_error(memtint("report", spec), "s.toml: is a file, not a sweep's result directory")
    assert "--out" not in err.split(":")[1]


def test_report_out_is_checked_before_reading(memtint, tmp_path):
    assert_clean_error(memtint("report", tmp_path, "--out", "/proc/x"), "--out /proc/x")


# --- limits and estimates, one rule for every command ---------------------------------------

def spec_file(tmp_path: Path, body: str, name: str = "s.toml") -> Path:
    p = tmp_path / name
    p.write_text(body)
    return p


PRODUCT = 'machines = ["i7-860"]\npolicies = ["buddy"]\ninstructions = 1000\nwarmup = 0\n'


def test_sweep_seed_beyond_the_store_is_refused(memtint, tmp_path):
    spec = spec_file(tmp_path, PRODUCT + 'mixes = [["light"]]\nseeds = [18446744073709551615]\n')
    assert_clean_error(memtint("sweep", spec, "--out", tmp_path / "o"), "s.toml", "seeds", "64-bit")


def test_sweep_with_a_billion_mixes_is_refused_at_once(memtint, tmp_path):
    spec = spec_file(tmp_path, PRODUCT + 'mixes = [{random = ["light", "stream"], size = 4, count = 1000000000}]\n')
    start = time.monotonic()
    assert_clean_error(memtint("sweep", spec, "--out", tmp_path / "o"), "mixes[0].count", "1,000,000")
    assert time.monotonic() - start < 20


def test_sweep_product_above_the_run_limit_is_refused(memtint, tmp_path):
    spec = spec_file(tmp_path, 'machines = ["i7-860"]\npolicies = ["buddy", "bpm"]\ninstructions = 1000\n'
                               'mixes = [{random = ["light"], size = 1, count = 1000000}]\n')
    assert_clean_error(memtint("sweep", spec, "--out", tmp_path / "o"), "2,000,000 runs")


@pytest.mark.parametrize("args, needle", [
    (["sweep", "{spec}", "--out", "{out}"], "instructions"),
    (["demo", "--instructions", "1000000000000000", "--out", "{out}"], "--instructions"),
    (["trace-stats", "light", "--instructions", "100000000000000"], "--instructions"),
])
def test_instruction_limit_is_the_same_everywhere(memtint, tmp_path, args, needle):
    spec = spec_file(tmp_path, 'machines = ["i7-860"]\npolicies = ["buddy"]\ninstructions = 1000000000000000\n'
                               'mixes = [["light"]]\n')
    args = [a.format(spec=spec, out=tmp_path / "o") for a in args]
    assert_clean_error(memtint(*args), needle, "10,000,000,000,000")


def test_long_sweep_is_announced_with_an_estimate(tmp_path):
    from memtint.limits import ANNOUNCE_SECONDS, sweep_seconds

    # 100 4-program runs of 10^9 instructions on 2 workers: far above the announcement threshold.
    assert sweep_seconds([(4, 10**9, 0)] * 100, 2) > ANNOUNCE_SECONDS
    assert sweep_seconds([(4, 1000, 0)], 2) < 1


# --- errors that were internal ---------------------------------------------------------------

def test_sweep_spec_with_a_non_utf8_byte(memtint, tmp_path):
    spec = tmp_path / "s.toml"
    spec.write_bytes(b'name = "ok"\nmixes = ["\xff"]\n')
    assert_clean_error(memtint("sweep", spec, "--out", tmp_path / "o"), "s.toml:2", "not UTF-8", "0xff")


@pytest.mark.parametrize("command", [["sweep", "s.toml", "--out", "o"], ["sim", "s.toml"]])
def test_a_toml_file_with_a_byte_order_mark_is_named(memtint, tmp_path, command):
    (tmp_path / "s.toml").write_bytes(b'\xef\xbb\xbfname = "ok"\n')
    assert_clean_error(memtint(*command), "s.toml:1", "byte-order mark")


def test_sim_config_with_a_non_utf8_byte(memtint, tmp_path):
    config = tmp_path / "c.toml"
    config.write_bytes(b'machine = "i7-860"\n\xfe = 1\n')
    assert_clean_error(memtint("sim", config), "c.toml:2", "not UTF-8")


def test_presets_with_stdout_closed(tmp_path):
    completed = subprocess.run(f"{sys.executable} -m memtint.cli presets >&-", shell=True, capture_output=True,
                               text=True, cwd=tmp_path, timeout=60)
    assert completed.returncode == 2
    assert completed.stderr.strip() == ("memtint: error: standard output is closed (started with >&-); send it to a "
                                        "file or /dev/null instead")


@pytest.fixture
def stored_sweep(memtint, tmp_path) -> tuple[Path, Path]:
    spec = spec_file(tmp_path, 'machines = ["i7-860"]\npolicies = ["buddy", "bpm"]\ninstructions = 1000\nwarmup = 0\n'
                               'mixes = [["light", "light"]]\n')
    out = tmp_path / "store"
    code, _, err = memtint("sweep", spec, "--out", out, "--jobs", "1")
    assert code == 0, err
    return spec, out


@pytest.mark.engine
def test_truncated_batch_is_named_with_its_remedy(memtint, stored_sweep):
    spec, out = stored_sweep
    batch = next((out / "batches").glob("*.parquet"))
    os.truncate(batch, 100)
    for args in (["sweep", spec, "--out", out], ["report", out]):
        line = assert_clean_error(memtint(*args), batch.name, "damaged result batch", "manifest.json")
        assert "internal error" not in line


@pytest.mark.engine
def test_a_report_file_that_links_to_the_store_is_refused(memtint, stored_sweep, tmp_path):
    # report/summary.md a symlink to the store's manifest: the report was renamed over it.
    _, out = stored_sweep
    manifest = out / "manifest.json"
    before = snapshot(manifest)
    report = tmp_path / "rep"
    report.mkdir()
    (report / "summary.md").symlink_to(manifest)
    assert_clean_error(memtint("report", out, "--out", report), "summary.md", "is an input")
    assert snapshot(manifest) == before


@pytest.mark.engine
@pytest.mark.parametrize("name", ["index.html", "weighted_speedup.png"])
def test_a_directory_where_a_report_file_goes_is_refused_before_writing(memtint, stored_sweep, tmp_path, name):
    _, out = stored_sweep
    report = tmp_path / "rep"
    (report / name).mkdir(parents=True)
    assert_clean_error(memtint("report", out, "--out", report), f"{name} is a directory")
    assert sorted(p.name for p in report.iterdir()) == [name]  # no plot written before the refusal


@pytest.mark.engine
def test_a_sweep_s_report_file_is_checked_before_its_runs(memtint, stored_sweep, tmp_path):
    _, out = stored_sweep
    before = snapshot(out / "manifest.json")
    (out / "report" / "index.html").unlink()
    (out / "report" / "index.html").mkdir()
    spec = spec_file(tmp_path, PRODUCT + 'mixes = [["stream", "light"]]\n', name="more.toml")
    assert_clean_error(memtint("sweep", spec, "--out", out), "index.html is a directory", "--no-report")
    assert snapshot(out / "manifest.json") == before  # nothing ran


@pytest.mark.parametrize("made, needle", [("report/index.html", "index.html is a directory"),
                                          ("results", "--out"), ("report", "")])
def test_demo_s_store_and_report_are_checked_before_its_runs(memtint, tmp_path, made, needle):
    out = tmp_path / "demo"
    target = out / made
    if made == "results" or made == "report":  # a file where a directory goes
        out.mkdir()
        target.write_text("keep\n")
    else:
        target.mkdir(parents=True)
    start = time.monotonic()
    line = assert_clean_error(memtint("demo", "--out", out, "--instructions", "1000"), needle)
    assert "out " + str(out) not in line.replace("--out", "")  # named as the option, not the API's 'out'
    assert time.monotonic() - start < 20 and not (out / "results" / "manifest.json").exists()


@pytest.mark.engine
@pytest.mark.parametrize("name", ["memspec.json", "x.json"])
def test_json_inside_the_drampower_export_is_refused(memtint, tmp_path, name):
    # --json DIR/memspec.json replaced the export's memspec with the statistics, exit 0.
    export = tmp_path / "dp"
    export.mkdir()
    assert_clean_error(memtint("dram", "--machine", "ddr4-2400", "--generate", "random", "--requests", "100",
                               "--export-drampower", export, "--json", export / name),
                       f"--json {export / name}: is inside --export-drampower")
    assert list(export.iterdir()) == []


def test_tiering_demo_s_files_are_checked_before_its_runs(memtint, tmp_path):
    (tmp_path / "t" / "tiering.png").mkdir(parents=True)
    assert_clean_error(memtint("demo", "--tiering", "--out", tmp_path / "t", "--instructions", "1000"),
                       "tiering.png is a directory")


@pytest.mark.engine
def test_missing_batch_is_named_with_its_reason(memtint, stored_sweep):
    _, out = stored_sweep
    batch = next((out / "batches").glob("*.parquet"))
    batch.unlink()
    assert_clean_error(memtint("report", out), batch.name, "listed in", "but missing")


@pytest.mark.engine
def test_file_size_limit_on_a_sweep_names_the_batch(tmp_path):
    spec = spec_file(tmp_path, PRODUCT + 'mixes = [["light", "light"]]\n')
    out = tmp_path / "store"
    script = ("import resource, signal, sys; signal.signal(signal.SIGXFSZ, signal.SIG_IGN); "
              "resource.setrlimit(resource.RLIMIT_FSIZE, (2000, 2000)); "
              "from memtint.cli import main; sys.exit(main(sys.argv[1:]))")
    completed = subprocess.run([sys.executable, "-c", script, "sweep", str(spec), "--out", str(out), "--jobs", "1"],
                               capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert completed.returncode == 2, completed.stderr
    assert "File too large" in completed.stderr and "batch" in completed.stderr
    assert "internal error" not in completed.stderr


@pytest.mark.engine
def test_file_size_limit_on_dram_json_names_the_file(tmp_path):
    out = tmp_path / "big.json"
    script = ("import resource, signal, sys; signal.signal(signal.SIGXFSZ, signal.SIG_IGN); "
              "resource.setrlimit(resource.RLIMIT_FSIZE, (1000, 1000)); "
              "from memtint.cli import main; sys.exit(main(sys.argv[1:]))")
    completed = subprocess.run([sys.executable, "-c", script, "dram", "--machine", "ddr4-2400", "--generate",
                                "random", "--requests", "100", "--json", str(out)],
                               capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert completed.returncode == 2, completed.stderr
    assert f"--json {out}: cannot write: File too large" in completed.stderr
    assert not out.exists()


# --- accepted silently before ----------------------------------------------------------------

def test_compare_runs_each_policy_once(memtint):
    assert_clean_error(memtint("compare", "--machine", "i7-860", "--mix", "light,light", "--policies",
                               "buddy,buddy,bpm"), "buddy given more than once")


@pytest.mark.engine
@pytest.mark.parametrize("cache", ["/proc/x", "file"])
def test_unusable_cache_dir_is_warned_about(tmp_path, cache):
    if cache == "file":
        cache = tmp_path / "afile"
        cache.write_text("")
    env = dict(os.environ, MEMTINT_CACHE_DIR=str(cache))
    completed = subprocess.run([sys.executable, "-m", "memtint.cli", "compare", "--machine", "i7-860", "--mix",
                                "light,light", "--instructions", "1000", "--warmup", "0"],
                               capture_output=True, text=True, timeout=120, cwd=tmp_path, env=env)
    assert completed.returncode == 0, completed.stderr
    warnings = [line for line in completed.stderr.splitlines() if "alone runs are not cached" in line]
    assert len(warnings) == 1 and str(cache) in warnings[0] and "MEMTINT_CACHE_DIR" in warnings[0]


# --- a killed sweep leaves nothing running ----------------------------------------------------

def children(pid: int) -> set[int]:
    """Every descendant of `pid` (through /proc/PID/task/*/children)."""
    found: set[int] = set()
    todo = [pid]
    while todo:
        p = todo.pop()
        try:
            tasks = os.listdir(f"/proc/{p}/task")
        except OSError:
            continue
        for t in tasks:
            try:
                with open(f"/proc/{p}/task/{t}/children") as f:
                    kids = {int(k) for k in f.read().split()}
            except OSError:
                continue
            todo.extend(kids - found)
            found |= kids
    return found


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.engine
@pytest.mark.skipif(not os.path.exists("/proc/self/task"), reason="needs Linux /proc")
def test_sigkill_of_a_sweep_ends_its_workers(tmp_path):
    spec = spec_file(tmp_path, 'machines = ["i7-860"]\npolicies = ["buddy", "bpm"]\ninstructions = 2000000000\n'
                               'warmup = 0\ncache = false\nmixes = [["stream", "copy"], ["copy", "stream"]]\n')
    proc = subprocess.Popen([sys.executable, "-m", "memtint.cli", "sweep", str(spec), "--out", str(tmp_path / "o"),
                             "--jobs", "2"], cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        workers: set[int] = set()
        while time.monotonic() < deadline and len(workers) < 2:
            time.sleep(0.5)
            workers = {c for c in children(proc.pid) if alive(c)}
        assert len(workers) >= 2, f"the sweep started {len(workers)} worker(s)"
        time.sleep(2)  # the workers are simulating
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        deadline = time.monotonic() + 10
        while any(alive(w) for w in workers) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not [w for w in workers if alive(w)], "workers outlived the killed sweep"
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass



# --- numbers JSON cannot carry are refused with their key ------------------------------------

def test_set_value_1e400_names_the_key(memtint):
    assert_clean_error(memtint("dram", "--machine", "ddr4-2400", "--generate", "random", "--requests", "100",
                               "--set", "controller.read_queue=1e400"), "controller.read_queue", "not a finite number")


@pytest.mark.parametrize("settings, needle", [
    (["os.policy=bpm", "os.policy.x=1"], "--set os.policy.x: 'os.policy' is a value"),
    (["controller.read_queue=8", "controller.read_queue.a.b=1"],
     "--set controller.read_queue.a.b: 'controller.read_queue' is a value")])
def test_a_set_below_a_value_names_the_key_as_given(memtint, tmp_path, settings, needle):
    # The os. prefix was dropped: "--set policy.x: 'policy' is a value", a key no one wrote.
    run = tmp_path / "run.toml"
    run.write_text('machine = "i7-860"\nprograms = ["light"]\ninstructions = 1000\n')
    assert_clean_error(memtint("sim", run, *[a for s in settings for a in ("--set", s)]), needle)


@pytest.mark.parametrize("body, needle", [
    ('machine = "i7-860"\nmachine = "i7-860"\n', "run.toml:2: machine: given twice"),
    ('machine = "i7-860"\n[os]\n[os]\n', "run.toml:3: Cannot declare ('os',) twice (column"),
    ('machine = \n', "run.toml:1: Invalid value (column")])
def test_a_toml_syntax_error_gives_file_line_and_key(memtint, tmp_path, body, needle):
    # tomllib's own wording: "run.toml: Cannot overwrite a value (at line 2, column 19)", no key.
    run = tmp_path / "run.toml"
    run.write_text(body)
    line = assert_clean_error(memtint("sim", run), needle)
    assert "(at line" not in line


def test_nan_in_a_run_file_names_the_file_line_and_key(memtint, tmp_path):
    config = tmp_path / "c.toml"
    config.write_text('machine = "i7-860"\nprograms = ["light"]\ninstructions = 1000\n'
                      '[overrides.controller]\nwrite_high_watermark = nan\n')
    assert_clean_error(memtint("sim", config), "c.toml:5", "write_high_watermark", "not a finite number")


# --- --set reaches the OS model's settings too ------------------------------------------------

@pytest.mark.engine
def test_set_reaches_os_settings_in_compare_and_sim(memtint, tmp_path):
    # os.colour_split is documented in docs/stats.md; `--set` used to reach the machine table only.
    code, out, err = memtint("compare", "--machine", "i7-860", "--mix", "light,light", "--instructions", "1000",
                             "--warmup", "0", "--policies", "bpm", "--set", "os.colour_split=strided", "--json", "-")
    assert code == 0, err
    config = tmp_path / "c.toml"
    config.write_text('machine = "i7-860"\nprograms = ["light", "light"]\ninstructions = 1000\n[os]\npolicy = "bpm"\n')
    code, out, err = memtint("sim", config, "--set", "os.colour_split=strided", "--json", "-")
    assert code == 0, err
    assert '"colour_split": "strided"' in out
    assert_clean_error(memtint("sim", config, "--set", "os.colour_splt=strided"), "os.colour_splt", "unknown key")
    assert_clean_error(memtint("compare", "--machine", "i7-860", "--mix", "light", "--set", "os.policy=bpm"),
                       "--set os.policy", "come from --policies")
    assert_clean_error(memtint("dram", "--machine", "ddr4-2400", "--generate", "random", "--requests", "10",
                               "--set", "os.colour_split=strided"), "--set os.colour_split", "without an OS model")


@pytest.mark.engine
def test_sweep_takes_overrides_and_set(memtint, tmp_path):
    from memtint.sweep import load_results

    spec = spec_file(tmp_path, 'machines = ["i7-860"]\npolicies = ["bpm"]\ninstructions = 2000\nwarmup = 0\n'
                               'mixes = [["stream", "light"]]\n')
    plain, changed = tmp_path / "plain", tmp_path / "changed"
    assert memtint("sweep", spec, "--out", plain, "--jobs", "1")[0] == 0
    code, _, err = memtint("sweep", spec, "--out", changed, "--jobs", "1", "--set", "os.colour_split=strided",
                           "--set", "controller.read_queue=4")
    assert code == 0, err
    a, b = load_results(plain), load_results(changed)
    assert set(a["config_hash"]).isdisjoint(set(b["config_hash"]))  # the settings are part of the run
    assert '"colour_split": "strided"' in b["os"].iloc[0]
    assert_clean_error(memtint("sweep", spec, "--out", tmp_path / "x", "--set", "controller.read_queu=4"),
                       "read_queu")
    assert_clean_error(memtint("sweep", spec, "--out", tmp_path / "x", "--set", "os.policy=buddy"),
                       "--set os.policy")


# --- errors name the key, not a column of the engine's JSON ----------------------------------

RUN = 'machine = "i7-860"\nprograms = ["light", "light"]\ninstructions = 1000\n'


@pytest.mark.engine
@pytest.mark.parametrize("body, needles", [
    ('[os]\ncolours = [[-1], [1]]\n', ["c.toml", "os.colours", "-1"]),
    ('[os]\nexclude_bits = [-3]\n', ["c.toml", "exclude_bits", "-3"]),
    ('[os.sched]\nswitch_cycles = -5\n', ["c.toml", "switch_cycles", "-5"]),
    ('[overrides.controller]\nwrite_high_watermark = nan\n', ["c.toml", "write_high_watermark"]),
    ('[overrides.cpu]\nfrequency_ghz = nan\n', ["c.toml", "frequency_ghz"]),
    ('[os]\npolicy = "mcp"\n[os.mcp]\nmpki_threshold = nan\n', ["c.toml", "mpki_threshold"]),
])
def test_run_file_values_name_their_key(memtint, tmp_path, body, needles):
    config = tmp_path / "c.toml"
    config.write_text(RUN + body)
    line = assert_clean_error(memtint("sim", config), *needles)
    assert "line 1 column" not in line


@pytest.mark.engine
@pytest.mark.parametrize("args, needles", [
    (["--set", "controller.read_queue=1e400"], ["controller.read_queue"]),
    (["--set", "cache.llc.size_bytes=1e400"], ["cache.llc.size_bytes"]),
    (["--footprint", "1" + "0" * 30], ["footprint"]),
    (["--seed", str(2**64)], ["seed"]),
    (["--outstanding", "1" + "0" * 20], ["outstanding"]),
])
def test_dram_values_name_their_key(memtint, args, needles):
    line = assert_clean_error(memtint("dram", "--machine", "ddr4-2400", "--generate", "random", "--requests", "100",
                                      *args), *needles)
    assert "line 1 column" not in line


@pytest.mark.engine
def test_trace_stats_at_the_limit_announces_its_estimate(tmp_path):
    """10^13 instructions is the limit itself: accepted, and announced with its duration first."""
    proc = subprocess.Popen([sys.executable, "-m", "memtint.cli", "trace-stats", "light", "--instructions",
                             "10000000000000", "--machine", "i7-860"], cwd=tmp_path, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        first = proc.stderr.readline()
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    assert first.startswith("memtint: this run will take about") and "days" in first, first


@pytest.mark.engine
@pytest.mark.parametrize("manifest, needle", [
    ('{"format": 1}', '"batches" is missing'),
    ('{"x": 1}', '"format" is missing'),
    ('{"format": 2, "batches": [], "sweeps": []}', "store format 2, this memtint reads format 1"),
    ("[]", "not a sweep manifest"),
    ('{"format": 1, "batches": "x", "sweeps": []}', '"batches" is not a list'),
    ('{"format": 1, "batches": [{"rows": 3}], "sweeps": []}', 'batches[0] has no "file"'),
    # A batch listed twice counted its runs twice in the report's tables and findings.
    ('{"format": 1, "batches": [{"file": "batches/b.parquet"}, {"file": "batches/./b.parquet"}], "sweeps": []}',
     "batches[1] lists 'batches/./b.parquet' as batches[0] does"),
    # Nested past Python's recursion limit: an internal error before.
    pytest.param("[" * 100_000, "not a readable sweep manifest", id="nested"),
])
def test_a_hand_edited_manifest_is_named_not_an_internal_error(memtint, stored_sweep, manifest, needle):
    spec, out = stored_sweep
    (out / "manifest.json").write_text(manifest)
    assert_clean_error(memtint("report", out), "manifest.json", needle)
    assert_clean_error(memtint("sweep", spec, "--out", out), "manifest.json", needle)
    assert (out / "manifest.json").read_text() == manifest


@pytest.mark.engine
@pytest.mark.parametrize("tail, args, needles", [
    # The key a value came from: a --set, [overrides], the policies list; not "os" for all.
    ("", ["--set", "controller.nope=1"], ["--set controller.nope=1:", "controller.nope: unknown key"]),
    ('[overrides.controller]\nwrite_handlin = "ramulator"\n', [], ["s.toml:7: overrides:", "controller.write_handlin"]),
    ('machine_variants = false\npolicies = ["buddy", "bpm-plus"]\n', [], ["s.toml:6: policies:", "policy 'bpm-plus'"]),
    # An entry given twice runs once: refused, as compare refuses it.
    ('policies = ["buddy", "bpm", "buddy"]\n', [], ["s.toml:5: policies[2]:", "given twice (also policies[0])"]),
    # One setting two ways: refused, not one of them ignored.
    ('mapping = "i7-860"\n[overrides.dram]\nmapping = "i7-860-bpm-plus"\n', [], ["mapping", "one would be ignored"]),
])
def test_sweep_errors_name_where_the_value_came_from(memtint, tmp_path, tail, args, needles):
    head = 'machines = ["i7-860"]\ninstructions = 1000\nwarmup = 0\nmixes = [["light", "light"]]\n'
    if "policies" not in tail:
        head += 'policies = ["buddy"]\n'
    # top-level keys before any table
    lines = tail.split("\n[", 1)
    text = head + lines[0] + ("\n[" + lines[1] if len(lines) > 1 else "")
    (tmp_path / "s.toml").write_text(text)
    assert_clean_error(memtint("sweep", "s.toml", "--out", "o", *args), *needles)


@pytest.mark.engine
def test_a_sweep_spec_error_names_the_line_of_its_key(memtint, tmp_path):
    # Only baseline's errors had a line: the others named the key alone, a [[mixes]] table's
    # program by its index, an [os] key by the table.
    head = 'machines = ["i7-860"]\ninstructions = 1000\npolicies = ["buddy", "bpm"]\n'
    cases = [
        ('[[mixes]]\nprograms = ["stream", "light"]\n[[mixes]]\nprograms = ["stream", "nope"]\n',
         "s.toml:7: mixes[1].programs[1]: nope"),
        ('mixes = [["stream", "light"],\n  ["stream", "nope"]]\n', "s.toml:5: mixes[1][1]: nope"),
        ('mixes = [["stream", "light"]]\n[os]\nseed = 1\ncolour_split = "sideways"\n',
         "s.toml:7: os: "),
        ('mixes = [["stream", "light"]]\n[os]\npolicy = "buddy"\n', "s.toml:6: os.policy: "),
    ]
    for tail, needle in cases:
        (tmp_path / "s.toml").write_text(head + tail)
        assert_clean_error(memtint("sweep", tmp_path / "s.toml", "--out", tmp_path / "o"), needle)
    # A key the second [[mixes]] table does not take: its line, not the table's header.
    (tmp_path / "s.toml").write_text(head + cases[0][0].replace('"nope"]', '"light"]\ncount = 3'))
    assert_clean_error(memtint("sweep", tmp_path / "s.toml", "--out", tmp_path / "o"), "s.toml:8: mixes[1]: ")
    from memtint.toml_files import error_line
    text = head + cases[0][0]
    assert [error_line(text, m) for m in ("policies[1]: x", "mixes[1]: x", "instructions: x", "nowhere")] == \
        [":3", ":6", ":2", ""]


def test_an_inline_arrays_element_is_found_past_strings_comments_and_tables():
    from memtint.toml_files import error_line, inline_element_line
    text = ('x = 1\nmixes = [ # a comment with [brackets], and commas\n'
            '  "a,b]", \'c[d\',\n'  # elements 0 and 1 on line 3: brackets and commas in strings
            '  { preset = "p", note = "}," },\n'  # 2: an inline table holding a comma and a brace
            '  ["s", "l",\n'  # 3 begins on line 5; its element 2 on line 6
            '   """multi\nline""", "z"],\n'  # 3[3] after a string of two lines: line 7
            ']\npolicies = ["buddy", "bpm"]\n')
    assert [inline_element_line(text, "mixes", i) for i in ([0], [1], [2], [3], [3, 2], [3, 3], [9], [3, 9])] == \
        [":3", ":3", ":4", ":5", ":6", ":7", "", ":5"]
    assert inline_element_line(text, "policies", [1]) == ":9" and inline_element_line(text, "x", [0]) == ""
    assert error_line(text, "mixes[3][3]: unknown profile") == ":7"
    assert error_line(text, "mixes[9]: x") == ":2"  # no such element: the key's line


@pytest.mark.engine
def test_compare_keeps_an_exclusion_the_baseline_does_not_colour_by_off_its_warnings(memtint):
    # --set os.* reaches every policy compared: buddy's "changes none of its colours" fired on every such run.
    code, out, err = memtint("compare", "--machine", "i7-860", "--mix", "stream,light", "--policies",
                             "buddy,cache-only", "--instructions", "20000", "--warmup", "0", "--no-cache",
                             "--set", "os.exclude_bits=[16]")
    assert code == 0, err
    assert "buddy: os.exclude_bits" not in out + err, out + err


@pytest.mark.engine
def test_a_colour_baseline_on_a_machine_of_nodes_is_blamed_on_the_baseline(memtint, tmp_path):
    """The alone runs' policy, refused by a two-node machine, was blamed on `policies` (sweep) or
    on `os.policy` (compare), neither of which the user had got wrong."""
    (tmp_path / "s.toml").write_text('machines = ["tiering-2to1"]\npolicies = ["local", "bw-interleave"]\n'
                                     'instructions = 1000\nbaseline = "buddy"\nmixes = [["stream", "light"]]\n')
    line = assert_clean_error(memtint("sweep", tmp_path / "s.toml", "--out", tmp_path / "o"),
                              "s.toml:4: baseline: machine 'tiering-2to1': policy 'buddy' places pages by colour",
                              "(the alone runs' policy)")
    assert "policies:" not in line and "os.policy" not in line
    line = assert_clean_error(memtint("compare", "--machine", "tiering-2to1", "--mix", "stream,light", "--policies",
                                      "local", "--baseline", "buddy", "--instructions", "1000", "--warmup", "0",
                                      "--no-cache"),
                              "--baseline buddy: policy 'buddy' places pages by colour", "(the alone runs' policy)")
    assert "os.policy" not in line
    # The same refusal of a policy compared: its option, not a key of no file.
    line = assert_clean_error(memtint("compare", "--machine", "tiering-2to1", "--mix", "stream,light", "--policies",
                                      "local,bpm", "--instructions", "1000", "--warmup", "0", "--no-cache"),
                              "--policies local,bpm: policy 'bpm' places pages by colour")
    assert "os.policy" not in line
    from memtint.api import MemtintError
    from memtint.comparison import compare

    with pytest.raises(MemtintError, match=r"^baseline: policy 'buddy' places pages by colour"):
        compare("tiering-2to1", ["stream", "light"], ["local"], baseline="buddy", instructions=1000, warmup=0,
                use_cache=False)


@pytest.mark.parametrize("args, needle", [
    (["compare", "--machine", "nothere.toml", "--mix", "stream,light"], "--machine nothere.toml: no such machine file"),
    (["compare", "--machine", "i7-860", "--mapping", "nothere.toml", "--mix", "stream,light"],
     "--mapping nothere.toml: no such mapping file"),
    (["dram", "--machine", "nothere.toml", "--generate", "random"], "--machine nothere.toml: no such machine file"),
    (["dram", "--machine", "i7-860", "--mapping", "sub/nothere", "--generate", "random"],
     "--mapping sub/nothere: no such mapping file"),
    (["advise", "stream", "light", "--machine", "nothere.toml"], "--machine nothere.toml: no such machine file"),
    (["trace-stats", "stream", "--machine", "nothere.toml"], "--machine nothere.toml: no such machine file"),
    (["probe", "--simulate", "nothere.toml"], "--simulate nothere.toml: no such machine file"),
    (["compare", "--machine", "adir.toml", "--mix", "stream,light"], "--machine adir.toml: a directory, not a machine file"),
])
def test_a_machine_or_mapping_file_that_is_not_there_is_named_by_its_option(memtint, tmp_path, args, needle):
    """"memtint: error: nothere.toml: No such file or directory" named neither the option nor the
    kind of file (sim's run file said "no such machine file")."""
    (tmp_path / "adir.toml").mkdir()  # the command runs in tmp_path
    assert_clean_error(memtint(*args), needle, "'memtint presets' lists")


def test_an_rt_task_sets_machine_file_that_is_not_there_is_named_with_its_line(memtint, tmp_path):
    source = Path(__file__).resolve().parents[2] / "configs" / "runs" / "colored-refresh.toml"
    lines = source.read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("machine"))
    lines[at] = 'machine = "nothere.toml"'
    (tmp_path / "rt.toml").write_text("\n".join(lines) + "\n")
    assert_clean_error(memtint("rt", tmp_path / "rt.toml"),
                       f"rt.toml:{at + 1}: machine: {tmp_path / 'nothere.toml'}: no such machine file")


@pytest.mark.engine
def test_compare_refuses_a_scheduler_given_two_ways(memtint):
    assert_clean_error(memtint("compare", "--machine", "i7-860", "--mix", "light,light", "--instructions", "1000",
                               "--warmup", "0", "--policies", "buddy", "--scheduler", "fcfs", "--set",
                               "controller.scheduler=fr-fcfs"), "scheduler", "'fcfs' here", "one would be ignored")


def test_an_output_through_a_redirected_stdout_is_refused_and_the_file_kept(tmp_path, trace):
    """`--json /dev/stdout >> log` renamed the finished output over `log`, losing what it held.
    Refused now, whatever link reaches the file; a file living under /dev/shm is written."""
    log = tmp_path / "log"
    log.write_text("precious\n")
    for path in ("/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"):
        with open(log, "a") as out:
            done = subprocess.run([sys.executable, "-m", "memtint.cli", "trace-stats", str(trace), "--json", path],
                                  stdout=out, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
        assert done.returncode == 2 and "names the file" in done.stderr and str(log) in done.stderr, done.stderr
        assert log.read_text() == "precious\n", path
    if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK):
        shm = Path("/dev/shm") / f"memtint-test-{os.getpid()}.json"
        try:
            for _ in range(2):  # a second run finds the file there and writes it again
                done = subprocess.run([sys.executable, "-m", "memtint.cli", "trace-stats", str(trace), "--json",
                                       str(shm)], capture_output=True, text=True, cwd=tmp_path)
                assert done.returncode == 0 and shm.stat().st_size > 0, done.stderr
        finally:
            shm.unlink(missing_ok=True)


def test_an_output_through_stdout_into_a_pipe_is_written_into_it(tmp_path, trace):
    """`--json /dev/stdout | cat`: a pipe behind the link is a stream, as a FIFO is (it was
    refused as a file in /proc)."""
    before = sorted(os.listdir(tmp_path))
    for path in ("/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"):
        done = subprocess.run([sys.executable, "-m", "memtint.cli", "trace-stats", str(trace), "--json", path],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
        assert done.returncode == 0, (path, done.stderr)
        first, _ = json.JSONDecoder().raw_decode(done.stdout)
        assert first and first[0]["instructions"] > 0, path
    assert sorted(os.listdir(tmp_path)) == before


def test_convert_takes_files_not_dash_or_a_pipe(memtint, tmp_path, trace):
    """`-` is not stdout or stdin for convert (it made a file named '-'), and a pipe as input
    failed with "Illegal seek": both refused, naming the operand."""
    code, _, err = memtint("convert", "--to", "ramulator", trace, "-")
    assert_clean_error((code, "", err), "OUT -: convert reads and writes files")
    assert not (tmp_path / "-").exists()
    fifo = tmp_path / "in.fifo"
    os.mkfifo(fifo)
    code, _, err = memtint("convert", fifo, tmp_path / "x.mtt")
    assert_clean_error((code, "", err), f"IN {fifo}: is not a regular file")
