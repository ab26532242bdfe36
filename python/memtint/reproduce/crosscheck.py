"""A cross-check of the mechanism in a reference simulator: the DRAM request streams memtint's
shared runs generate under buddy and under BPM (`memtint sim --export-dram`), replayed by
memtint's DRAM-trace mode and by Ramulator 2.1, with their row-buffer miss rates side by side.
Does the reference simulator see the same change from buddy to BPM on the same requests?

The streams come from the ddr4-2400 machine (one channel, one rank, RoBaRaCoCh: a mapping
Ramulator 2.1 has, and bank bits above the page, so BPM colours banks there). Three replays:
memtint timed (DRAMSim3 format, each request at the cycle it entered a controller in the shared
run: the round trip, which must give the shared run's row outcomes), memtint untimed and
Ramulator 2.1 untimed (its LoadStoreTrace frontend issues as fast as the queues allow; memtint
with 256 requests in flight and Ramulator's write handling, as ../shared/peers/README.md's
comparisons). Ramulator 2.1 is found through ``MEMTINT_RAMULATOR2`` (its checkout, built as
../shared/peers/README.md says); without it the table says so and has memtint's columns only.

Run: ``python -m memtint.reproduce.crosscheck [--out docs/reproductions/crosscheck.md]``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile
from typing import Any

from memtint import api
from memtint.comparison import DEFAULT_WARMUP
from memtint.reproduce import common

MACHINE = "ddr4-2400"
MIXES = (["triad", "bfs", "spmv", "chase"], ["hashprobe", "kvstore", "pagerank", "fdtd"])
POLICIES = ("buddy", "bpm")
INSTRUCTIONS = int(os.environ.get("MEMTINT_CROSSCHECK_INSTRUCTIONS", 2_000_000))

RAMULATOR_SCRIPT = """
import json, sys, ramulator
frontend = ramulator.frontend.LoadStoreTrace(clock_ratio=1, path=sys.argv[1])
ddr4 = ramulator.dram.DDR4(org_preset="DDR4_8Gb_x8", timing_preset="DDR4_2400R", rank=1)
ctrl = ramulator.controller.GenericDDR(dram=ddr4, scheduler=ramulator.scheduler.FRFCFS(),
    refresh_manager=ramulator.refresh_manager.AllBank(), row_policy=ramulator.row_policy.Open(),
    addr_mapper=ramulator.addr_mapper.RoBaRaCoCh())
mem = ramulator.memory_system.GenericDRAM(clock_ratio=1, controllers=[ctrl],
    channel_mapper=ramulator.channel_mapper.CacheLineInterleave())
sim = ramulator.Simulation(frontend, mem); sim.run()
c = sim.stats["memory_system"]["controller"]
print(json.dumps({k: c[k] for k in ("cycles", "row_hits", "row_misses", "row_conflicts")}))
"""


def _miss_rate(hits: int, misses: int, conflicts: int) -> float:
    total = hits + misses + conflicts
    return (misses + conflicts) / total if total else float("nan")


def _dram_replay(trace: str, fmt: str, timed: bool) -> dict[str, Any]:
    """memtint's DRAM-trace mode on ``trace``: timed (every request at its cycle; no in-flight
    limit binds) or untimed (256 in flight, Ramulator's write handling)."""
    options: dict[str, Any] = {"outstanding": 100_000} if timed else {
        "outstanding": 256, "overrides": {"controller": {"write_handling": "ramulator"}}}
    r = api.run_dram(MACHINE, {"trace": {"path": trace, "format": fmt}}, **options)
    return {"hits": r["row_hits"], "misses": r["row_misses"], "conflicts": r["row_conflicts"]}


def _ramulator(trace: str, root: str) -> dict[str, Any] | None:
    env = dict(os.environ, PYTHONPATH=os.path.join(root, "python"))
    done = subprocess.run([sys.executable, "-c", RAMULATOR_SCRIPT, trace], capture_output=True, text=True, env=env,
                          timeout=3600)
    if done.returncode != 0:
        raise api.MemtintError(f"Ramulator 2.1 at {root} failed: {done.stderr.strip()[-400:]}")
    c = json.loads(done.stdout.strip().splitlines()[-1])
    return {"hits": c["row_hits"], "misses": c["row_misses"], "conflicts": c["row_conflicts"]}


def run(workdir: str, ramulator_root: str | None) -> list[dict[str, Any]]:
    rows = []
    for mix in MIXES:
        programs = [common.program_path(p) for p in mix]
        for policy in POLICIES:
            stem = os.path.join(workdir, f"{'-'.join(mix)}.{policy}")
            timed = stem + ".dramsim3"
            spec = api.build_sim_spec(MACHINE, programs, instructions=INSTRUCTIONS, policy=policy, seed=1)
            spec["warmup"] = DEFAULT_WARMUP
            spec["export_dram"] = {"path": timed, "format": "dramsim3"}
            shared = api.run_sim_spec(spec)
            d = shared["dram"]
            row = {"mix": " + ".join(mix), "policy": policy, "requests": shared["export_dram"]["requests"],
                   "shared": _miss_rate(d["row_hits"], d["row_misses"], d["row_conflicts"])}
            # The same stream without times, in both simulators' untimed formats.
            untimed, loadstore = stem + ".ramulator", stem + ".loadstore"
            with open(timed) as src, open(untimed, "w") as mt, open(loadstore, "w") as ls:
                for line in src:
                    addr, kind, _ = line.split()
                    mt.write(f"{addr} {'W' if kind == 'WRITE' else 'R'}\n")
                    ls.write(f"{'ST' if kind == 'WRITE' else 'LD'} {addr}\n")
            rt = _dram_replay(timed, "dramsim3", timed=True)
            row["replay_timed"] = _miss_rate(rt["hits"], rt["misses"], rt["conflicts"])
            row["round_trip"] = {k: (rt[k], d[f"row_{k}"]) for k in ("hits", "misses", "conflicts")}
            row["in_flight"] = row["requests"] - d["requests"]  # entered but not completed when the run ended
            un = _dram_replay(untimed, "ramulator", timed=False)
            row["memtint_untimed"] = _miss_rate(un["hits"], un["misses"], un["conflicts"])
            ram = _ramulator(loadstore, ramulator_root) if ramulator_root else None
            row["ramulator_untimed"] = _miss_rate(ram["hits"], ram["misses"], ram["conflicts"]) if ram else None
            rows.append(row)
            print(f"{row['mix']} {policy}: {row}", file=sys.stderr)
    return rows


def markdown(rows: list[dict[str, Any]], ramulator_root: str | None) -> str:
    def pct(v: float | None) -> str:
        return "n/a" if v is None else f"{100 * v:.1f} %"

    lines = ["# Cross-check: the BPM mechanism in a reference simulator", "",
             f"Generated by `python -m memtint.reproduce.crosscheck` on {datetime.date.today()}; do not edit, "
             "regenerate. " + (__doc__ or "").split("\n\n")[1].replace("\n", " "), "",
             f"Machine {MACHINE}; {INSTRUCTIONS:,} instructions per core after a {DEFAULT_WARMUP:,}-instruction "
             "warm-up; seed 1. Row-buffer miss rate = (misses + conflicts) / requests.", "",
             "| mix | policy | requests | shared run | memtint replay, timed | memtint replay, untimed | "
             "Ramulator 2.1 replay, untimed |", "|---|---|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['mix']} | {r['policy']} | {r['requests']:,} | {pct(r['shared'])} | {pct(r['replay_timed'])} "
                     f"| {pct(r['memtint_untimed'])} | {pct(r['ramulator_untimed'])} |")
    lines += ["", "Change from buddy to BPM on each mix (points of row-buffer miss rate):", "",
              "| mix | shared run | memtint replay, untimed | Ramulator 2.1 replay, untimed | same direction |",
              "|---|---:|---:|---:|---|"]
    for mix in dict.fromkeys(r["mix"] for r in rows):
        b, p = (next(r for r in rows if r["mix"] == mix and r["policy"] == x) for x in POLICIES)

        def delta(k: str) -> float | None:
            return None if b[k] is None or p[k] is None else 100 * (p[k] - b[k])

        dm, dr = delta("memtint_untimed"), delta("ramulator_untimed")
        same = "n/a" if dr is None else ("yes" if (dm > 0) == (dr > 0) else "no")
        lines.append(f"| {mix} | {delta('shared'):+.1f} | {dm:+.1f} | " + ("n/a" if dr is None else f"{dr:+.1f}")
                     + f" | {same} |")
    worst = max(abs(a - b) / max(b, 1) for r in rows for a, b in r["round_trip"].values())
    explained = all(sum(abs(a - b) for a, b in r["round_trip"].values()) <= r["in_flight"]
                    and all(a >= b for a, b in r["round_trip"].values()) for r in rows)
    lines += ["", f"Round trip: replaying each export in memtint's DRAM-trace mode at its recorded cycles gives the shared "
              f"run's row hits, misses and conflicts within {100 * worst:.2f} %; "
              + ("the replay only adds outcomes, no more than the requests still in flight when the shared run ended, "
                 "which it completes." if explained else "the differences exceed the requests in flight at the end."), ""]
    if not ramulator_root:
        lines += ["Ramulator 2.1 was not available (set MEMTINT_RAMULATOR2 to its built checkout): its column is "
                  "empty.", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=os.path.join("docs", "reproductions", "crosscheck.md"))
    args = parser.parse_args(argv)
    root = os.environ.get("MEMTINT_RAMULATOR2")
    with tempfile.TemporaryDirectory() as work:
        rows = run(work, root)
    from memtint.outputs import write_text

    write_text("--out", args.out, markdown(rows, root))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
