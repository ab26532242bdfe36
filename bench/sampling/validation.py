"""Sampled against detailed simulation on random 4-program mixes (docs/sampling.md).

For each mix (seeded, from the captured suite in workloads/traces and, where present, the SPEC
CPU2006 traces beside this repository) and each policy: the shared run detailed and sampled, and
every program's alone run both ways; then the weighted speedup (WS) each way, each policy's WS
change against buddy, whether the sampled runs order every pair of policies whose detailed WS
differ by more than 1 % as the detailed runs do, whether the sampled 95 % interval covers the
detailed WS, and how the sampled runs order the pairs their intervals separate (no overlap).
Writes the rows and the summary as JSON and prints the summary.

    python bench/sampling/validation.py --mixes 50 --instructions 30000000 --out docs/sampling/validation.json

Matched units by default, as ``memtint compare`` and sweeps run them: each policy's sampled
shared run replays the schedule of buddy's (``--self-paced``: every run paces itself).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT / "python"))

from memtint import api, sampling  # noqa: E402
from memtint.comparison import build_alone_specs  # noqa: E402

POLICIES = ["buddy", "bpm", "cache-only", "bank-only", "a-vp", "random-interleave"]
MACHINE = "i7-860"
WARMUP = 20_000_000


def programs() -> list[str]:
    suite = sorted(str(p) for p in (ROOT / "workloads" / "traces").glob("*.t1.mtt.gz"))
    spec = sorted(str(p) for p in (ROOT.parent / "shared" / "traces" / "spec2006").glob("*.gz"))
    return suite + spec


def _run(spec: dict) -> tuple[dict, float]:
    t = time.process_time()
    r = api.run_sim_spec(spec)
    return r, time.process_time() - t


def _cache_path(args: tuple) -> Path | None:
    """Detailed runs are kept (in $MEMTINT_CACHE_DIR/validation) to compare several sampling
    settings against the same detailed runs."""
    kind, _, mix, policy, instructions, samp = args
    if samp:
        return None
    import hashlib

    from memtint.comparison import _identity, cache_dir
    key = json.dumps([kind, [_identity(p) for p in mix], policy, instructions, WARMUP, MACHINE, api._engine.version()])
    return cache_dir() / "validation" / (hashlib.sha256(key.encode()).hexdigest() + ".json")


def task(args: tuple[str, int, list[str], str, int, dict | None]) -> dict:
    kind, mix_id, mix, policy, instructions, samp = args
    cached = _cache_path(args)
    if cached is not None and cached.exists():
        row = json.loads(cached.read_text())
        row["mix"] = mix_id
        return row
    if kind == "alone":
        spec = build_alone_specs(MACHINE, mix, instructions=instructions, seed=1, warmup=WARMUP)[int(policy)]
    else:
        spec = api.build_sim_spec(MACHINE, mix, instructions=instructions, policy=policy, seed=1, warmup=WARMUP)
    if samp:
        spec["sampling"] = samp
    r, cpu = _run(spec)
    row = {"kind": kind, "mix": mix_id, "policy": policy, "sampled": bool(samp), "cpu_seconds": cpu,
           "cores": [{"ipc": c["ipc"], "sampling": c.get("sampling")} for c in r["cores"]]}
    if samp and kind == "shared":  # what a matched run of another policy replays
        row["schedule"] = (r.get("sampling") or {}).get("schedule")
    if cached is not None:
        cached.parent.mkdir(parents=True, exist_ok=True)
        cached.write_text(json.dumps(row))
    return row


def summarise(mixes: list[list[str]], rows: list[dict]) -> dict:
    by = {(r["kind"], r["mix"], r["policy"], r["sampled"]): r for r in rows}
    ws_err, change_err, covered, pairs, agree, cpu = [], [], [], 0, 0, {True: [], False: []}
    # Pairs whose sampled 95 % intervals do not overlap: the orderings a sampled sweep resolves.
    separated, separated_agree = 0, 0
    # The same with each pair's own interval on its WS change (sampling.difference_intervals,
    # where the alone runs' errors cancel), and how often it holds the detailed change.
    paired, paired_agree, paired_covered, paired_matched = 0, 0, [], 0
    per_mix = []
    for r in rows:
        cpu[r["sampled"]].append(r["cpu_seconds"])
    for m, mix in enumerate(mixes):
        alone = {s: [by[("alone", m, str(i), s)]["cores"][0] for i in range(len(mix))] for s in (False, True)}
        ws, ci = {}, {}
        for p in POLICIES:
            for s in (False, True):
                shared = by[("shared", m, p, s)]
                ws[(p, s)] = sum(c["ipc"] / a["ipc"] for c, a in zip(shared["cores"], alone[s]))
            ci[p] = sampling.mix_intervals(alone[True], by[("shared", m, p, True)])["weighted_speedup"]
            ws_err.append(abs(ws[(p, True)] / ws[(p, False)] - 1))
            covered.append(ci[p][0] <= ws[(p, False)] <= ci[p][1])
            if p != "buddy":
                change = lambda s: ws[(p, s)] / ws[("buddy", s)] - 1  # noqa: E731
                change_err.append(abs(change(True) - change(False)))
        mix_agree = True
        for i, p in enumerate(POLICIES):
            for q in POLICIES[i + 1:]:
                diff = sampling.difference_intervals(alone[True], by[("shared", m, p, True)], by[("shared", m, q, True)])
                lo, hi = diff["weighted_speedup_change"]
                paired_matched += sampling.matched(by[("shared", m, p, True)], by[("shared", m, q, True)])
                detailed_change = ws[(p, False)] / ws[(q, False)] - 1
                paired_covered.append(lo is not None and lo <= detailed_change <= hi)
                if lo is not None and (lo > 0 or hi < 0):
                    paired += 1
                    paired_agree += (ws[(p, False)] > ws[(q, False)]) == (lo > 0)
                if ci[p][0] > ci[q][1] or ci[q][0] > ci[p][1]:
                    separated += 1
                    separated_agree += (ws[(p, False)] > ws[(q, False)]) == (ws[(p, True)] > ws[(q, True)])
                if abs(ws[(p, False)] / ws[(q, False)] - 1) <= 0.01:
                    continue
                pairs += 1
                same = (ws[(p, False)] > ws[(q, False)]) == (ws[(p, True)] > ws[(q, True)])
                agree += same
                mix_agree &= same
        per_mix.append({"mix": [Path(x).name for x in mix], "ranking_agrees": mix_agree,
                        "ws_detailed": {p: ws[(p, False)] for p in POLICIES},
                        "ws_sampled": {p: ws[(p, True)] for p in POLICIES}, "ws_ci95": ci})
    mean = lambda x: sum(x) / len(x) if x else float("nan")  # noqa: E731
    return {
        "mixes": len(mixes), "policies": POLICIES,
        "ws_mean_abs_error": mean(ws_err), "ws_max_abs_error": max(ws_err),
        "ws_change_mean_abs_error": mean(change_err),
        "pairs_compared": pairs, "pair_agreement": agree / pairs if pairs else float("nan"),
        "mixes_ranked_alike": sum(m["ranking_agrees"] for m in per_mix) / len(per_mix),
        "pairs_separated": separated,
        "separated_agreement": separated_agree / separated if separated else float("nan"),
        "interval_coverage": mean(covered),
        "pairs_matched": paired_matched,
        "pairs_separated_by_difference": paired,
        "difference_separated_agreement": paired_agree / paired if paired else float("nan"),
        "difference_coverage": mean(paired_covered),
        "cpu_seconds_per_run": {"detailed": mean(cpu[False]), "sampled": mean(cpu[True])},
        "per_mix": per_mix,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mixes", type=int, default=50)
    ap.add_argument("--instructions", type=int, default=30_000_000)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--sampling", default=json.dumps(sampling.DEFAULT_SAMPLING), help="the sampling table, JSON")
    ap.add_argument("--alone-sampling", help="the alone runs' sampling table, JSON (default: --sampling's)")
    ap.add_argument("--self-paced", action="store_true",
                    help="each policy's sampled shared run paces itself (default: matched units, as compare and "
                         "sweeps: every policy replays buddy's schedule)")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    samp = json.loads(args.sampling)
    alone_samp = json.loads(args.alone_sampling) if args.alone_sampling else samp
    pool_programs = programs()
    rng = random.Random(args.seed)
    mixes = [rng.sample(pool_programs, 4) for _ in range(args.mixes)]
    tasks = []
    for m, mix in enumerate(mixes):
        for s, a in ((None, None), (samp, alone_samp)):
            tasks += [("alone", m, mix, str(i), args.instructions, a) for i in range(len(mix))]
            tasks += [("shared", m, mix, p, args.instructions, s) for p in POLICIES]
    # Matched: a policy's sampled shared run waits for buddy's, whose schedule it replays.
    waits = lambda t: not args.self_paced and t[0] == "shared" and t[5] and t[3] != "buddy"  # noqa: E731
    later = [t for t in tasks if waits(t)]
    rows = []
    with ProcessPoolExecutor(args.jobs) as pool:
        futures = {pool.submit(task, t) for t in tasks if not waits(t)}
        done = 0
        while futures:
            finished, futures = wait(futures, return_when=FIRST_COMPLETED)
            for f in finished:
                row = f.result()
                rows.append(row)
                done += 1
                if row["kind"] == "shared" and row["sampled"] and row["policy"] == "buddy" and not args.self_paced:
                    for t in (t for t in later if t[1] == row["mix"]):
                        futures.add(pool.submit(task, t[:5] + (dict(t[5], schedule=row["schedule"]),)))
                if done % 20 == 0 or done == len(tasks):
                    print(f"{done}/{len(tasks)} runs", file=sys.stderr, flush=True)
    for r in rows:
        r.pop("schedule", None)
    summary = summarise(mixes, rows)
    summary.update({"instructions": args.instructions, "warmup": WARMUP, "machine": MACHINE, "sampling": samp,
                    "matched": not args.self_paced,
                    "alone_sampling": alone_samp,
                    "seed": args.seed})
    short = {k: v for k, v in summary.items() if k != "per_mix"}
    print(json.dumps(short, indent=1))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(summary, indent=1) + "\n")


if __name__ == "__main__":
    main()
