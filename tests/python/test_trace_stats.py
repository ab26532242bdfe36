"""`memtint trace-stats` and memtint.trace_stats: trace counts, reuse distances, and the row
locality and bank-level parallelism a program shows alone."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import pytest

from memtint.api import cpu_trace_stats
from memtint.trace_analysis import classify, trace_stats

SPEC = Path(os.environ.get("MEMTINT_SPEC_TRACES") or Path(__file__).resolve().parents[3] / "shared" / "traces" / "spec2006")


def write_trace(path: Path, lines: list[str]) -> Path:
    with gzip.open(path, "wt") as f:
        f.write("\n".join(lines) + "\n")
    return path


def test_cyclic_sweep_reuse_distance_is_the_sweep_length_minus_one(tmp_path):
    # 3 passes over 100 lines, hex and decimal addresses mixed: every re-read is at distance 99.
    lines = [f"2 {hex(0x10000 + 64 * i) if p % 2 else 0x10000 + 64 * i}" for p in range(3) for i in range(100)]
    s = trace_stats(write_trace(tmp_path / "sweep.gz", lines))
    assert (s["records"], s["instructions"], s["footprint_lines"]) == (300, 900, 100)
    reuse = s["reuse"]
    assert (reuse["reads"], reuse["cold_reads"]) == (300, 100)
    assert [(b["min_lines"] <= 99 <= b["max_lines"], b["reads"]) for b in reuse["histogram"]] == [(True, 200)]
    assert reuse["median_lines"] >= 99 and reuse["p90_lines"] >= 99
    # 100 lines fit in every reported cache size.
    assert all(abs(h["hit_fraction"] - 2 / 3) < 1e-12 for h in reuse["lru_hit_fraction"])
    assert s["alone"] is None and s["classes"]["row_locality"] is None


def test_alone_runs_separate_streaming_from_random_access():
    stream = trace_stats("stream", machine="i7-860", instructions=1_000_000)
    rand = trace_stats("random", machine="i7-860", instructions=1_000_000)
    light = trace_stats("light", machine="i7-860", instructions=1_000_000, reuse=False)
    # A sweep hits its open rows; random lines almost never do but spread over many banks.
    assert stream["alone"]["row_hit_rate"] > 0.8 > 0.05 > rand["alone"]["row_hit_rate"]
    assert rand["alone"]["bank_level_parallelism"] > stream["alone"]["bank_level_parallelism"] >= 1.0
    assert stream["classes"]["intensity"] == rand["classes"]["intensity"] == "intensive"
    assert light["classes"]["intensity"] == "light" and light["reuse"] is None
    assert (stream["classes"]["row_locality"], rand["classes"]["row_locality"]) == ("high", "low")
    # The random profile reuses almost nothing within an LLC: it thrashes.
    assert rand["classes"]["llc_sensitivity_estimate"] == "thrashing"
    assert stream["alone"]["instructions"] == 1_000_000 and stream["alone"]["llc_bytes"] == 8 << 20


def test_classify_uses_the_bpm_threshold_and_reuse_gains():
    def stats(mpki, hits):
        sizes = [256 << 10, 1 << 20, 2 << 20, 4 << 20, 8 << 20, 16 << 20, 32 << 20]
        return {"reads_pki": mpki, "alone": None, "instructions": 1_000_000,
                "reuse": {"reads": 10, "lru_hit_fraction": [{"cache_bytes": s, "hit_fraction": h} for s, h in zip(sizes, hits)]}}

    assert classify(stats(0.9, [0] * 7))["intensity"] == "light"
    assert classify(stats(1.1, [0] * 7))["llc_sensitivity_estimate"] == "thrashing"
    # Gains between 4 MiB and 8 MiB (half and full LLC): hungry.
    assert classify(stats(5, [0, 0.1, 0.1, 0.2, 0.7, 0.8, 0.8]))["llc_sensitivity_estimate"] == "hungry"
    # Gains between 1 MiB and 4 MiB only: middle.
    assert classify(stats(5, [0, 0.1, 0.2, 0.6, 0.62, 0.62, 0.62]))["llc_sensitivity_estimate"] == "middle"
    # A few instructions are their cold misses, not a class: no labels, and the reason.
    short = classify({**stats(5, [0] * 7), "instructions": 11})
    assert short["intensity"] is None and short["llc_sensitivity_estimate"] is None
    assert short["unlabelled"] == "11 instructions; labels need at least 100,000"


def test_cli_prints_both_tables_and_writes_json(memtint, tmp_path):
    trace = write_trace(tmp_path / "t.gz", [f"5 {64 * (i % 50)}" for i in range(500)])
    code, out, err = memtint("trace-stats", trace, "copy", "--instructions", "200000", "--machine", "ddr4-2400")
    assert code == 0, err
    assert "CPU traces" in out and "Alone on ddr4-2400" in out and "BLP" in out
    assert "t.gz" in out and "copy" in out
    code, out, err = memtint("trace-stats", trace, "copy", "--instructions", "200000")
    assert code == 0, err  # no alone run without --machine, so the table is not titled one
    assert "Alone" not in out and "Labels (from the traces' statistics" in " ".join(out.split()), out
    code, out, err = memtint("trace-stats", trace, "--json", "-")
    assert code == 0, err
    [row] = json.loads(out)
    assert row["records"] == 500 and row["footprint_lines"] == 50 and row["reuse"]["cold_reads"] == 50
    # Without --machine its 3,000 instructions are all there is: too few to label.
    assert row["classes"]["intensity"] is None and row["classes"]["unlabelled"].startswith("3,000 instructions")
    # Alone for a run that short, the misses of loads fetched past its end dominate (one read,
    # thousands per kilo-instruction): the table shows no alone figures, and says why.
    one = write_trace(tmp_path / "one.txt", ["0 4096"])
    code, out, err = memtint("trace-stats", one, "--machine", "i7-860", "--no-reuse")
    assert code == 0, err
    assert "16,000" not in out and "the core fetched past its end" in out.replace("\n", " "), out


@pytest.mark.parametrize(
    "args, message",
    [
        (["missing.gz"], "missing.gz: no such trace file"),
        (["stream"], "stream: a built-in profile is generated and never ends; give --instructions N"),
        (["stream", "--instructions", "1000", "--machine", "no-such-machine"], "no-such-machine"),
        (["bad.txt"], "bad.txt:2"),
        # The file is named first, not a key of the request the command built (workload:, programs:).
        (["empty.txt"], "error: " + "{tmp}/empty.txt: the trace has no records"),
        (["."], "error: .: is a directory, not a trace file"),
    ],
)
def test_errors_are_one_line_with_a_reason(memtint, tmp_path, args, message):
    (tmp_path / "bad.txt").write_text("1 0x40\n1 zz\n")
    (tmp_path / "empty.txt").write_text("")
    message = message.replace("{tmp}", str(tmp_path))
    code, out, err = memtint("trace-stats", *args)
    assert code == 2 and message in err and err.count("\n") == 1, err


@pytest.mark.skipif(not SPEC.is_dir(), reason=f"SPEC CPU2006 traces not found at {SPEC}")
def test_spec_namd_is_light_and_counts_match_the_trace_counter():
    s = trace_stats(SPEC / "444.namd.gz", instructions=20_000_000)
    plain = cpu_trace_stats(str(SPEC / "444.namd.gz"), instructions=20_000_000)
    assert {k: s[k] for k in plain} == plain
    assert s["classes"]["intensity"] == "light" and s["reuse"]["reads"] == s["reads"]


def test_the_alone_run_takes_the_machines_linux_like_placement(memtint, tmp_path):
    # On a machine of several nodes buddy cannot run; the user named no policy, so none is blamed.
    trace = write_trace(tmp_path / "t.gz", [f"5 {64 * i}" for i in range(200)])
    code, out, err = memtint("trace-stats", trace, "--machine", "opteron-6128", "--json", "-")
    assert code == 0, err
    assert json.loads(out)[0]["alone"]["policy"] == "local"
