"""The probe's timer in the simulator: measurements run through a machine's simulated memory
system (`memtint._engine.probe_rounds`, crates/memtint-engine/src/mapping_probe.rs), where the
true mapping is known, so a search's result can be checked against it."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from typing import Sequence

from memtint.probe.timer import AddressSpace, Measurement

# Loads per engine call: well inside the engine's own bound, small enough to show progress.
BATCH_LOADS = 400_000
# The noise the engine takes (mapping_probe.rs, Noise::validate).
MAX_JITTER_NS = 1_000_000
MAX_CORUNNER_GBPS = 10_000


@dataclass
class Noise:
    """What disturbs a real probe, added in simulation (docs/probe.md)."""

    jitter_ns: float = 0.0
    spike_rate: float = 0.0
    corunner_gbps: float = 0.0

    def as_spec(self) -> dict:
        return {"jitter_ns": self.jitter_ns, "spike_rate": self.spike_rate, "corunner_gbps": self.corunner_gbps}


def true_fields(node: dict) -> dict[str, list]:
    """A node's true `[fields]` as `ProbeResult.fields` gives them (a single bit as an int)."""
    return {k: [b[0] if len(b) == 1 else b for b in v] for k, v in node["fields"].items()}


def _span(terms: list) -> dict[int, int]:
    from memtint.probe import gf2

    return gf2.echelon(sum(1 << b for b in ([t] if isinstance(t, int) else t)) for t in terms)


BANK_FIELDS = ("channel", "rank", "bank_group", "bank")


def mapping_differences(found: dict[str, list], truth: dict[str, list]) -> list[str]:
    """The fields in which `found` is not the mapping `truth`, up to what timing cannot tell:
    the order of a field's functions (bank 3 and bank 5 behave alike) and which bit of a bank
    XOR also feeds the row. So a bank-selecting field matches when its functions span the same
    space, the row when it does together with every bank function (the same rows within each
    bank), the column by its count and by every bit of the mapping being independent of the
    others. Empty when they match."""
    out = []
    every_bank = [t for f in BANK_FIELDS for t in truth.get(f, [])]
    found_bank = [t for f in BANK_FIELDS for t in found.get(f, [])]
    for field in (*BANK_FIELDS, "row", "column"):
        mine, want = found.get(field, []), truth.get(field, [])
        if len(mine) != len(want):
            out.append(field)
        elif field in BANK_FIELDS and _span(mine) != _span(want):
            out.append(field)
        elif field == "row" and _span(mine + found_bank) != _span(want + every_bank):
            out.append(field)
        elif field == "column" and len(_span(mine + found.get("row", []) + found_bank)) != len(
                _span(want + truth.get("row", []) + every_bank)):  # not a bijection: a column bit is no column
            out.append(field)
    return out


def describe(machine: str) -> dict:
    """The machine's nodes, organisation and true fields, from the engine."""
    from memtint import _engine

    return json.loads(_engine.probe_rounds(json.dumps({"machine": machine})))["machine"]


@dataclass
class SimulatedTimer:
    machine: str
    node: int = 0
    noise: Noise = field(default_factory=Noise)
    repetitions: int = 8
    warmup: int = 1
    seed: int = 1
    # The share of the node's frames the simulated buffer holds (a real probe's buffer is a
    # share of memory too, its frames scattered by the kernel).
    share: float = 0.125
    name: str = "simulated"
    measurements: int = 0
    loads: int = 0
    # `describe(machine)`, when the caller has it already.
    info: dict | None = None

    def __post_init__(self) -> None:
        if self.info is None:
            self.info = describe(self.machine)
        if not 0 <= self.node < len(self.info["nodes"]):
            raise ValueError(f"node {self.node}: the machine {self.machine} has {len(self.info['nodes'])} memory node(s)")
        self._calls = 0

    def truth(self) -> dict:
        return self.info["nodes"][self.node]

    def space(self) -> AddressSpace:
        n = self.truth()
        return AddressSpace.random_share(n["capacity_bits"], self.share, random.Random(self.seed), base=n["base"])

    def time(self, batch: Sequence[Measurement]) -> list[list[float]]:
        from memtint import _engine

        out: list[list[float]] = []
        chunk: list[list[list[int]]] = []
        loads = 0
        per_pass = self.repetitions + self.warmup

        def flush() -> None:
            nonlocal chunk, loads
            if chunk:
                self._calls += 1
                spec = {
                    "machine": self.machine,
                    "measurements": chunk,
                    "repetitions": self.repetitions,
                    "warmup": self.warmup,
                    "noise": self.noise.as_spec(),
                    "seed": self.seed * 1_000_003 + self._calls,
                }
                out.extend(json.loads(_engine.probe_rounds(json.dumps(spec)))["ns"])
                self.loads += loads
                chunk, loads = [], 0

        for m in batch:
            n = sum(len(r) for r in m.rounds) * per_pass
            if loads + n > BATCH_LOADS:
                flush()
            chunk.append([list(r) for r in m.rounds])
            loads += n
        flush()
        self.measurements += len(batch)
        return out
