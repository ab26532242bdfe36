"""Write docs/api.md from the package's signatures and docstrings (`make api-docs`)."""

import inspect
import os

import memtint
from memtint import api, capture, linux, probe, workloads
from memtint.sweep import run_sweep

SECTIONS = [
    ("DRAM-level runs", [("memtint.run_dram", memtint.run_dram), ("memtint.generate", memtint.generate),
                         ("memtint.trace", memtint.trace), ("memtint.presets", memtint.presets)]),
    ("CPU-trace runs and comparisons", [
        ("memtint.run_sim", memtint.run_sim), ("memtint.api.build_sim_spec", api.build_sim_spec),
        ("memtint.api.run_sim_spec", api.run_sim_spec), ("memtint.run_rt", memtint.run_rt), ("memtint.compare", memtint.compare),
        ("memtint.api.mix_metrics", api.mix_metrics), ("memtint.api.cpu_trace_stats", api.cpu_trace_stats),
        ("memtint.api.convert_trace", api.convert_trace), ("memtint.api.mix_programs", api.mix_programs),
        ("memtint.trace_stats", memtint.trace_stats)]),
    ("Capturing traces of real programs (docs/tracing.md)", [
        ("memtint.capture.capture_trace", capture.capture_trace), ("memtint.capture.trace_files", capture.trace_files),
        ("memtint.capture.tool_lib_dir", capture.tool_lib_dir),
        ("memtint.workloads.load_recipes", workloads.load_recipes),
        ("memtint.workloads.capture_workload", workloads.capture_workload),
        ("memtint.workloads.commit_traces", workloads.commit_traces)]),
    ("Sweeps and results", [("memtint.sweep", memtint.sweep), ("memtint.sweep.run_sweep", run_sweep),
                            ("memtint.load_results", memtint.load_results),
                            ("memtint.to_frame", memtint.to_frame)]),
    ("Colouring on real Linux (docs/linux.md)", [
        ("memtint.linux.inspect_process", linux.inspect_process), ("memtint.linux.run_coloured", linux.run_coloured),
        ("memtint.linux.run_mix", linux.run_mix), ("memtint.linux.colour_layout", linux.colour_layout),
        ("memtint.linux.policy_partition", linux.policy_partition),
        ("memtint.linux.library_path", linux.library_path)]),
    ("Finding the DRAM address mapping (docs/probe.md)", [("memtint.probe.simulate", probe.simulate)]),
]

HEADER = """# Python API reference

`import memtint`. Every function is a thin layer over the Rust engine's JSON boundary; the names
of machines, mappings, schedulers, policies and options are those of the TOML presets and the
`memtint` command. Results are plain dictionaries (schemas in [stats.md](stats.md)); `to_frame`
and `load_results` turn them into pandas DataFrames. Every error memtint raises for a wrong
argument, a bad input or an unusable host is a `memtint.MemtintError` with the full message (the
Linux commands' `LinuxError` and the probe's `ProbeError` are kinds of it), so one `except`
catches them all. The engine releases the GIL, so threads and processes can both drive it.
"""


def render() -> str:
    lines = [HEADER]
    for title, objs in SECTIONS:
        lines += [f"## {title}", ""]
        for name, obj in objs:
            lines += [f"### `{name}{inspect.signature(obj)}`", "", inspect.getdoc(obj) or "", ""]
    lines.append("Generated from the docstrings by `make api-docs` (docs/gen_api.py); a test checks that every")
    lines.append("public name of `memtint` is listed here, and that this page is what the code says today.")
    # Defaults that are paths inside the checkout (a workloads directory) read the same in any clone.
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return ("\n".join(lines) + "\n").replace(root, "<checkout>")


if __name__ == "__main__":
    with open(os.path.join(os.path.dirname(__file__), "api.md"), "w", encoding="utf-8") as f:
        f.write(render())
