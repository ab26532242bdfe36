"""CCPS's OS side on a time-shared mix (docs/threads.md): one 12-thread "sysbench-like" process
of light threads plus six single-threaded programs on the 4-core, 64-bank CCPS machine, under
the Linux-like baseline (buddy placement, least-loaded binding, load balancing, FR-FCFS) and
under CCPS (core regions, Algorithm 1 binding, no load balancing, the CCPS controller order).
Prints context switches, the same-address-space switch ratio (ccps.md C5), migrations and the
row-buffer miss rate. Time slices are scaled down (600 k cycles) so that the short run switches.

    .venv/bin/python configs/experiments/ccps_threads.py [INSTRUCTIONS]
"""

import sys
import time

from memtint import api

procs = [{"name": "sysbench", "threads": ["light"] * 12}] + [{"threads": [p]} for p in ["stream", "copy", "random", "stream", "copy", "light"]]
for policy, sched in [("buddy", "fr-fcfs"), ("ccps", "ccps")]:
    t = time.time()
    s = api.run_sim("ccps-4c-64b", [], instructions=int(sys.argv[1]) if len(sys.argv) > 1 else 500000, policy=policy, scheduler=sched, processes=procs,
                    os_options={"sched": {"latency_cycles": 600000, "min_granularity_cycles": 75000, "balance_period_cycles": 800000}})
    sc = s["scheduling"]
    print(policy, sched, "switches", sc["context_switches"], "same-process ratio %.2f" % sc["same_process_switch_ratio"],
          "migrations", sc["migrations"], "sum IPC %.3f" % sum(c["ipc"] for c in s["cores"]),
          "RB miss %.3f" % s["row_buffer_miss_rate"], "cores of sysbench", sorted({c["first_core"] for c in s["cores"][:12]}),
          "wall %.1fs" % (time.time() - t), "core_cycles", s["core_cycles"])
