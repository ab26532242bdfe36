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
    assert "warning: " in run.stdout and "the trace holds 1,000 instructions" in run.stdout.replace("\n", " ")
