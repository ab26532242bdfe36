"""The training run of a profile-guided build (`make pgo`) for the Python extension.

The extension links its own copy of the engine (other symbol names than the Rust benchmarks'),
so it is trained on its own: `make pgo` builds it with `-Cprofile-generate`, and this script
loads that build from the path given and runs bench/pgo/training.json through it (the same runs
as bench/src/pgo_train.rs).

    python bench/pgo/train_extension.py PATH/TO/_engine.abi3.so
"""

import importlib.machinery
import importlib.util
import json
import os
import sys
import time


def load(path):
    loader = importlib.machinery.ExtensionFileLoader("memtint._engine", path)
    spec = importlib.util.spec_from_file_location("memtint._engine", path, loader=loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def training_specs(t):
    for setup in t["dram"]:
        for kind in t["dram_workloads"]:
            spec = dict(setup, outstanding=t["dram_outstanding"])
            spec["workload"] = {"generate": {"kind": kind, "requests": t["dram_requests"], "seed": t["seed"]}}
            yield "dram", spec
    for sim in t["sim"]:
        yield "sim", dict(sim, seed=t["seed"])


def main():
    if len(sys.argv) != 2 or not os.path.isfile(sys.argv[1]):
        sys.exit("usage: train_extension.py PATH/TO/_engine.abi3.so (an instrumented build of the extension)")
    engine = load(sys.argv[1])
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "training.json")) as f:
        training = json.load(f)
    started, runs = time.time(), 0
    for kind, spec in training_specs(training):
        run = engine.run_dram if kind == "dram" else engine.run_sim
        run(json.dumps(spec))
        runs += 1
    print(f"train_extension: {runs} runs in {time.time() - started:.1f} s")


if __name__ == "__main__":
    main()
