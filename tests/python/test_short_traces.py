"""A trace file shorter than a comparison's warm-up plus run is replayed from its start; the
comparison says so (top-level ``warnings``; the command prints it)."""
from __future__ import annotations

import gzip
import shutil
import subprocess
import sys
from pathlib import Path

from memtint import api, comparison

MEMTINT = [sys.executable, "-m", "memtint.cli"]


def _text_trace(path: Path, records: int) -> Path:
    # 9 bubbles + the load: 10 instructions a record, lines 4 KiB apart.
    path.write_text("".join(f"9 {0x100000 + 4096 * i}\n" for i in range(records)))
    return path


def test_a_trace_shorter_than_warmup_plus_run_is_warned_about_in_every_format(tmp_path: Path) -> None:
    text = _text_trace(tmp_path / "short.txt", 500)  # 5 000 instructions
    mtt = tmp_path / "short.mtt"
    api.convert_trace(text, mtt)
    packed = tmp_path / "short.mtt.gz"
    with open(mtt, "rb") as src, gzip.open(packed, "wb") as dst:
        shutil.copyfileobj(src, dst)
    for trace in (text, mtt, packed):
        result = comparison.compare("i7-860", [str(trace), "light"], ["buddy"], instructions=4_000, warmup=2_000,
                                    use_cache=False)
        assert len(result["warnings"]) == 1, result["warnings"]
        warning = result["warnings"][0]
        assert warning.startswith(f"{trace}: the trace holds 5,000 instructions")
        assert "2,000 + 4,000" in warning and "1.2 passes" in warning
        # Long enough: nothing said.
        fits = comparison.compare("i7-860", [str(trace), "light"], ["buddy"], instructions=3_000, warmup=2_000,
                                  use_cache=False)
        assert fits["warnings"] == []


def test_the_command_prints_the_warning(tmp_path: Path) -> None:
    trace = _text_trace(tmp_path / "short.txt", 100)  # 1 000 instructions
    run = subprocess.run(MEMTINT + ["compare", "--machine", "i7-860", "--mix", f"{trace},light", "--policies", "buddy",
                                    "--instructions", "5000", "--warmup", "0", "--no-cache"],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    # Rich wraps at the terminal's width, which a long temporary path can make fall anywhere.
    said = " ".join(run.stdout.split())
    assert "warning:" in said and "the trace holds 1,000 instructions" in said


def test_a_run_that_replays_its_trace_says_so_and_counts_the_warm_ups_wraps(tmp_path: Path) -> None:
    trace = _text_trace(tmp_path / "short.txt", 100)  # 1 000 instructions a pass
    # The warm-up reads 10 passes whole: the trace starts again 9 times in it; the window
    # (its core fetches ahead of what it retires) at least 4 more.
    run = api.run_sim("i7-860", [str(trace), "light"], instructions=5_000, warmup=10_000)
    core = run["cores"][0]
    assert core["warmup_wraps"] == 9
    assert core["core_stats"]["trace_wraps"] >= 4
    said = [w for w in run["warnings"] if "replayed" in w]
    assert len(said) == 1, run["warnings"]
    assert said[0].startswith(f"core 0 ({trace}): its trace ended and was replayed from its start "
                              f"{9 + core['core_stats']['trace_wraps']} time(s) (9 in the warm-up of 10000 instructions")
    # The generated program never ends, and a trace long enough is not replayed.
    assert run["cores"][1]["warmup_wraps"] == 0
    long = api.run_sim("i7-860", [str(_text_trace(tmp_path / "long.txt", 2_000)), "light"], instructions=5_000,
                       warmup=10_000)
    assert long["cores"][0]["warmup_wraps"] == 0 and long["cores"][0]["core_stats"]["trace_wraps"] == 0
    assert not [w for w in long["warnings"] if "replayed" in w]


def test_a_comparison_says_it_once_not_for_every_run(tmp_path: Path) -> None:
    trace = _text_trace(tmp_path / "short.txt", 100)
    result = comparison.compare("i7-860", [str(trace), "light"], ["buddy", "bpm"], instructions=5_000, warmup=10_000,
                                use_cache=False)
    assert len(result["warnings"]) == 1 and "the trace holds 1,000 instructions" in result["warnings"][0]
    for policy in result["policies"]:
        assert not [w for w in policy["warnings"] if "replayed" in w], policy["warnings"]
    assert not [w for w in result["alone_warnings"] if "replayed" in w], result["alone_warnings"]
