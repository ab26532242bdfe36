"""Processes with several threads, CCPS and MCP through the Python API and the CLI
(docs/threads.md)."""

import json

import pytest

from memtint import MemtintError, api
from memtint.comparison import alone_profiles, compare

FAST = {"latency_cycles": 100000, "min_granularity_cycles": 12500}


def test_processes_with_threads_report_switches_per_thread_and_process():
    stats = api.run_sim(
        "i7-860", [], instructions=60000, os_options={"sched": FAST},
        processes=[{"name": "web", "threads": ["light", "light", "stream"]},
                   {"name": "db", "threads": ["random", {"program": "light", "affinity": [0]}]},
                   {"threads": ["copy", "light", "light"]}],
    )
    assert len(stats["cores"]) == 8
    assert [p["name"] for p in stats["processes"]] == ["web", "db", "process2"]
    assert [p["threads"] for p in stats["processes"]] == [3, 2, 3]
    assert stats["scheduling"]["context_switches"] == sum(c["context_switches"] for c in stats["cores"])
    assert stats["scheduling"]["context_switches"] > 0
    assert stats["cores"][4]["first_core"] == stats["cores"][4]["last_core"] == 0
    for c in stats["cores"]:
        assert c["instructions"] == 60000
        assert c["run_cycles"] > 0


def test_programs_and_processes_together_are_an_error():
    with pytest.raises(MemtintError, match="not both"):
        api.build_sim_spec("i7-860", ["light"], instructions=10, processes=[{"threads": ["light"]}])
    with pytest.raises(MemtintError, match="at least one process"):
        api.build_sim_spec("i7-860", [], instructions=10, processes=[])


def test_sim_cli_reads_processes_from_toml(memtint, tmp_path):
    cfg = tmp_path / "run.toml"
    cfg.write_text(
        'machine = "ccps-4c-64b"\ninstructions = 30000\n[os]\npolicy = "ccps"\n'
        '[[processes]]\nname = "sysbench"\nthreads = ["light", "light", "light", "light", "light", "light"]\n'
        '[[processes]]\nthreads = ["stream"]\n'
    )
    out = tmp_path / "out.json"
    code, stdout, stderr = memtint("sim", cfg, "--json", out)
    assert code == 0, stderr
    assert "switches" in stdout and "context switches" in stdout and "within a process" in stdout
    stats = json.loads(out.read_text())
    # CCPS Algorithm 1: five siblings on core 0, the sixth on core 1, the stream on core 2.
    assert [c["first_core"] for c in stats["cores"]] == [0, 0, 0, 0, 0, 1, 2]
    assert stats["scheduling"]["binding"] == "ccps" and stats["scheduling"]["load_balance"] is False
    assert stats["cores"][6]["channels"] == [2]


def test_sim_cli_bad_affinity_is_a_clear_error(memtint, clean_error, tmp_path):
    cfg = tmp_path / "run.toml"
    cfg.write_text('machine = "i7-860"\ninstructions = 1000\n[[processes]]\nthreads = ["light"]\naffinity = [9]\n')
    clean_error(memtint("sim", cfg), "core 9")


@pytest.mark.parametrize("second, needles", [
    # The engine named only "affinity" and a thread number: the line found was the first
    # process's affinity, or none for a thread's own.
    ('threads = ["light"]\naffinity = [8]', ["run.toml:8:", "processes[1].affinity: names core 8, but the machine has cores 0-3"]),
    ('threads = ["light", { program = "light", affinity = [5] }]',
     ["run.toml:7:", "processes[1].threads[1].affinity: names core 5"]),
    ('threads = ["light"]\naffinity = []', ["run.toml:8:", "processes[1].affinity: is empty"]),
    # A program's own error (phases, a profile's parameter) named no key of the run file and no line.
    ('threads = ["light", "phases:stream@0+light"]', ["run.toml:7:", "processes[1].threads[1]: phases: part 1"]),
    ('threads = ["stream:reads_pki=-1"]', ["run.toml:7:", "processes[1].threads[0]: workload.stream.reads_pki"]),
])
def test_a_thread_s_affinity_or_program_error_is_named_at_its_process_s_line(memtint, clean_error, tmp_path,
                                                                            second, needles):
    cfg = tmp_path / "run.toml"
    cfg.write_text('machine = "i7-860"\ninstructions = 1000\n[[processes]]\nthreads = ["light"]\naffinity = [0]\n'
                   f'[[processes]]\n{second}\n')
    clean_error(memtint("sim", cfg), *needles)


def test_a_program_list_s_program_error_is_named_at_its_line(memtint, clean_error, tmp_path):
    cfg = tmp_path / "run.toml"
    cfg.write_text('machine = "i7-860"\ninstructions = 1000\nprograms = ["light", "phases:stream@0+light"]\n')
    clean_error(memtint("sim", cfg), "run.toml:3:", "programs[1]: phases: part 1")


def test_run_sim_takes_the_run_wide_at_end_and_barrier_every():
    # Only a run file could set them: run_sim refused both as unexpected options.
    stats = api.run_sim("i7-860", ["stream", "light"], instructions=20000, at_end="wait", barrier_every=5000)
    assert [c["barriers"] for c in stats["cores"]] == [3, 3]
    # The barriers hold the light program to the stream's pace: it finishes late, not at half time.
    alone = api.run_sim("i7-860", ["stream", "light"], instructions=20000)
    assert alone["cores"][1]["finished_at"] < 0.75 * stats["cores"][1]["finished_at"]
    for bad, message in ((dict(at_end="stop"), "at_end: expected"), (dict(barrier_every=0), "barrier_every"),
                         (dict(barrier_every=2.5), "barrier_every: expected a whole number")):
        with pytest.raises(MemtintError, match=message):
            api.run_sim("i7-860", ["light"], instructions=1000, **bad)


def test_compare_profiles_mcp_from_the_alone_runs(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMTINT_CACHE_DIR", str(tmp_path))
    result = compare("ccps-4c-64b", ["stream", "light", "light", "copy"], ["buddy", "mcp", "imps", "ccps"],
                     instructions=40000)
    by = {p["policy"]: p for p in result["policies"]}
    assert set(by) == {"buddy", "mcp", "imps", "ccps"}
    # MCP gives each application one preferred channel; CCPS one channel per core.
    assert all(c["channels_used"] == 1 for c in by["ccps"]["cores"])
    assert by["mcp"]["cores"][0]["channels_used"] == 1
    assert by["buddy"]["cores"][0]["channels_used"] == 4


def test_alone_profiles_are_mpki_hit_rate_and_dram_traffic():
    alone = {"llc_mpki": 12.5, "row_buffer_miss_rate": 0.25, "dram_reads": 300, "dram_writes": 100, "cycles": 8000}
    assert alone_profiles([alone]) == [{"mpki": 12.5, "rbh": 0.75, "bandwidth": 50.0}]


def test_bpm_plus_balanced_splits_channels_by_the_alone_runs_traffic(tmp_path, monkeypatch):
    # Two streams and two light programs: in bpm-plus's order the streams share channel 0; the
    # balanced split puts one in each channel, as the alone runs' traffic (compare's profiles) asks.
    mix = ["stream", "stream", "light", "light"]
    alone = [api.run_sim("i7-860-bpm-plus", [p], instructions=40000)["cores"][0] for p in mix]
    runs = {policy: api.run_sim("i7-860-bpm-plus", mix, instructions=40000, policy=policy,
                                os_options={"profiles": alone_profiles(alone)})
            for policy in ("bpm-plus", "bpm-plus-balanced")}
    assert [c["channels"] for c in runs["bpm-plus"]["cores"]] == [[0], [0], [1], [1]]
    assert [c["channels"] for c in runs["bpm-plus-balanced"]["cores"]] == [[0], [1], [0], [1]]
    # compare fills the profiles itself.
    monkeypatch.setenv("MEMTINT_CACHE_DIR", str(tmp_path))
    result = compare("i7-860-bpm-plus", mix, ["bpm-plus", "bpm-plus-balanced"], instructions=40000, warmup=0)
    ws = {p["policy"]: p["weighted_speedup"] for p in result["policies"]}
    assert ws["bpm-plus-balanced"] != ws["bpm-plus"]


@pytest.mark.parametrize("value, needle", [('"x"', 'invalid type: string "x"'), ("-1.0", "must be a finite number >= 0")])
def test_a_bad_profile_bandwidth_is_a_clean_error(memtint, clean_error, tmp_path, value, needle):
    cfg = tmp_path / "run.toml"
    cfg.write_text('machine = "i7-860-bpm-plus"\nprograms = ["light", "light"]\ninstructions = 1000\n[os]\n'
                   'policy = "bpm-plus-balanced"\n'
                   f'profiles = [{{mpki = 1.0, rbh = 0.5, bandwidth = 2.0}}, {{mpki = 1.0, rbh = 0.5, bandwidth = {value}}}]\n')
    clean_error(memtint("sim", cfg), f"{cfg}:4", "os.profiles[1].bandwidth", needle)
