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
../shared/peers/README.md says). Each of its measurements is kept in
configs/reproductions/crosscheck-ramulator.json with the SHA-256 of the stream it replayed; without
Ramulator, a stream identical to a measured one (same hash) takes the stored figure, marked so, and
any other has no Ramulator figure.

Run: ``python -m memtint.reproduce.crosscheck [--out docs/reproductions/crosscheck.md]``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import hashlib
import subprocess
import sys
import tempfile
from typing import Any

from memtint import api
from memtint.comparison import DEFAULT_WARMUP
from memtint.reproduce import common
from memtint.reproduce.figures import FIGURES_DIR

MACHINE = "ddr4-2400"
MIXES = (["triad", "bfs", "spmv", "chase"], ["hashprobe", "kvstore", "pagerank", "fdtd"])
POLICIES = ("buddy", "bpm")
INSTRUCTIONS = int(os.environ.get("MEMTINT_CROSSCHECK_INSTRUCTIONS", 2_000_000))
#: Ramulator 2.1's measurements, by the SHA-256 of the stream replayed (its LoadStoreTrace file).
REFERENCE = str(FIGURES_DIR / "crosscheck-ramulator.json")

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


def _sha256(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _ramulator_version(root: str) -> str:
    done = subprocess.run(["git", "-C", root, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return done.stdout.strip() if done.returncode == 0 and done.stdout.strip() else "unknown commit"


def load_reference(path: str | None) -> dict[str, dict[str, Any]]:
    """Stored Ramulator measurements by stream hash ({} when there is no file)."""
    if not path or not os.path.exists(path):
        return {}
    try:
        with open(path) as f:
            data = json.load(f)
        return {e["stream_sha256"]: e for e in data["measurements"]}
    except (OSError, ValueError, KeyError, TypeError, RecursionError) as error:
        raise api.MemtintError(f"{path}: not a cross-check reference file ({type(error).__name__}: {error})") from None


def run(workdir: str, ramulator_root: str | None, reference: dict[str, dict[str, Any]] | None = None
        ) -> list[dict[str, Any]]:
    """Each mix and policy's shared run, its export and the replays. With ``ramulator_root``
    Ramulator replays each stream (``row["ramulator"]`` holds the measurement to store); without
    it a stream whose hash is in ``reference`` takes the stored measurement (``row["stored"]``)."""
    reference = reference or {}
    version = _ramulator_version(ramulator_root) if ramulator_root else None
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
            sha = row["stream_sha256"] = _sha256(loadstore)
            if ramulator_root:
                ram = _ramulator(loadstore, ramulator_root)
                row["ramulator"] = {"mix": row["mix"], "policy": policy, "requests": row["requests"],
                                    "stream_sha256": sha, **ram, "ramulator": version,
                                    "measured": str(datetime.date.today())}
            else:
                ram = reference.get(sha)
                row["stored"] = ram is not None
            row["ramulator_untimed"] = _miss_rate(ram["hits"], ram["misses"], ram["conflicts"]) if ram else None
            rows.append(row)
            print(f"{row['mix']} {policy}: {row}", file=sys.stderr)
    return rows


def markdown(rows: list[dict[str, Any]], ramulator_root: str | None,
             reference: dict[str, dict[str, Any]] | None = None) -> str:
    def pct(v: float | None) -> str:
        return "n/a" if v is None else f"{100 * v:.1f} %"

    def ram(r: dict[str, Any]) -> str:
        return pct(r["ramulator_untimed"]) + (" *" if r.get("stored") and r["ramulator_untimed"] is not None else "")

    lines = ["# Cross-check: the BPM mechanism in a reference simulator", "",
             f"Generated by `python -m memtint.reproduce.crosscheck` on {datetime.date.today()}; do not edit, "
             "regenerate. " + (__doc__ or "").split("\n\n")[1].replace("\n", " "), "",
             f"Machine {MACHINE}; {INSTRUCTIONS:,} instructions per core after a {DEFAULT_WARMUP:,}-instruction "
             "warm-up; seed 1. Row-buffer miss rate = (misses + conflicts) / requests.", "",
             "| mix | policy | requests | shared run | memtint replay, timed | memtint replay, untimed | "
             "Ramulator 2.1 replay, untimed |", "|---|---|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['mix']} | {r['policy']} | {r['requests']:,} | {pct(r['shared'])} | {pct(r['replay_timed'])} "
                     f"| {pct(r['memtint_untimed'])} | {ram(r)} |")
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
        stored = [(reference or {})[r["stream_sha256"]] for r in rows if r.get("stored")]
        if stored:
            when = sorted({f"{e.get('measured', '?')} with Ramulator 2.1 {e.get('ramulator', '?')}" for e in stored})
            lines += [f"Ramulator 2.1 was not run here (set MEMTINT_RAMULATOR2 to its built checkout). Figures marked * "
                      f"are its stored measurements of the identical streams (the same SHA-256; "
                      f"configs/reproductions/crosscheck-ramulator.json), measured on {', '.join(when)}.", ""]
        if len(stored) < len(rows):
            lines += [f"Ramulator 2.1 was not available (set MEMTINT_RAMULATOR2 to its built checkout) and "
                      f"{len(rows) - len(stored)} of the {len(rows)} streams differ from every stored measurement: "
                      "their Ramulator figures are n/a.", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=os.path.join("docs", "reproductions", "crosscheck.md"))
    parser.add_argument("--reference", default=REFERENCE, metavar="FILE",
                        help="Ramulator's measurements by stream hash: read without Ramulator, updated with it "
                        "(default configs/reproductions/crosscheck-ramulator.json)")
    args = parser.parse_args(argv)
    from memtint.outputs import check_outputs

    check_outputs({"--out": args.out}, [args.reference])  # the report never replaces the measurements it reads
    root = os.environ.get("MEMTINT_RAMULATOR2")
    reference = load_reference(args.reference)
    with tempfile.TemporaryDirectory() as work:
        rows = run(work, root, reference)
    from memtint.outputs import write_text

    write_text("--out", args.out, markdown(rows, root, reference))
    print(f"wrote {args.out}")
    if root:  # this run's measurements replace the stored ones: streams of older engines are not kept
        reference = {r["ramulator"]["stream_sha256"]: r["ramulator"] for r in rows}
        write_text("--reference", args.reference, json.dumps(
            {"about": "Ramulator 2.1's row-buffer outcomes on the cross-check's streams (memtint.reproduce.crosscheck), "
                      "by the SHA-256 of the LoadStoreTrace file replayed",
             "measurements": list(reference.values())},
            indent=1) + "\n")
        print(f"wrote {args.reference}")
    return 0


if __name__ == "__main__":
    from memtint.api import MemtintError

    try:
        sys.exit(main())
    except MemtintError as error:  # a user's error is one line, as memtint's commands print it
        sys.stderr.write(f"crosscheck: error: {error}\n")
        sys.exit(2)
