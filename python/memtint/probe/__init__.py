"""Finding a machine's DRAM address mapping by timing (`memtint probe`, docs/probe.md)."""

from __future__ import annotations

from typing import Any


def simulate(machine: str, *, node: int = 0, jitter_ns: float = 0.0, spike_rate: float = 0.0,
             corunner_gbps: float = 0.0, seed: int = 1, **settings: Any) -> dict[str, Any]:
    """Run the mapping search in the simulator on `machine` (a preset or machine TOML) and its
    memory node `node`, with optional noise; the organisation's counts are the machine's.

    Returns ``{"fields", "true_fields", "exact", "matches", "functions", "problems", "warnings",
    "measurements", "result"}``: `fields` in the mapping file's `[fields]` form, `exact` whether
    they are the machine's as its file writes them, `matches` whether they are its mapping up to
    what timing cannot tell (the order of a field's functions, which bit of a bank XOR is the
    row's), `result` the `memtint.probe.search.ProbeResult`. Raises
    `memtint.probe.search.ProbeError` when the search refuses (the signal too weak).
    Keyword `settings` are `memtint.probe.search.Settings` fields."""
    from memtint.probe.search import Organisation, Search, Settings
    from memtint.probe.simulated import Noise, SimulatedTimer, mapping_differences, true_fields

    from memtint.api import MemtintError, whole_number

    if not isinstance(machine, (str, dict)):
        raise MemtintError(f"machine: expected a machine preset's name, TOML path or table, got {machine!r}")
    node, seed = whole_number("node", node), whole_number("seed", seed)
    for key, value in (("jitter_ns", jitter_ns), ("spike_rate", spike_rate), ("corunner_gbps", corunner_gbps)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < float("inf"):
            raise MemtintError(f"{key}: expected a number of at least 0, got {value!r}")
    timer = SimulatedTimer(machine, node=node, noise=Noise(jitter_ns, spike_rate, corunner_gbps), seed=seed)
    org = Organisation.from_engine(timer.truth()["organisation"])
    result = Search(timer, org, Settings(seed=seed, **settings)).run()
    truth = true_fields(timer.truth())
    return {
        "fields": result.fields(),
        "true_fields": truth,
        "exact": result.fields() == truth and not result.problems,
        "matches": not mapping_differences(result.fields(), truth) and not result.problems,
        "functions": [{"bits": f.bits(), "field": f.field, "consistency": f.consistency, "margin": f.margin}
                      for f in result.functions],
        "problems": result.problems,
        "warnings": result.warnings,
        "measurements": result.measurements,
        "result": result,
    }
