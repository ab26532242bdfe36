"""How the probe degrades with noise: every kind of noise a real probe meets, injected in the
simulator at rising levels, on machines with plain and XOR mappings, several seeds each. Each run
ends in one of three outcomes: the true mapping exactly, a refusal (the search says the signal is
too weak, or its result disagrees with the organisation's counts: nothing is written), or a wrong
mapping given without complaint (the outcome that must stay at zero).

    python -m memtint.probe.noise_study --out docs/probe   # noise.json, noise.png (docs/probe.md)
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from concurrent.futures import ProcessPoolExecutor

NOISE_LEVELS = {
    "jitter_ns": [0, 10, 20, 40, 80],
    "spike_rate": [0, 0.1, 0.2, 0.3, 0.45],
    "corunner_gbps": [0, 2, 4, 6, 8],
}
LABELS = {
    "jitter_ns": "timer jitter (normal, sd in ns)",
    "spike_rate": "share of rounds hit by a 1-3 µs interrupt",
    "corunner_gbps": "another core's random reads (GB/s)",
}
MACHINES = ["i7-860", "xor-bank", "ddr4-2400-xor"]


def one(job: tuple[str, str, float, int]) -> dict:
    from memtint.probe.search import Organisation, ProbeError, Search, Settings
    from memtint.probe.simulated import Noise, SimulatedTimer, mapping_differences, true_fields

    machine, kind, level, seed = job
    noise = Noise(**{kind: level})
    timer = SimulatedTimer(machine, noise=noise, seed=seed)
    org = Organisation.from_engine(timer.truth()["organisation"])
    out = {"machine": machine, "kind": kind, "level": level, "seed": seed}
    try:
        r = Search(timer, org, Settings(seed=seed, max_pairs=60_000)).run()
    except ProbeError as e:
        return out | {"outcome": "refused", "why": str(e), "measurements": timer.measurements}
    if r.problems:
        outcome = "refused"
    else:  # the machine's mapping up to what timing cannot tell (a field's order, an XOR's row bit)
        outcome = "wrong" if mapping_differences(r.fields(), true_fields(timer.truth())) else "exact"
    return out | {"outcome": outcome, "measurements": r.measurements, "confidence": r.confidence(), "problems": r.problems}


def study(seeds: int = 3, workers: int = 2) -> list[dict]:
    jobs = [(m, kind, level, seed) for kind, levels in NOISE_LEVELS.items() for level in levels for m in MACHINES
            for seed in range(1, seeds + 1)]
    with ProcessPoolExecutor(workers) as pool:
        return list(pool.map(one, jobs))


def plot(rows: list[dict], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(NOISE_LEVELS), figsize=(4.2 * len(NOISE_LEVELS), 3.4), sharey=True)
    for ax, (kind, levels) in zip(axes, NOISE_LEVELS.items()):
        for outcome, colour in (("exact", "tab:green"), ("refused", "tab:orange"), ("wrong", "tab:red")):
            shares = []
            for level in levels:
                sel = [r for r in rows if r["kind"] == kind and r["level"] == level]
                shares.append(100 * sum(r["outcome"] == outcome for r in sel) / max(len(sel), 1))
            ax.plot(levels, shares, marker="o", color=colour, label=outcome)
        ax.set_xlabel(LABELS[kind])
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("% of runs")
    axes[0].legend(loc="center left")
    fig.suptitle(f"memtint probe under noise ({', '.join(MACHINES)}; {len({r['seed'] for r in rows})} seeds each)")
    fig.tight_layout()
    from memtint.outputs import save_figure

    save_figure(fig, path, dpi=110)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, help="directory for noise.json and noise.png")
    ap.add_argument("--seeds", type=int, default=3)
    args = ap.parse_args()
    from memtint.outputs import check_output_dir, write_text

    check_output_dir("--out", args.out)  # before the study's runs, not after
    os.makedirs(args.out, exist_ok=True)
    rows = study(args.seeds)
    write_text("--out", os.path.join(args.out, "noise.json"), json.dumps(rows, indent=1))
    plot(rows, os.path.join(args.out, "noise.png"))
    for kind, levels in NOISE_LEVELS.items():
        for level in levels:
            sel = [r for r in rows if r["kind"] == kind and r["level"] == level]
            counts = {o: sum(r["outcome"] == o for r in sel) for o in ("exact", "refused", "wrong")}
            meas = sum(r["measurements"] for r in sel) / len(sel)
            print(f"| {kind} | {level:g} | {counts['exact']}/{len(sel)} | {counts['refused']} | {counts['wrong']} | {meas:,.0f} |")


if __name__ == "__main__":
    from memtint.api import MemtintError

    try:
        main()
    except MemtintError as error:
        print(f"noise_study: error: {error}", file=sys.stderr)
        sys.exit(2)
