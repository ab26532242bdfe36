"""Evidence for the BPM direction claim on the i7-860 (docs/experiments/bpm-direction.md).

1. BPM's foundation check (bpm.md §8.2 test 1, the paper's Fig. 1): each program alone, held to
   8/16/32/64 banks by an explicit `bpm` colour set, IPC relative to 64 banks. Two ways to pick
   the colours: "one rank" (b21-22 fixed, b13-15 varied first: what the default even split gives
   each of 4 programs) and "all ranks" (b21-22 varied first).
2. The claim's mix (one stream + three light programs) under buddy, default bpm, and bpm with
   every program spread over all four ranks or over two; with the `light` profile and with the real SPEC
   CPU2006 light traces (gcc, dealII, namd: the paper's WL11); with and without the stream's
   writebacks.

Runs the engine's `sim_run` example directly (no Python package needed):

    cargo build --release -p memtint-engine --example sim_run
    python3 configs/experiments/bpm_direction.py [--controller '{"key": value}'] > tables.md

`--controller` adds `[controller]` overrides to every run (the machine's own otherwise).
`--prefetcher` adds a `[cache.prefetcher]` table to every run, alone runs included (e.g.
`'{"kind": "stream"}'`: the LLC stream prefetcher with its Intel-like defaults on every core).
The mix tables then also give each program's bank-level parallelism (banks busy with its reads,
prefetches included) under each policy.
"""

import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.path.join(ROOT, "target", "release", "examples", "sim_run")
SPEC = os.path.join(os.path.dirname(ROOT), "shared", "traces", "spec2006")
INSTRUCTIONS = 10_000_000
SPEC_LIGHT = ["403.gcc.gz", "447.dealII.gz", "444.namd.gz"]


PREFETCHER = None
QUICK = False
MACHINE = "i7-860"


def run(programs, os_cfg, controller):
    spec = {"machine": MACHINE, "programs": programs, "instructions": INSTRUCTIONS, "os": os_cfg, "seed": 1}
    overrides = {}
    if controller:
        overrides["controller"] = controller
    if PREFETCHER:
        overrides["cache"] = {"prefetcher": PREFETCHER}
    if overrides:
        spec["overrides"] = overrides
    out = subprocess.run([BIN, json.dumps(spec)], capture_output=True, text=True)
    if out.returncode:
        sys.exit(f"sim_run failed on {programs}: {out.stderr.strip()}")
    return json.loads(out.stdout)["cores"]


def one_rank_first(k):
    """k of the 32 bank colours (colour = b13-15 low, b21-22 high): b13-15 first."""
    return list(range(k))


def all_ranks_first(k):
    """k colours with b21-22 (the rank) varied first, then b13-15."""
    return sorted([r * 8 + b for b in range(8) for r in range(4)][:k])


def foundation(controller):
    programs = ["stream", "random", "copy", "light"] + [os.path.join(SPEC, t) for t in SPEC_LIGHT]
    print("| program | colours | 64 banks IPC | 32 | 16 | 8 | row-miss rate 64 -> 16 | BLP 64 -> 16 |")
    print("| --- | --- | ---: | ---: | ---: | ---: | --- | --- |")
    for p in programs:
        name = os.path.basename(p).removesuffix(".gz")
        for label, pick in (("one rank", one_rank_first), ("all ranks", all_ranks_first)):
            cores = {k: run([p], {"policy": "bpm", "colours": [pick(k)]}, controller)[0] for k in (32, 16, 8, 4)}
            ref = cores[32]["ipc"]
            rel = " | ".join(f"{cores[k]['ipc'] / ref:.3f}" for k in (16, 8, 4))
            rb = f"{cores[32]['row_buffer_miss_rate']:.3f} -> {cores[8]['row_buffer_miss_rate']:.3f}"
            blp = f"{cores[32]['bank_level_parallelism']:.2f} -> {cores[8]['bank_level_parallelism']:.2f}"
            print(f"| {name} | {label} | {ref:.3f} | {rel} | {rb} | {blp} |")


def alone_ipc(p, i, controller):
    # Program i of a mix draws from seed + i; its alone run gets the same seed.
    if not os.path.isabs(p):
        p = f"{p}{',' if ':' in p else ':'}seed={1 + i}"
    return run([p], {"policy": "buddy"}, controller)[0]["ipc"]


def mixes(controller):
    # Colour bits, low to high: b13, b14, b15, b21, b22.
    all_ranks = [[r * 8 + b for r in range(4) for b in (2 * s, 2 * s + 1)] for s in range(4)]
    two_ranks = [[b0 | b1 << 1 | (s & 1) << 2 | r << 3 | (s >> 1) << 4 for b0 in (0, 1) for b1 in (0, 1) for r in (0, 1)]
                 for s in range(4)]
    policies = [("buddy", {"policy": "buddy"}), ("bpm", {"policy": "bpm"}),
                ("bpm, all ranks", {"policy": "bpm", "colours": all_ranks}),
                ("bpm, two ranks", {"policy": "bpm", "colours": two_ranks})]
    streams = ("stream", "stream:writes_pki=0")
    if QUICK:
        policies, streams = policies[:2], streams[:1]
    print("| mix | policy | WS | light row-miss rate | slowdown stream | light 1 | light 2 | light 3 | worst IPC vs buddy | BLP stream / lights |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    for lights, lname in ((["light"] * 3, "3 x light"), ([os.path.join(SPEC, t) for t in SPEC_LIGHT], "gcc, dealII, namd")):
        for stream in streams:
            progs = [stream] + lights
            alone = [alone_ipc(p, i, controller) for i, p in enumerate(progs)]
            buddy = None
            for pname, os_cfg in policies:
                cores = run(progs, os_cfg, controller)
                ipc = [c["ipc"] for c in cores]
                buddy = buddy or ipc
                ws = sum(s / a for s, a in zip(ipc, alone))
                miss = sum(c["row_misses"] + c["row_conflicts"] for c in cores[1:])
                total = sum(c["row_hits"] + c["row_misses"] + c["row_conflicts"] for c in cores[1:])
                slow = " | ".join(f"{a / s:.3f}" for s, a in zip(ipc, alone))
                worst = min(s / b for s, b in zip(ipc, buddy))
                blp = " / ".join(f"{c['bank_level_parallelism']:.2f}" for c in cores)
                print(f"| {stream} + {lname} | {pname} | {ws:.3f} | {miss / total:.3f} | {slow} | {worst:.3f} | {blp} |")
                if PREFETCHER:
                    pf = [c.get("prefetch", {}) for c in cores]
                    # Under the four slowdown columns, one cell per core: the table's 10 columns.
                    print("|  | prefetches issued (useful+late) |  |  | " + " | ".join(
                        f"{p.get('issued', 0)} ({p.get('useful', 0) + p.get('late', 0)})" for p in pf) + " |  |  |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--controller", type=json.loads, default=None, help="[controller] overrides as JSON")
    ap.add_argument("--prefetcher", type=json.loads, default=None, help="[cache.prefetcher] table as JSON, for every run")
    ap.add_argument("--only", choices=["foundation", "mixes"], default=None, help="run one part only")
    ap.add_argument("--machine", default="i7-860", help="machine preset (the mixes' bpm colours other than the default split assume the i7-860)")
    ap.add_argument("--instructions", type=int, default=10_000_000, help="per-core instruction target")
    ap.add_argument("--quick", action="store_true", help="mixes: the stream with writebacks, buddy and default bpm only")
    args = ap.parse_args()
    global PREFETCHER, QUICK, MACHINE, INSTRUCTIONS
    PREFETCHER, QUICK, MACHINE, INSTRUCTIONS = args.prefetcher, args.quick, args.machine, args.instructions
    if not os.path.exists(BIN):
        sys.exit(f"{BIN} not found: cargo build --release -p memtint-engine --example sim_run")
    if not os.path.isdir(SPEC):
        sys.exit(f"{SPEC} not found: the SPEC CPU2006 traces live beside the repository")
    print(f"controller overrides: {json.dumps(args.controller)}; prefetcher: {json.dumps(args.prefetcher)}\n")
    if args.only != "mixes":
        foundation(args.controller)
        print()
    if args.only != "foundation":
        mixes(args.controller)


if __name__ == "__main__":
    main()
