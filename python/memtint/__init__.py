"""memtint: a memory-system simulator (DRAM timing, address mapping, page colouring).

The simulation engine is Rust (the ``memtint._engine`` extension); this package is its Python
front end: the API below, the ``memtint`` command (:mod:`memtint.cli`) and the demo
(:mod:`memtint.demo`). Statistics are plain dictionaries with the schema documented in
docs/stats.md.

>>> import memtint
>>> stats = memtint.run_dram("ddr4-2400", memtint.generate("random", requests=10_000, seed=1))
>>> stats["read_latency_ns"]["mean"]  # doctest: +SKIP
"""

from memtint.api import MemtintError, generate, presets, run_dram, run_rt, run_sim, trace
from memtint.comparison import compare
from memtint.dataframes import to_frame
from memtint.sweep import load_results, sweep
from memtint.trace_analysis import trace_stats
from memtint._engine import version as _engine_version

__version__: str = _engine_version()

__all__ = ["MemtintError", "compare", "generate", "load_results", "presets", "run_dram", "run_rt", "run_sim", "sweep", "to_frame",
           "trace", "trace_stats", "__version__"]
