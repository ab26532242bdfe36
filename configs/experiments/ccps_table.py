"""The CCPS grid's headline table: per machine (cores x banks) and policy, weighted speedup and
maximum slowdown normalised to buddy + FR-FCFS on the same mix (mean over mixes), and the
row-buffer miss rate. Reads the sweep results that `make experiment-ccps` writes.

    .venv/bin/python configs/experiments/ccps_table.py results/ccps-4c results/ccps-8c results/ccps-16c
"""

import sys

import memtint

ORDER = ["buddy", "bpm", "buddy+tcm", "imps+imps", "ccps+ccps"]
NAMES = {"buddy": "buddy + FR-FCFS", "bpm": "BPM", "buddy+tcm": "TCM", "imps+imps": "IMPS", "ccps+ccps": "CCPS"}


def main(dirs: list[str]) -> None:
    print("| machine | " + " | ".join(f"{NAMES[p]} WS/base" for p in ORDER[1:]) + " | "
          + " | ".join(f"{NAMES[p]} MS/base" for p in ORDER[1:]) + " | RB miss % (" + ", ".join(NAMES[p] for p in ORDER) + ") |")
    print("| --- |" + " ---: |" * (2 * (len(ORDER) - 1) + 1))
    for d in dirs:
        df = memtint.load_results(d)
        runs = df.drop_duplicates("config_hash")
        for machine in dict.fromkeys(runs["machine"]):
            m = runs[runs["machine"] == machine]
            base = m[m["policy"] == "buddy"].set_index("mix")
            ws, ms, rb = [], [], []
            for p in ORDER:
                r = m[m["policy"] == p].set_index("mix")
                ws.append((r["weighted_speedup"] / base["weighted_speedup"]).mean())
                ms.append((r["maximum_slowdown"] / base["maximum_slowdown"]).mean())
                rb.append(100 * r["mix_row_buffer_miss_rate"].mean())
            print(f"| {machine} | " + " | ".join(f"{x:.3f}" for x in ws[1:]) + " | "
                  + " | ".join(f"{x:.3f}" for x in ms[1:]) + " | " + ", ".join(f"{x:.1f}" for x in rb) + " |")


if __name__ == "__main__":
    main(sys.argv[1:])
