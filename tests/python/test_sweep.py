"""`memtint sweep` and `memtint.sweep`: pool results equal one-by-one runs, resume, failures,
specification errors."""

from __future__ import annotations

import json
import re
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

import pytest

import memtint
from memtint import api, run_sim
from memtint.sweep import load_results, parse_spec, policy_summary, run_sweep
from memtint.sweep.runs import expand

INSTRUCTIONS = 100_000

# 3 mixes x 2 policies x 2 seeds = 12 runs.
SPEC_TOML = f"""
name = "t"
machines = ["i7-860"]
policies = ["buddy", "bpm"]
instructions = {INSTRUCTIONS}
seeds = [1, 2]

[[mixes]]
programs = ["stream", "light", "light", "light"]

[[mixes]]
programs = ["random", "copy", "light", "light"]

[[mixes]]
classes = [{{ from = ["copy"], n = 1 }}, {{ from = ["stream", "random"], n = 1 }}, {{ from = ["light"], n = 2 }}]
seed = 5
"""

# A large-footprint random program confined to one colour under strict colouring: runs out of frames.
BAD_PROGRAM = "random:footprint_bytes=1073741824,reads_pki=200"
BAD_OS = {"strict": True, "colours": [[0], [1]]}


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMTINT_CACHE_DIR", str(tmp_path / "cache"))


def write(tmp_path, text: str, name: str = "spec.toml"):
    path = tmp_path / name
    path.write_text(text)
    return path


def runs_table(frame):
    return frame.drop_duplicates("config_hash").set_index("config_hash")


@pytest.mark.engine
def test_pool_sweep_equals_the_same_runs_one_by_one(tmp_path, monkeypatch):
    spec_path = write(tmp_path, SPEC_TOML)
    summary = memtint.sweep(spec_path, out=tmp_path / "out", jobs=2, progress=False)
    assert (summary.total, summary.done, summary.failed, summary.skipped) == (12, 12, 0, 0)
    frame = memtint.load_results(tmp_path / "out")
    assert len(frame) == 12 * 4 and (frame["status"] == "ok").all()
    assert frame["memtint_version"].eq(memtint.__version__).all()

    # The summary table's numbers are those of the stored runs.
    table = {row["policy"]: row for row in policy_summary(frame)}
    per_run = runs_table(frame)
    for policy in ("buddy", "bpm"):
        group = per_run[per_run["policy"] == policy]
        assert table[policy]["runs"] == 6 and table[policy]["failed"] == 0
        assert table[policy]["weighted_speedup_mean"] == pytest.approx(group["weighted_speedup"].mean())
        assert table[policy]["weighted_speedup_max"] == pytest.approx(group["weighted_speedup"].max())
        assert table[policy]["maximum_slowdown_mean"] == pytest.approx(group["maximum_slowdown"].mean())

    # One by one, in this process, with a fresh alone cache: nothing is shared with the sweep.
    monkeypatch.setenv("MEMTINT_CACHE_DIR", str(tmp_path / "other-cache"))
    runs = runs_table(frame)
    for run in expand(parse_spec(tomllib.loads(SPEC_TOML))):
        alone = memtint.compare(run.machine, list(run.programs), [run.policy], instructions=run.instructions,
                                seed=run.seed)["policies"][0]
        stored = runs.loc[run.config_hash]
        assert stored["policy"] == run.policy and stored["seed"] == run.seed
        for key in ("weighted_speedup", "harmonic_speedup", "maximum_slowdown"):
            assert stored[key] == pytest.approx(alone[key], rel=1e-12), key
        assert stored["mix_row_buffer_miss_rate"] == pytest.approx(alone["row_buffer_miss_rate"], rel=1e-12)
        cores = frame[frame["config_hash"] == run.config_hash].sort_values("core")
        assert list(cores["slowdown"]) == pytest.approx([c["slowdown"] for c in alone["cores"]], rel=1e-12)
        assert list(cores["ipc_alone"]) == pytest.approx([c["ipc_alone"] for c in alone["cores"]], rel=1e-12)


@pytest.mark.engine
def test_sweeps_store_dram_energy_and_older_batches_load_without_it(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    spec = SPEC_TOML.replace('machines = ["i7-860"]', 'machines = ["ddr4-2400"]').replace("seeds = [1, 2]", "seeds = [1]")
    memtint.sweep(write(tmp_path, spec), out=tmp_path / "out", jobs=2, progress=False)
    frame = memtint.load_results(tmp_path / "out")
    runs = runs_table(frame)
    assert (runs["dram_energy_nj"] > 0).all()
    run = expand(parse_spec(tomllib.loads(spec)))[0]
    alone = memtint.compare(run.machine, list(run.programs), [run.policy], instructions=run.instructions,
                            seed=run.seed)["policies"][0]
    assert runs.loc[run.config_hash]["dram_energy_nj"] == pytest.approx(alone["dram_energy_nj"], rel=1e-12)
    # A batch written before the column existed still loads, with the column empty.
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    first = tmp_path / "out" / manifest["batches"][0]["file"]
    old = pq.read_table(first)
    pq.write_table(old.drop_columns(["dram_energy_nj"]), first)
    assert isinstance(old, pa.Table)
    frame = memtint.load_results(tmp_path / "out")
    assert frame["dram_energy_nj"].isna().any() and len(frame) == len(runs) * 4


@pytest.mark.engine
def test_interrupted_sweep_resumes_without_redoing_stored_runs(tmp_path):
    spec_path = write(tmp_path, SPEC_TOML)
    out = tmp_path / "out"
    executed: list[int] = []

    def count(phase, done, total):
        if phase == "runs":
            executed.append(done)

    first = run_sweep(spec_path, out, jobs=2, limit=5, batch_size=2, progress=False, on_progress=count)
    assert (first.done, first.skipped, first.remaining) == (5, 0, 7)
    assert len(executed) == 5
    stored_first = set(load_results(out)["config_hash"])
    assert len(stored_first) == 5

    executed.clear()
    second = run_sweep(spec_path, out, jobs=2, progress=False, on_progress=count)
    assert (second.done, second.skipped, second.remaining) == (7, 5, 0)
    assert len(executed) == 7  # only the missing runs executed
    frame = load_results(out)
    assert frame["config_hash"].nunique() == 12 and len(frame) == 48

    # Drop one stored batch from the manifest (as if it had never been written): exactly its runs rerun.
    manifest = json.loads((out / "manifest.json").read_text())
    dropped = manifest["batches"].pop(0)
    (out / "manifest.json").write_text(json.dumps(manifest))
    executed.clear()
    third = run_sweep(spec_path, out, jobs=2, progress=False, on_progress=count)
    assert third.done == dropped["runs"] and third.skipped == 12 - dropped["runs"]
    assert load_results(out)["config_hash"].nunique() == 12


@pytest.mark.engine
def test_a_script_sweeping_outside_the_main_guard_is_told_to_add_it(tmp_path):
    # The spawned workers import the script: each called memtint.sweep again and died with a
    # multiprocessing traceback, and every run failed with "terminated abruptly" and nothing else.
    import subprocess
    import sys

    script = tmp_path / "unguarded.py"
    script.write_text(
        "import memtint\n"
        "spec = {'machines': ['i7-860'], 'mixes': [['light', 'light']], 'policies': ['buddy'],\n"
        "        'instructions': [20000], 'seeds': [1], 'warmup': 0}\n"
        "s = memtint.sweep(spec, out='res', jobs=1, progress=False)\n"
        "print('failed', s.failed)\n")
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert "put the call under 'if __name__ == \"__main__\":'" in done.stderr, done.stderr
    assert "failed 1" in done.stdout, done.stdout
    errors = load_results(tmp_path / "res")["error"].dropna()
    assert len(errors) and errors.str.contains("outside 'if __name__").all(), list(errors)
    # Its report is all dashes: the command says why.
    done = subprocess.run([sys.executable, "-m", "memtint.cli", "report", "res"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0 and "1 runs (1 failed)" in done.stdout, done.stdout
    assert "none of the 1 runs succeeded" in done.stderr and "terminated abruptly" in done.stderr, done.stderr
    # And the report says it too (only the terminal did).
    for page in ("report/summary.md", "report/index.html"):
        text = (tmp_path / "res" / page).read_text()
        assert "None of the 1 run succeeded" in text and "terminated abruptly" in text and "of 1 mix " in text, page


def test_failed_run_is_recorded_and_the_cli_exits_non_zero(memtint, tmp_path):
    # The failing configuration really fails on its own.
    with pytest.raises(api.MemtintError, match="no free frame"):
        run_sim("i7-860", [BAD_PROGRAM, "light"], instructions=INSTRUCTIONS, policy="bpm", os_options=BAD_OS)
    spec = write(tmp_path, f"""
instructions = {INSTRUCTIONS}
[[run]]
machine = "i7-860"
programs = ["stream", "light"]
policy = "bpm"
[[run]]
machine = "i7-860"
programs = ["{BAD_PROGRAM}", "light"]
policy = "bpm"
os = {{ strict = true, colours = [[0], [1]] }}
[[run]]
machine = "i7-860"
programs = ["light", "copy"]
policy = "buddy"
""")
    code, out, err = memtint("sweep", spec, "--out", tmp_path / "out", "--jobs", "2")
    assert code == 1, err
    assert "Traceback" not in err and "failed" in err and "no free frame" in err
    assert f"({BAD_PROGRAM}|light / bpm on i7-860, seed 1) failed: " in err  # which run, not only its hash
    assert "1 failed" in out
    frame = load_results(tmp_path / "out")
    runs = runs_table(frame)
    assert sorted(runs["status"]) == ["failed", "ok", "ok"]
    bad = runs[runs["status"] == "failed"].iloc[0]
    assert "no free frame" in bad["error"] and bad["program"] == BAD_PROGRAM
    assert frame[frame["status"] == "failed"]["weighted_speedup"].isna().all()
    # Rerun: the successful runs are skipped, the failed one is retried (and fails again).
    code, out, err = memtint("sweep", spec, "--out", tmp_path / "out")
    assert code == 1 and "1 run(s) done (1 failed), 2 already stored" in out


def test_a_sweep_ends_with_its_report(memtint, tmp_path, clean_error):
    # An experiment ends with a table in the terminal and a report on disk: DIR/report, this
    # sweep's runs, with what the numbers mean.
    spec = write(tmp_path, f"""
machines = ["i7-860"]
policies = ["buddy", "bpm"]
instructions = {INSTRUCTIONS}
warmup = 0
mixes = [["stream", "light"], ["copy", "light"]]
""")
    code, out, err = memtint("sweep", spec, "--out", tmp_path / "out", "--jobs", "2")
    assert code == 0, err
    report = tmp_path / "out" / "report"
    assert {"index.html", "summary.md", "weighted_speedup.png"} <= {p.name for p in report.iterdir()}
    flat = " ".join(out.split())
    assert "bpm: weighted speedup" in flat and f"Report: {report / 'index.html'}" in flat
    assert "of 2 mixes" in (report / "summary.md").read_text()
    code, out, err = memtint("sweep", spec, "--out", tmp_path / "quiet", "--no-report", "--limit", "1")
    assert code == 0 and not (tmp_path / "quiet" / "report").exists() and "Report:" not in out, err
    assert "1 of 4 runs" in out, out  # the table holds the runs stored so far, not the spec's 4
    code, out, err = memtint("sweep", spec, "--out", tmp_path / "quiet", "--no-report")
    assert code == 0 and "· 4 runs ·" in out, out
    # A report that would write over an input is refused before anything runs.
    inside = tmp_path / "quiet" / "report"
    inside.mkdir()
    (inside / "summary.md").write_text(spec.read_text())
    clean_error(memtint("sweep", inside / "summary.md", "--out", tmp_path / "quiet"), "summary.md, an input",
                "--no-report")
    assert (inside / "summary.md").read_text() == spec.read_text()


MACHINE_POLICIES = 'machines = ["i7-860"]\npolicies = ["bpm"]\ninstructions = 1000\n'


@pytest.mark.engine
@pytest.mark.parametrize(
    "text,needles",
    [
        (MACHINE_POLICIES + 'mixes = [["stream"]]\nturbo = true\n', ["'turbo'", "sweep specification"]),
        (MACHINE_POLICIES + '[[mixes]]\nprograms = ["stream"]\ncolour = 1\n', ["mixes[0]", "'colour'"]),
        ('machines = ["i7-861"]\npolicies = ["bpm"]\ninstructions = 1000\nmixes = [["stream"]]\n',
         ["machines[0]", "unknown machine 'i7-861'"]),
        ('machines = ["i7-860"]\npolicies = ["bpm", "bmp"]\ninstructions = 1000\nmixes = [["stream"]]\n',
         ["policies[1]", "'bmp'"]),
        (MACHINE_POLICIES + 'mixes = [["stream", "strem"]]\n', ["mixes[0][1]", "strem", "not a built-in"]),
        (MACHINE_POLICIES + '[[mixes]]\nprograms = ["nosuch.trace"]\n', ["mixes[0].programs[0]", "nosuch.trace"]),
        ('machines = ["i7-860"]\npolicies = []\ninstructions = 1000\nmixes = [["stream"]]\n',
         ["policies", "empty"]),
        (MACHINE_POLICIES + 'mixes = [["stream"]]\nseeds = []\n', ["seeds", "empty"]),
        (MACHINE_POLICIES + '[[mixes]]\nrandom = ["stream", "light"]\n', ["mixes[0]", "'size'"]),
        (MACHINE_POLICIES + '[[mixes]]\nclasses = [{ from = ["stream"], count = 2 }]\n',
         ["mixes[0].classes[0]", "'count'"]),
        (MACHINE_POLICIES + 'mixes = ["no-such-mix"]\n', ["mixes[0]", "no-such-mix"]),
        (MACHINE_POLICIES + 'mixes = [["stream"]]\n[os]\npolicy = "bpm"\n', ["os.policy"]),
        (MACHINE_POLICIES + 'mixes = [["stream"]]\nbaseline = "budy"\n', ["baseline", "'budy'"]),
        ('policies = ["bpm"]\ninstructions = 1000\nmixes = [["stream"]]\n', ["machines", "missing"]),
        ('instructions = 1000\n[[run]]\nmachine = "i7-860"\nprograms = ["stream"]\npolicy = "bpm"\nseeds = 3\n',
         ["run[0]", "'seeds'"]),
        (MACHINE_POLICIES + 'mixes = [["light", "light", "light", "light", "light"]]\n',
         ["mixes", "5 programs", "4 cores"]),
        (MACHINE_POLICIES + 'mixes = [["stream", "light"]]\n[os]\ncolours = [[0], [99]]\n', ["os", "colour 99"]),
    ],
)
def test_bad_specs_fail_before_any_run_naming_the_key(memtint, clean_error, tmp_path, text, needles):
    spec = write(tmp_path, text)
    clean_error(memtint("sweep", spec, "--out", tmp_path / "out"), *needles)
    assert not (tmp_path / "out").exists()


def test_an_out_that_cannot_be_a_store_names_the_option(memtint, clean_error, tmp_path):
    # As demo, reproduce and report name their --out.
    spec = tmp_path / "sweep.toml"
    spec.write_text((Path(__file__).parents[2] / "configs" / "sweeps" / "demo.toml").read_text())
    clean_error(memtint("sweep", spec, "--out", spec), f"--out {spec}: exists and is not a directory")
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "notes.txt").write_text("mine")
    clean_error(memtint("sweep", spec, "--out", tmp_path / "full"), "--out", "is not a sweep result store")
    assert (tmp_path / "full" / "notes.txt").read_text() == "mine"
    # Through the API, the parameter is named, not the command's option.
    with pytest.raises(api.MemtintError, match=r"^out .*sweep.toml: exists and is not a directory"):
        run_sweep(str(spec), spec, jobs=1, progress=False)
    with pytest.raises(api.MemtintError, match=r"^out .*full: exists, is not empty"):
        run_sweep(str(spec), tmp_path / "full", jobs=1, progress=False)


def test_missing_spec_file_is_a_clean_error(memtint, clean_error, tmp_path):
    clean_error(memtint("sweep", tmp_path / "nope.toml", "--out", tmp_path / "out"), "nope.toml")


@pytest.mark.engine
def test_mix_generators_are_seeded_and_sized():
    table = {"machines": "i7-860", "policies": "bpm", "instructions": 1000,
             "mixes": [{"random": ["stream", "random", "copy", "light"], "size": 4, "count": 5, "seed": 3},
                       {"classes": [{"from": ["stream"], "n": 1}, {"from": ["light"], "n": 3}], "count": 2}]}
    first = [e.mix.programs for e in parse_spec(table).entries]
    assert first == [e.mix.programs for e in parse_spec(table).entries]
    assert len(first) == 7 and all(len(m) == 4 for m in first)
    assert first[5] == first[6] == ("stream", "light", "light", "light")
    other = [e.mix.programs for e in parse_spec({**table, "mixes": [{**table["mixes"][0], "seed": 4}]}).entries]
    assert other != first[:5]


@pytest.mark.engine
def test_killed_sweep_resumes_without_recomputing_stored_runs(tmp_path):
    """SIGKILL the whole `memtint sweep` process group once some batches are stored; the rerun
    executes exactly the runs that are not stored."""
    import os
    import signal
    import subprocess
    import sys
    import time

    spec = write(tmp_path, SPEC_TOML.replace(f"instructions = {INSTRUCTIONS}", "instructions = 2000000"))
    out = tmp_path / "out"
    command = [sys.executable, "-m", "memtint.cli", "sweep", str(spec), "--out", str(out), "--jobs", "2",
               "--batch-size", "1"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               start_new_session=True)
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline and process.poll() is None:
            manifest = out / "manifest.json"
            if manifest.exists() and len(json.loads(manifest.read_text())["batches"]) >= 2:
                break
            time.sleep(0.02)
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    stored = load_results(out)["config_hash"].nunique()
    assert 2 <= stored < 12, f"{stored} runs stored when killed: not halfway"
    done: list[int] = []
    summary = run_sweep(spec, out, jobs=2, progress=False,
                        on_progress=lambda phase, n, total: done.append(n) if phase == "runs" else None)
    assert (summary.skipped, summary.done, len(done)) == (stored, 12 - stored, 12 - stored)
    assert load_results(out)["config_hash"].nunique() == 12


def test_policy_plus_scheduler_runs_a_placement_with_its_own_controller_scheduler(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMTINT_CACHE_DIR", str(tmp_path / "cache"))
    from memtint.sweep.runs import expand

    table = {"machines": ["i7-860"], "mixes": [["stream", "light"]], "instructions": 20000,
             "policies": ["buddy", "buddy+fcfs", "bpm+fr-fcfs-cap"]}
    runs = expand(parse_spec(table))
    assert [(r.policy, r.scheduler, r.label) for r in runs] == [
        ("buddy", None, "buddy"), ("buddy", "fcfs", "buddy+fcfs"), ("bpm", "fr-fcfs-cap", "bpm+fr-fcfs-cap")]
    assert len({r.config_hash for r in runs}) == 3
    summary = memtint.sweep(table, out=tmp_path / "out", jobs=1, progress=False)
    assert summary.failed == 0
    frame = load_results(tmp_path / "out")
    assert list(dict.fromkeys(frame["policy"])) == ["buddy", "buddy+fcfs", "bpm+fr-fcfs-cap"]
    with pytest.raises(memtint.MemtintError, match="unknown scheduler 'nope'"):
        parse_spec({**table, "policies": ["buddy+nope"]})


def test_a_sweep_warms_up_by_default_and_a_bad_warmup_names_the_key(tmp_path):
    base = 'name = "w"\nmachines = ["ddr4-2400"]\npolicies = ["buddy"]\ninstructions = 1000\n[[mixes]]\nprograms = ["light"]\n'
    (tmp_path / "a.toml").write_text(base)
    from memtint.comparison import DEFAULT_WARMUP

    from memtint.sweep import load_spec

    assert load_spec(tmp_path / "a.toml").warmup == DEFAULT_WARMUP
    (tmp_path / "b.toml").write_text("warmup = 0\n" + base)
    spec = load_spec(tmp_path / "b.toml")
    assert spec.warmup == 0 and expand(spec)[0].warmup == 0
    assert expand(spec)[0].config_hash != expand(load_spec(tmp_path / "a.toml"))[0].config_hash
    (tmp_path / "c.toml").write_text('warmup = "long"\n' + base)
    with pytest.raises(memtint.MemtintError, match="warmup"):
        load_spec(tmp_path / "c.toml")


def test_a_policy_that_needs_a_machine_variant_runs_on_it(tmp_path):
    # bpm-plus needs the page-channel variant; the i7-860 names it (i7-860-bpm-plus).
    presets = api.presets()
    assert {p["name"]: p["machine_variant"] for p in presets["placement_policy_info"]}["bpm-plus"] == "page-channel"
    assert {m["name"]: m["variants"] for m in presets["machines"]}["i7-860"] == {"page-channel": "i7-860-bpm-plus"}
    table = {"machines": ["i7-860"], "mixes": [["stream", "light"]], "instructions": 1000,
             "policies": ["buddy", "bpm-plus", "bpm"]}
    assert [(e.machine, e.policy) for e in parse_spec(table).entries] == [
        ("i7-860", "buddy"), ("i7-860-bpm-plus", "bpm-plus"), ("i7-860", "bpm")]
    # Turned off, bpm-plus stays on the i7-860 and the probe names why it cannot run there.
    with pytest.raises(memtint.MemtintError, match="policy 'bpm-plus'.*channel with b6, below the 4 KiB page offset"):
        parse_spec({**table, "machine_variants": False})
    # A machine file's [variants] are read too, relative to the file.
    text = Path(api.__file__).resolve().parents[2].joinpath("configs/machines/i7-860.toml").read_text()
    text = text.replace('page-channel = "i7-860-bpm-plus"', 'page-channel = "plus.toml"')
    (tmp_path / "mine.toml").write_text(text.replace('name = "i7-860"', 'name = "mine"'))
    plus = Path(api.__file__).resolve().parents[2].joinpath("configs/machines/i7-860-bpm-plus.toml").read_text()
    (tmp_path / "plus.toml").write_text(plus)
    entries = parse_spec({**table, "machines": ["mine.toml"]}, base=tmp_path).entries
    assert [Path(e.machine).name for e in entries] == ["mine.toml", "plus.toml", "mine.toml"]
    # The same pairing as a public helper (memtint report and mine-rules pair runs with it).
    from memtint.sweep.spec import variant_machine
    assert variant_machine("i7-860", "bpm-plus") == "i7-860-bpm-plus"
    assert variant_machine("i7-860", "bpm-plus+tcm") == "i7-860-bpm-plus"
    assert variant_machine("i7-860", "bpm") == "i7-860"
    assert Path(variant_machine("mine.toml", "bpm-plus", base=tmp_path)).name == "plus.toml"


@pytest.mark.engine
def test_a_variant_machines_runs_divide_by_the_base_machines_alone_runs(tmp_path, monkeypatch):
    """bpm-plus runs on i7-860-bpm-plus, whose alone IPCs differ (stream alone: one channel per
    page); its weighted speedup divides by the i7-860's alone runs, as buddy's does, so the
    policies of a mix are compared on one denominator."""
    monkeypatch.setenv("MEMTINT_CACHE_DIR", str(tmp_path / "cache"))
    table = {"machines": ["i7-860"], "mixes": [["stream", "light"]], "instructions": 20000, "warmup": 0,
             "policies": ["buddy", "bpm-plus"]}
    runs = expand(parse_spec(table))
    assert [(r.machine, r.alone_machine) for r in runs] == [("i7-860", None), ("i7-860-bpm-plus", "i7-860")]
    summary = memtint.sweep(table, out=tmp_path / "out", jobs=1, progress=False)
    assert summary.failed == 0, summary
    frame = load_results(tmp_path / "out")
    alone = {p: list(rows.sort_values("core")["ipc_alone"]) for p, rows in frame.groupby("policy")}
    assert alone["bpm-plus"] == alone["buddy"], alone
    on_variant = run_sim("i7-860-bpm-plus", ["stream"], instructions=20000)["cores"][0]["ipc"]
    assert on_variant != alone["buddy"][0]  # the variant's own alone run is another denominator
    plus = frame[frame["policy"] == "bpm-plus"].sort_values("core")
    ws = sum(plus["ipc_shared"] / plus["ipc_alone"])
    assert abs(plus["weighted_speedup"].iloc[0] - ws) < 1e-9


@pytest.mark.engine
def test_alone_runs_follow_each_machine_s_default_placement_unless_the_sweep_names_one(tmp_path):
    # buddy on one memory, local on a machine with several nodes (where buddy is refused).
    from memtint.sweep import load_spec

    base = ('name = "n"\nmachines = ["ddr4-2400", "tiering-2to1"]\npolicies = ["interleave"]\ninstructions = 2000\n'
            'warmup = 0\n[[mixes]]\nprograms = ["stream", "light"]\n')
    (tmp_path / "a.toml").write_text(base)
    spec = load_spec(tmp_path / "a.toml")
    assert spec.baseline is None
    assert {r.machine: r.baseline for r in expand(spec)} == {"ddr4-2400": "buddy", "tiering-2to1": "local"}
    summary = run_sweep(spec, tmp_path / "out", jobs=1)
    assert summary.failed == 0 and summary.done == 2, summary
    frame = load_results(tmp_path / "out")
    assert sorted(set(zip(frame["machine"], frame["baseline"]))) == [("ddr4-2400", "buddy"), ("tiering-2to1", "local")]
    (tmp_path / "b.toml").write_text('baseline = "interleave"\n' + base)
    assert {r.baseline for r in expand(load_spec(tmp_path / "b.toml"))} == {"interleave"}


def test_a_sweep_into_a_log_says_how_far_it_is(tmp_path, monkeypatch, capsys):
    # stderr is not a terminal (a log, a pipe): no bar, but plain lines; a sweep said nothing there.
    monkeypatch.setenv("MEMTINT_CACHE_DIR", str(tmp_path / "cache"))
    spec = {"machines": ["i7-860"], "policies": ["buddy", "bpm"], "instructions": 1000, "warmup": 0,
            "mixes": [["light", "light"]]}
    run_sweep(spec, tmp_path / "r", jobs=1)
    err = capsys.readouterr().err
    assert "memtint: runs: 2/2 runs" in err, err


@pytest.mark.parametrize("call, needle", [
    (lambda tmp: run_sweep({"machines": ["i7-860"]}, tmp / "a", jobs=0), "jobs: expected a whole number of at least 1"),
    (lambda tmp: run_sweep({"machines": ["i7-860"]}, tmp / "a", limit=-1), "limit"),
    (lambda tmp: run_sweep({"machines": ["i7-860"]}, tmp / "a", batch_size=0), "batch_size"),
    (lambda tmp: memtint.compare("i7-860", "stream", ["buddy"], instructions=1000), "a string is not a list"),
    (lambda tmp: memtint.compare("i7-860", ["stream"], "buddy", instructions=1000), "policies: expected a list"),
    (lambda tmp: memtint.compare("i7-860", ["stream"], ["buddy"], instructions="10M"), "instructions: expected"),
])
def test_the_python_api_checks_what_the_command_line_checks(tmp_path, call, needle):
    with pytest.raises(api.MemtintError, match=re.escape(needle)):
        call(tmp_path)


def test_to_frame_refuses_results_of_two_kinds():
    sim = run_sim("i7-860", ["light"], instructions=1000)
    with pytest.raises(api.MemtintError, match="different kinds"):
        memtint.to_frame([sim, {"kind": "compare"}])


def test_a_stored_run_is_redone_when_a_file_its_machine_names_changes(tmp_path):
    """Resume keys a run by every file it reads: a device file the machine file names used to be
    keyed by name only, so an edited device kept the old results ("1 already stored")."""
    from memtint.sweep.runs import config_hash

    device = Path(api.__file__).parents[2] / "configs" / "devices" / "ddr4-2400.toml"
    (tmp_path / "dev.toml").write_text(device.read_text())
    (tmp_path / "m.toml").write_text('[dram]\ndevice = "dev.toml"\nmapping = "RoBaRaCoCh"\n')
    description = {"machine": str(tmp_path / "m.toml"), "programs": ["stream"], "policy": "buddy",
                   "instructions": 1000, "seed": 1, "baseline": "buddy", "os": {}, "mapping": None,
                   "scheduler": None}
    before = config_hash(description, "v")
    (tmp_path / "dev.toml").write_text(device.read_text() + "\n# edited\n")
    assert config_hash(description, "v") != before


def test_a_second_sweep_into_a_store_being_written_is_refused(tmp_path):
    # Two writers each rewrote the manifest from their own reading, and one's batches dropped out.
    from memtint.sweep.store import LOCK_NAME, ResultStore

    spec_path = write(tmp_path, SPEC_TOML)
    out = tmp_path / "out"
    with ResultStore(out).writing():
        with pytest.raises(api.MemtintError, match=r"another sweep is writing this store \(process \d+\)"):
            run_sweep(spec_path, out, jobs=1, limit=1, progress=False)
    # Released with its holder; the lock file alone does not make the directory "not a store".
    assert [p.name for p in out.iterdir()] == [LOCK_NAME]
    ResultStore(out).check_writable()


def test_a_stop_while_a_batch_or_the_manifest_is_written_leaves_no_temporary_file(tmp_path, monkeypatch):
    # What a stop does (memtint.stopping's handler) is run in the middle of each write.
    import pyarrow.parquet as pq

    from memtint import stopping
    from memtint.sweep.store import ResultStore

    store = ResultStore(tmp_path / "store")
    store.start_sweep("s", None, 1, "test")
    seen: list[list[str]] = []
    real_write_table = pq.write_table

    def stopped_while_writing(table, where, **kw):
        real_write_table(table, where, **kw)
        seen.append(sorted(p.name for p in (tmp_path / "store" / "batches").iterdir()))
        stopping.remove_temporaries()
        raise KeyboardInterrupt

    monkeypatch.setattr(pq, "write_table", stopped_while_writing)
    with pytest.raises(KeyboardInterrupt):
        store.write_batch([{"config_hash": "h", "status": "ok"}])
    assert seen and seen[0][0].endswith(".tmp")  # the batch was being written beside
    assert list((tmp_path / "store" / "batches").iterdir()) == []
    real_write_text = Path.write_text

    def manifest_stopped(self, text, *a, **kw):
        real_write_text(self, text, *a, **kw)
        stopping.remove_temporaries()
        raise KeyboardInterrupt

    monkeypatch.setattr(Path, "write_text", manifest_stopped)
    with pytest.raises(KeyboardInterrupt):
        store.start_sweep("t", None, 1, "test")
    assert sorted(p.name for p in (tmp_path / "store").iterdir()) == ["batches", "manifest.json"]


def _row(config_hash: str, status: str, core: int = 0) -> dict:
    return {"config_hash": config_hash, "status": status, "machine": "i7-860", "mix": "light|light",
            "policy": "buddy", "core": core}


def test_a_run_retried_after_a_batch_entry_was_removed_by_hand_counts_once(tmp_path):
    # A damaged batch's error says to remove its entry; the next batch then took the index of the
    # last one left, and a run failed there and redone in the new batch kept both outcomes.
    from memtint.sweep.store import ResultStore

    store = ResultStore(tmp_path / "store")
    store.start_sweep("s", None, 2, "test")
    store.write_batch([_row("a", "ok", 0), _row("a", "ok", 1)])
    store.write_batch([_row("b", "failed", 0), _row("b", "failed", 1)])
    manifest = json.loads(store.manifest_path.read_text())
    manifest["batches"] = manifest["batches"][1:]  # batch 0 removed, as its error says
    store.manifest_path.write_text(json.dumps(manifest))
    store.write_batch([_row("a", "ok", 0), _row("a", "ok", 1), _row("b", "ok", 0), _row("b", "ok", 1)])
    frame = load_results(tmp_path / "store")
    assert not frame.duplicated(["config_hash", "core"]).any(), frame[["config_hash", "status", "batch"]]
    assert sorted(frame["status"]) == ["ok"] * 4
    assert store.completed_hashes() == {"a", "b"}


@pytest.mark.parametrize("column", ["config_hash", "policy", "mix", "machine", "status", "core", "batch"])
def test_a_batch_with_an_empty_key_cell_is_named_not_an_internal_error(memtint, clean_error, tmp_path, column):
    # A batch edited by another tool (pandas, a Parquet editor) with nulls where a run's identity
    # goes: report raised TypeError, sweep's resume compared None with None.
    import pyarrow as pa
    import pyarrow.parquet as pq

    from memtint.sweep.store import ResultStore

    store = ResultStore(tmp_path / "store")
    store.start_sweep("s", None, 1, "test")
    path = store.write_batch([_row("a", "ok", 0), _row("a", "ok", 1)])
    table = pq.read_table(path)
    i = table.schema.get_field_index(column)
    pq.write_table(table.set_column(i, column, pa.nulls(table.num_rows, table.schema.field(column).type)), path)
    spec = write(tmp_path, 'machines = ["i7-860"]\npolicies = ["buddy"]\ninstructions = 1000\nwarmup = 0\n'
                           'mixes = [["light", "light"]]\n')
    for args in (["report", tmp_path / "store", "--out", tmp_path / "rep"],
                 ["sweep", spec, "--out", tmp_path / "store", "--no-report"]):
        clean_error(memtint(*args), path.name, f"column '{column}' is empty", "manifest.json")


def test_a_batch_holding_two_rows_of_one_core_is_named(memtint, clean_error, tmp_path):
    # Every run's config_hash set to one value by an editor: its runs became one run with each core
    # several times, and a report counted them.
    from memtint.sweep.store import ResultStore

    store = ResultStore(tmp_path / "store")
    store.start_sweep("s", None, 2, "test")
    path = store.write_batch([_row("", "ok", 0), _row("", "ok", 1), _row("", "ok", 0), _row("", "ok", 1)])
    clean_error(memtint("report", tmp_path / "store", "--out", tmp_path / "rep"), path.name,
                "run '' has two rows for core 0", "manifest.json")


@pytest.mark.parametrize("kwargs,needle", [
    # Each failed only after the first runs had been stored ("'str' object is not callable").
    ({"on_progress": "yes"}, "on_progress: expected a function of (phase, done, total)"),
    ({"batch_seconds": "30"}, "batch_seconds: expected a number of seconds"),
    ({"batch_seconds": float("nan")}, "batch_seconds: expected a number of seconds"),
    ({"backend": "local"}, "backend: expected a memtint.sweep.Backend"),
])
def test_run_sweep_names_an_argument_of_the_wrong_kind_before_any_run(tmp_path, kwargs, needle):
    import re

    with pytest.raises(api.MemtintError, match=re.escape(needle)):
        run_sweep(write(tmp_path, SPEC_TOML), tmp_path / "out", limit=1, progress=False, **kwargs)
    assert not (tmp_path / "out").exists()
    with pytest.raises(api.MemtintError, match="expected a result directory's path, got None"):
        load_results(None)  # a bare TypeError from pathlib


@pytest.mark.engine
def test_a_bad_value_in_a_sweeps_machine_file_names_that_file_and_line_not_the_overrides(memtint, clean_error, tmp_path):
    # The probe run's error was blamed on the specification's [overrides], which it may not have.
    (tmp_path / "map.toml").write_text('name = "m"\nlayout = "RoBaRaCoCh"\n[organisation]\nrows = 32768\n')
    machine = tmp_path / "m.toml"
    machine.write_text('name = "m"\n[dram]\ndevice = "ddr4-2400"\ndensity_gbit = 8\nmapping = "map.toml"\n'
                       '[cache.llc]\nsize_bytes = 4194304\nways = 16\nlatency = 30\nmshrs = 32\n')
    spec = tmp_path / "s.toml"
    spec.write_text('machines = ["m.toml"]\npolicies = ["buddy"]\ninstructions = 1000\nwarmup = 0\ncache = false\n'
                    '[[mixes]]\nprograms = ["light"]\n')
    line = clean_error(memtint("sweep", spec, "--out", tmp_path / "o1"), "organisation.rows")
    assert f"s.toml:1: machines: machine '{machine}'" in line and f"{tmp_path / 'map.toml'}:4: organisation.rows" in line, line
    machine.write_text(machine.read_text().replace('"map.toml"', '"RoBaRaCoCh"').replace("mshrs = 32", "mshrs = 8"))
    line = clean_error(memtint("sweep", spec, "--out", tmp_path / "o2"), "cache.llc.mshrs")
    assert "s.toml:1: machines: " in line and f"{machine}:10: cache.llc.mshrs: must be at least cpu.mshrs" in line, line
    # A value the specification's [overrides] gives is still theirs.
    spec.write_text(spec.read_text() + "[overrides.cache.llc]\nmshrs = 4\n")
    line = clean_error(memtint("sweep", spec, "--out", tmp_path / "o3"), "cache.llc.mshrs")
    assert "s.toml:9: overrides: " in line, line


@pytest.mark.engine
def test_a_sweep_probes_each_combination_when_read_and_not_again_in_its_runs(tmp_path, monkeypatch):
    # Each run's compare probed its policy again (about 20 ms of a 0.4 s task, outside the engine).
    from memtint import comparison
    from memtint.sweep.runs import execute_run

    monkeypatch.setenv("MEMTINT_CACHE_DIR", str(tmp_path / "cache"))
    probes = []
    real = comparison.probe_run
    monkeypatch.setattr(comparison, "probe_run", lambda *a, **k: (probes.append(a[2]), real(*a, **k))[1])
    spec = parse_spec({"machines": ["i7-860"], "policies": ["buddy", "bpm"], "instructions": 20_000, "warmup": 0,
                       "seeds": [1, 2], "mixes": [["stream", "light"], ["random", "light"]]})
    read = len(probes)
    # One per distinct combination: each policy with two programs, the alone runs' buddy with one.
    assert sorted(probes) == ["bpm", "buddy", "buddy"], probes
    runs = expand(spec)
    assert len(runs) == 8
    for run in runs:
        outcome = execute_run(run.describe())
        assert outcome["status"] == "ok", outcome["error"]
    assert len(probes) == read, probes[read:]
    # On its own, compare still probes every policy before its first run.
    comparison.compare("i7-860", ["stream", "light"], ["bpm", "buddy"], instructions=20_000, warmup=0,
                       use_cache=False)
    assert probes[read:] == ["bpm", "buddy"]


def test_the_catalogue_is_built_once_a_process_and_each_caller_gets_its_own_copy(monkeypatch):
    api.presets()
    monkeypatch.setattr(api._engine, "presets_json", lambda: pytest.fail("the catalogue was built again"))
    first = api.presets()
    first["schedulers"].append("mine")
    assert "mine" not in api.presets()["schedulers"]
