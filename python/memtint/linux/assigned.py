"""The colours a running process was given, read from its environment (/proc/PID/environ):
MEMTINT_COLOR_MASKS and MEMTINT_COLORS as `memtint run` sets them for libmemtint. A process
started some other way, or whose library changed colours per thread (memtint_set_colors), is
not described by them: then the process has no assigned colours as far as `inspect` knows.
Whether libmemtint colours them is not in the environment (an exec'd static program keeps
LD_PRELOAD and never loads it): `maps.libmemtint_mapped` tells."""

from __future__ import annotations

from dataclasses import dataclass

from memtint.linux.colour_spec import parse_list
from memtint.linux.errors import LinuxError, unreadable


@dataclass
class AssignedColours:
    masks: list[int]
    colours: list[int]
    mode: str | None
    ld_preload: str


def read_environ(pid: int | str) -> dict[str, str]:
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            raw = f.read()
    except OSError as error:
        raise unreadable(pid, "environ", error) from None
    env = {}
    for item in raw.split(b"\0"):
        key, sep, value = item.partition(b"=")
        if sep:
            env[key.decode(errors="replace")] = value.decode(errors="replace")
    return env


def assigned_colours(pid: int | str) -> AssignedColours | None:
    """The process's colours, or None when its environment assigns none."""
    env = read_environ(pid)
    masks_text, colours_text = env.get("MEMTINT_COLOR_MASKS"), env.get("MEMTINT_COLORS")
    if not masks_text or not colours_text:
        return None
    try:
        masks = [int(m, 16) for m in masks_text.split(",")]
    except ValueError:
        raise LinuxError(f"process {pid} has a malformed MEMTINT_COLOR_MASKS: {masks_text!r}") from None
    try:
        colours = parse_list(colours_text, count=1 << len(masks), where=f"its MEMTINT_COLOR_MASKS ({len(masks)} masks)")
    except LinuxError as error:
        raise LinuxError(f"process {pid} has a malformed MEMTINT_COLORS={colours_text!r}: {error}") from None
    return AssignedColours(masks, colours, env.get("MEMTINT_MODE"), env.get("LD_PRELOAD", ""))
