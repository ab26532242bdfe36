"""The workload suite: traces long enough for the reproductions, pools from measured classes."""

import os

import pytest

from memtint import api, comparison, workload_classes, workloads
from memtint.api import MemtintError
from memtint.reproduce import PAPERS, common


def _needed() -> int:
    """Warm-up plus the longest measured window of any reproduction that runs traces, per core
    (the refresh reproduction's real-time task sets run none)."""
    return comparison.DEFAULT_WARMUP + max(m.SIZES["full"]["instructions"] for m in PAPERS.values() if hasattr(m, "SIZES"))


def test_every_committed_trace_covers_warmup_and_the_longest_window():
    files = [f for f in os.listdir(workloads.COMMITTED_DIR) if f.endswith(".mtt.gz")]
    assert files
    short = {f: api.cpu_trace_stats(os.path.join(workloads.COMMITTED_DIR, f))["instructions"] for f in files}
    assert {f: n for f, n in short.items() if n < _needed()} == {}


def test_every_recipe_traces_at_least_warmup_and_the_longest_window():
    assert [r["name"] for r in workloads.load_recipes() if r.get("limit", 0) < _needed()] == []


def test_suite_names_resolve_to_their_first_thread_and_unknown_names_are_errors():
    assert os.path.basename(workloads.trace_path("triad")) == "triad.t2.mtt.gz"
    assert common.program_path("chase") == workloads.trace_path("chase")
    with pytest.raises(MemtintError, match="unknown workload 'nope'"):
        workloads.trace_path("nope")


def test_classes_follow_the_measured_statistics():
    base = {"ipc": 1.0, "bank_level_parallelism": 2.0}
    heavy = workload_classes.classes({**base, "llc_mpki": 1.5, "dram_reads_pki": 4.0, "dram_writes_pki": 1.0,
                                      "row_hit_rate": 0.9, "quarter_llc_ipc": 0.85})
    assert heavy == {"intensity": "intensive", "access": "streaming", "write_heavy": True, "cache_sensitive": True}
    light = workload_classes.classes({**base, "llc_mpki": 1.0, "dram_reads_pki": 4.0, "dram_writes_pki": 0.9,
                                      "row_hit_rate": 0.1, "quarter_llc_ipc": 0.9})
    assert light == {"intensity": "light", "access": "random", "write_heavy": False, "cache_sensitive": False}
    # no cache colours on the machine: not measured
    assert workload_classes.classes({**base, "llc_mpki": 1.0, "dram_reads_pki": 0.0, "dram_writes_pki": 0.0,
                                     "row_hit_rate": None, "quarter_llc_ipc": None})["cache_sensitive"] is None


def test_the_intensive_pool_is_measured_and_has_eight_programs_above_two_mpki():
    from memtint.reproduce import bpm

    window = bpm.SIZES["full"]["instructions"]
    measured = common.measured(bpm.MACHINE, comparison.DEFAULT_WARMUP, window)
    pool = common.intensive(bpm.MACHINE, comparison.DEFAULT_WARMUP, window)
    assert pool == [n for n in common.ALL if measured[n]["llc_mpki"] > 1.0]
    assert common.INTENSIVE == pool
    assert len([n for n in common.SUITE if measured[n]["llc_mpki"] > 2.0]) >= 8
    # The light programs the suite keeps for contrast are measured light.
    assert set(common.SUITE) - set(pool)


def test_the_readme_table_is_today_s_measurement():
    # The suite's table in workloads/README.md is the measurement the pools are built from, not a
    # copy that drifts when the model changes (its figures once differed in the second digit).
    readme = os.path.join(workloads.WORKLOADS_DIR, "README.md")
    with open(readme, encoding="utf-8") as f:
        text = f.read()
    table = workloads.class_table()
    assert table in text, f"{readme}: regenerate its table with python -m memtint.workloads table:\n{table}"



def test_the_readme_sizes_are_the_committed_files():
    import re

    with open(os.path.join(workloads.WORKLOADS_DIR, "README.md"), encoding="utf-8") as f:
        text = f.read()
    section = text[text.index("## Committed traces"):text.index("## Classes")]
    quoted = {}
    for names, sizes in re.findall(r"\| ([a-z0-9., ]+\.t\d+) \| ([\d ,]+?) (?=\|)", section):
        quoted.update(zip(names.split(", "), (int(s.replace(" ", "")) for s in sizes.split(", "))))
    files = {f[:-len(".mtt.gz")]: os.path.getsize(os.path.join(workloads.COMMITTED_DIR, f))
             for f in os.listdir(workloads.COMMITTED_DIR) if f.endswith(".mtt.gz")}
    assert quoted == files
    total = float(re.search(r"\*\*total\*\* \| \*\*([\d.]+) MB\*\*", section).group(1))
    assert total == round(sum(files.values()) / 1e6, 1)

@pytest.mark.engine
def test_mix_takes_suite_programs_by_name(memtint, tmp_path):
    code, out, err = memtint("compare", "--machine", "i7-860", "--mix", "triad,bfs,light,light", "--instructions",
                             "2000", "--warmup", "0", "--policies", "buddy", "--json", "-")
    assert code == 0, err
    assert '"program": "triad"' in out and '"program": "bfs"' in out
    spec = tmp_path / "s.toml"
    spec.write_text('machines = ["i7-860"]\npolicies = ["buddy"]\ninstructions = 1000\nwarmup = 0\n'
                    'mixes = [["chase", "light"]]\n')
    from memtint.sweep import load_spec

    assert load_spec(spec).entries[0].mix.programs[0].endswith(".mtt.gz")


@pytest.mark.engine
def test_sweep_pools_can_be_measured_classes(tmp_path):
    from memtint.sweep import load_spec
    from memtint.sweep.spec import SweepSpecError

    spec = tmp_path / "s.toml"
    head = 'machines = ["i7-860"]\npolicies = ["buddy"]\ninstructions = 20000\nwarmup = 0\n'
    spec.write_text(head + '[[mixes]]\nclasses = [{ from = "class:intensive", n = 2 }, { from = "class:light", n = 1 }]\n'
                    'count = 3\nseed = 5\n')
    stats = workload_classes.measure({n: workloads.trace_path(n) if n in workloads.suite() else n
                                      for n in list(workloads.suite()) + list(api.PROFILES)},
                                     "i7-860", warmup=0, instructions=20000)
    for entry in load_spec(spec).entries:
        programs = entry.mix.programs
        names = [common.short(p) for p in programs]
        assert [stats[n]["classes"]["intensity"] for n in names] == ["intensive", "intensive", "light"], names
    spec.write_text(head + '[[mixes]]\nrandom = "class:heavy"\nsize = 2\n')
    with pytest.raises(SweepSpecError, match=r"mixes\[0\]\.random: unknown class 'heavy' \(known: intensive"):
        load_spec(spec)


def test_committed_traces_are_written_whole_or_not_at_all(tmp_path, monkeypatch):
    import gzip
    import shutil

    source = tmp_path / "trace.t0.mtt"
    source.write_bytes(b"x" * 4096)
    summary = {"threads": [{"ordinal": 0, "file": str(source)}], "stats": [{"records": 1}]}
    out = tmp_path / "traces"
    [written] = workloads.commit_traces({"name": "w"}, summary, str(out))
    assert gzip.open(written).read() == b"x" * 4096

    def interrupted(src, dst):
        dst.write(src.read(100))
        raise KeyboardInterrupt

    monkeypatch.setattr(shutil, "copyfileobj", interrupted)
    with pytest.raises(KeyboardInterrupt):
        workloads.commit_traces({"name": "v"}, summary, str(out))
    assert sorted(p.name for p in out.iterdir()) == ["w.t0.mtt.gz"]
