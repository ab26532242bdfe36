"""The papers' figures: configs/reproductions/<paper>.toml, one ``[[claim]]`` per number, each
naming the section of the paper summary (../shared/papers) it comes from."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memtint.api import MemtintError

#: configs/reproductions in the source tree.
FIGURES_DIR = Path(__file__).resolve().parents[3] / "configs" / "reproductions"

KINDS = ("change", "at_least", "at_most", "info")
REQUIRED = ("id", "experiment", "figure", "source", "text", "kind", "metric")
#: A ``[[calibration]]`` entry: a baseline figure of the paper's machine (not a claim), shown
#: beside memtint's for the same program class or population.
CALIBRATION_REQUIRED = ("text", "source", "value", "measure")


def derived(claim: dict[str, Any]) -> bool:
    """Whether the claim's figure is the summary's inference (its source tagged [inferred] with no
    [paper] or [ext] figure beside it): arithmetic on the paper's model, or a reading of its words,
    rather than a number the paper measured."""
    source = claim.get("source", "")
    return "[inferred]" in source and "[paper]" not in source and "[ext]" not in source


def _toml():
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]
    return tomllib


def load(paper: str, directory: Path | None = None) -> dict[str, Any]:
    """The figures of ``paper`` (``bpm``, ``hvr``, ...), validated: every claim has the keys of
    REQUIRED, a known kind, a value unless ``info``, a source naming a section (``§``), and a
    unique id."""
    path = (directory or FIGURES_DIR) / f"{paper}.toml"
    if not path.exists():
        raise MemtintError(f"{path}: no paper-figure file for '{paper}' (the reproductions run from a source checkout)")
    table = _toml().loads(path.read_text())
    claims = table.get("claim") or []
    if not claims:
        raise MemtintError(f"{path}: no [[claim]] entries")
    seen = set()
    for i, c in enumerate(claims):
        where = f"{path.name}: claim {c.get('id', i)}"
        missing = [k for k in REQUIRED if k not in c]
        if missing:
            raise MemtintError(f"{where}: missing {', '.join(missing)}")
        if c["kind"] not in KINDS:
            raise MemtintError(f"{where}: kind must be one of {', '.join(KINDS)}, got {c['kind']!r}")
        if c["kind"] != "info" and not isinstance(c.get("value"), (int, float)):
            raise MemtintError(f"{where}: a numeric 'value' is needed")
        if "§" not in c["source"] and c["kind"] != "info":
            raise MemtintError(f"{where}: source must name the summary's section (§), got {c['source']!r}")
        if c["id"] in seen:
            raise MemtintError(f"{where}: duplicate id")
        seen.add(c["id"])
    for i, c in enumerate(table.get("calibration") or []):
        where = f"{path.name}: calibration {i + 1}"
        missing = [k for k in CALIBRATION_REQUIRED if k not in c]
        if missing:
            raise MemtintError(f"{where}: missing {', '.join(missing)}")
        if not isinstance(c["value"], (int, float)):
            raise MemtintError(f"{where}: a numeric 'value' is needed")
        if "§" not in c["source"]:
            raise MemtintError(f"{where}: source must name the summary's section (§), got {c['source']!r}")
    table["path"] = str(path)
    return table
