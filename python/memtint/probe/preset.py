"""A probe's result as memtint's own files: a mapping TOML (configs/mappings format) with each
function's confidence, and a machine preset that uses it, for `sim`, `compare`, `run` and
`inspect --machine FILE` (the engine reads a machine file's mapping beside it)."""

from __future__ import annotations

import copy
import json
import math
import os
from typing import Any

from memtint.probe.search import ProbeResult


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if not math.isfinite(v):
            raise ValueError(f"{v} has no TOML form here")
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{_key(k)} = {_value(x)}" for k, x in v.items() if x is not None) + " }"
    raise TypeError(f"no TOML form for {type(v).__name__}")


def _key(k: str) -> str:
    return k if k.replace("_", "").replace("-", "").isalnum() else json.dumps(k)


def dumps(table: dict, prefix: str = "") -> str:
    """TOML for a JSON-like table: scalars and arrays inline, tables as sections, arrays of
    tables as [[sections]] (their own tables inline)."""
    lines: list[str] = []
    subtables: list[tuple[str, dict]] = []
    arrays: list[tuple[str, list]] = []
    for k, v in table.items():
        if v is None:
            continue
        if isinstance(v, dict):
            subtables.append((k, v))
        elif isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
            arrays.append((k, v))
        else:
            lines.append(f"{_key(k)} = {_value(v)}")
    out = "\n".join(lines) + ("\n" if lines else "")
    for k, v in subtables:
        name = f"{prefix}{_key(k)}"
        body = dumps(v, name + ".")
        if body.strip():
            out += f"\n[{name}]\n{body}"
    for k, items in arrays:
        for item in items:
            out += f"\n[[{prefix}{_key(k)}]]\n" + "\n".join(f"{_key(x)} = {_value(y)}" for x, y in item.items() if y is not None) + "\n"
    return out


def mapping_toml(result: ProbeResult, name: str, organisation: dict, source: str) -> str:
    """The mapping file, each function's and bit's confidence in comments."""
    fields = result.fields()
    head = [
        f"# Found by memtint probe ({source}): {result.measurements:,} measurements, "
        f"{result.pairs_timed:,} pairs timed, {result.conflicts} row conflicts verified.",
        f"# Row conflict: {result.slow_ns:.1f} ns against {result.fast_ns:.1f} ns (threshold {result.threshold_ns:.1f} ns).",
        "# Per function: consistency (share of conflicting pairs it agrees with) and margin (its",
        "# field's measurement against the others', in units of their spread; inf: nothing to tell apart).",
    ]
    for f in sorted(result.functions, key=lambda f: f.bits()):
        b = "^".join(f"b{x}" for x in f.bits())
        head.append(f"#   {f.field:<10} {b:<14} consistency {f.consistency:.3f}  margin {f.margin:.1f}  {f.signature}")
    weak = {k: v for k, v in result.bit_confidence.items() if v < 1.0}
    if weak:
        head.append("# Row/column bits with disagreeing pairs: " + ", ".join(f"b{k} {v:.2f}" for k, v in sorted(weak.items())))
    for w in result.warnings:
        head.append(f"# warning: {w}")
    body = {
        "name": name,
        "description": f"probed mapping ({source})",
        "source": f"memtint probe: {source}",
        "organisation": organisation,
        "fields": {k: v for k, v in fields.items() if v},
    }
    return "\n".join(head) + "\n" + dumps(body)


def organisation_table(org) -> dict:
    out = {
        "channels": org.channels,
        "ranks": org.ranks,
        "bank_groups": org.bank_groups,
        "banks_per_group": org.banks_per_group,
        "rows": org.rows,
        "columns": org.columns,
    }
    return {k: v for k, v in out.items() if v is not None}


def machine_with_mappings(config: dict, node_mappings: dict[int, str], name: str, description: str) -> dict:
    """The machine table `config` with node i's mapping replaced by `node_mappings[i]` (a path
    relative to the machine file), without its [variants]. A node that used the machine's [dram]
    gets its own copy."""
    m = copy.deepcopy(config)
    m["name"] = name
    m["description"] = description
    # A variant names a machine of the original's mapping (i7-860-bpm-plus), not of the probed one:
    # a sweep would run bpm-plus there, on a mapping nobody measured.
    m.pop("variants", None)
    nodes = m.get("nodes") or []
    if not nodes:
        m["dram"]["mapping"] = node_mappings[0]
        return m
    memory_nodes = [i for i, n in enumerate(nodes) if n.get("memory", True)]
    for probe_index, mapping in node_mappings.items():
        n = nodes[memory_nodes[probe_index]]
        if n.get("dram") is None:
            n["dram"] = copy.deepcopy(m["dram"])
        n["dram"]["mapping"] = mapping
    return m


def mapping_file_name(preset_path: str, node: int, nodes: int) -> str:
    stem = os.path.splitext(os.path.basename(preset_path))[0]
    return f"{stem}.mapping.toml" if nodes == 1 else f"{stem}.node{node}.mapping.toml"
