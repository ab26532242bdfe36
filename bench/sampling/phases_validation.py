"""Phase sampling against periodic sampling and detailed simulation, one program per run
(docs/sampling.md, "Phases").

Every program of the captured suite (workloads/traces) and, where present, the SPEC CPU2006
traces beside this repository, alone on the i7-860 after the sweeps' 20 M warm-up, at
``--instructions`` per run: detailed, periodic (the defaults) and phases (the defaults), over
``--seeds`` OS seeds (the units' draws). Prints each program's IPC errors, whether each 95 %
interval holds the detailed IPC, units and CPU seconds, then the totals with the row-buffer
miss rate's and the DRAM energy's errors and intervals likewise; ``--json`` keeps them.

    .venv/bin/python bench/sampling/phases_validation.py [--instructions 30000000] [--seeds 3] [--warm-prefetchers]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))

from memtint import api  # noqa: E402

WARMUP = 20_000_000


def programs() -> list[str]:
    suite = sorted(str(p) for p in (ROOT / "workloads" / "traces").glob("*.t1.mtt.gz"))
    spec = sorted(str(p) for p in (ROOT.parent / "shared" / "traces" / "spec2006").glob("*.gz"))
    return suite + spec


def run(program: str, instructions: int, seed: int, mode: str | None, warm_prefetchers: bool = False) -> tuple[dict, float]:
    spec = api.build_sim_spec("i7-860", [program], instructions=instructions, policy="buddy", seed=seed, warmup=WARMUP)
    if mode:
        spec["sampling"] = {"mode": mode, **({"warm_prefetchers": True} if warm_prefetchers else {})}
    t = time.process_time()
    r = api.run_sim_spec(spec)
    return r, time.process_time() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--instructions", type=int, default=30_000_000)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--warm-prefetchers", action="store_true", help="sampling.warm_prefetchers = true in both modes")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    rows = []
    for program in programs():
        name = Path(program).name.split(".t1")[0].removesuffix(".gz")
        detailed, t_detailed = run(program, args.instructions, 1, None)
        ipc = detailed["cores"][0]["ipc"]
        rb, energy = detailed["row_buffer_miss_rate"], detailed["dram"]["energy"]["total_nj"]
        for seed in range(1, args.seeds + 1):
            row = {"program": name, "seed": seed, "ipc": ipc, "row_buffer_miss_rate": rb, "dram_energy_nj": energy,
                   "detailed_s": t_detailed}
            for mode in ("periodic", "phases"):
                r, t = run(program, args.instructions, seed, mode, args.warm_prefetchers)
                c, s = r["cores"][0], r["sampling"]
                lo, hi = c["sampling"]["ipc_ci95"]
                hi = float("inf") if hi is None else hi  # unbounded: every unit measured one CPI
                rb_lo, rb_hi = s["row_buffer_miss_rate_ci95"]
                e_lo, e_hi = s["estimated_dram_energy_nj_ci95"]
                row[mode] = {"error": 100 * (c["ipc"] / ipc - 1), "covers": lo <= ipc <= hi, "unbounded": hi == float("inf"), "units": c["sampling"]["units"],
                             "rb_error": 100 * (r["row_buffer_miss_rate"] - rb), "rb_covers": rb_lo is not None and rb_lo <= rb <= rb_hi,
                             "rb_unbounded": rb_lo is None,
                             "energy_error": 100 * (s["estimated_dram_energy_nj"] / energy - 1),
                             "energy_covers": e_lo is not None and e_lo <= energy <= e_hi,
                             "seconds": t, "phases": (s.get("phases") or {}).get("phases")}
            rows.append(row)
            print(f"{name:12s} seed {seed} IPC {ipc:.3f}: periodic {row['periodic']['error']:+.2f} % "
                  f"({'in' if row['periodic']['covers'] else 'OUT'}, {row['periodic']['units']} units), phases "
                  f"{row['phases']['error']:+.2f} % ({'in' if row['phases']['covers'] else 'OUT'}, "
                  f"{row['phases']['units']} units, {row['phases']['phases']} phases)", flush=True)
    print()
    for mode in ("periodic", "phases"):
        errors = [abs(r[mode]["error"]) for r in rows]
        covered = sum(r[mode]["covers"] for r in rows)
        unbounded = sum(r[mode].get("unbounded", False) for r in rows)
        print(f"{mode}: IPC mean absolute error {statistics.fmean(errors):.2f} % (largest {max(errors):.2f} %), "
              f"interval holds the detailed IPC {covered} of {len(rows)} ({unbounded} unbounded), units {statistics.fmean(r[mode]['units'] for r in rows):.0f} "
              f"on average, CPU {statistics.fmean(r[mode]['seconds'] for r in rows):.2f} s per run "
              f"(detailed {statistics.fmean(r['detailed_s'] for r in rows):.2f} s)")
        rb_errors = [abs(r[mode]["rb_error"]) for r in rows]
        energy_errors = [abs(r[mode]["energy_error"]) for r in rows]
        print(f"  row-buffer miss rate mean absolute error {statistics.fmean(rb_errors):.2f} points (largest "
              f"{max(rb_errors):.2f}), interval holds the detailed rate {sum(r[mode]['rb_covers'] for r in rows)} of "
              f"{len(rows)} ({sum(r[mode]['rb_unbounded'] for r in rows)} unbounded); DRAM energy {statistics.fmean(energy_errors):.2f} % (largest {max(energy_errors):.2f} %), "
              f"interval holds it {sum(r[mode]['energy_covers'] for r in rows)} of {len(rows)}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
