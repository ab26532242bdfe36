"""A machine's colours as the engine defines them (crates/memtint-engine/src/os/linux_layout.rs):
the colour space's masks and the bank, channel, rank and LLC-colour functions `inspect`
histograms frames by, and a placement policy's colour sets from the simulator's own policy code.
Every function is GF(2)-linear: bit i of a value is parity(paddr & mask_i), as in os/colour.rs."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from memtint import _engine
from memtint._engine import MemtintError


def linear_value(masks: list[int], addr: int) -> int:
    """The value of GF(2)-linear functions at `addr`: bit i is parity(addr & masks[i])."""
    value = 0
    for i, mask in enumerate(masks):
        value |= ((addr & mask).bit_count() & 1) << i
    return value


@dataclass
class ColourLayout:
    """One colour space of one machine, and what a frame's address selects."""

    data: dict[str, Any]

    @property
    def masks(self) -> list[int]:
        return list(self.data["space"]["masks"])

    @property
    def colours(self) -> int:
        return int(self.data["space"]["colours"])

    @property
    def space(self) -> str:
        return str(self.data["space"]["name"])

    @property
    def described(self) -> str:
        """"the bank colour space of i7-860", for messages about its colours."""
        return f"the {self.space} colour space of {self.data['machine']}"

    @property
    def page_bytes(self) -> int:
        return int(self.data["page_bytes"])

    def env_masks(self) -> str:
        """The MEMTINT_COLOR_MASKS value: comma-separated hex masks, colour bit 0 first."""
        return ",".join(self.data["space"]["masks_hex"])

    def colour_of(self, paddr: int) -> int:
        return linear_value(self.masks, paddr)

    def ids_of_page(self, what: str, frame_addr: int) -> tuple[int, ...]:
        """The banks, channels or ranks (`what`) one page at `frame_addr` covers: several when
        some of their address bits lie inside the page (the i7-860's channel bit 6)."""
        base = linear_value(self.data["functions"][what], frame_addr)
        return tuple(sorted(base ^ o for o in self.data["in_page"][f"{what}_offsets"]))

    def llc_colour_of(self, frame_addr: int) -> int:
        return linear_value(self.data["functions"]["llc_colour"], frame_addr)


def colour_layout(machine: str | dict[str, Any] = "i7-860", space: str = "bank", *, mapping: str | None = None,
                  vertical: tuple[int, int, int] | None = None) -> ColourLayout:
    """The colour space `space` of `machine` (a preset name, a machine TOML path or a machine
    table) with `mapping` (a preset or TOML path) instead of the machine's own when given.

    ``space`` is one of bank, rank, channel, channel-bank, llc, dram, a named vertical policy
    (cache-only, bank-only, bank-only-8, a-vp, b-vp, c-vp), or vertical with ``vertical=(i, j, k)``
    (the numbers of B-, C- and O-bits), also written ``vertical:i,j,k``, as the commands' --space
    takes it. Raises MemtintError with the engine's message for unknown names and impossible spaces.
    """
    named = space
    if isinstance(space, str) and space.startswith("vertical:"):
        space, vertical = "vertical", _vertical_bits(space, vertical)
    request = {"machine": machine, "mapping": mapping, "space": space, "vertical": vertical}
    try:
        layout = ColourLayout(json.loads(_engine.colour_layout(json.dumps(request))))
    except MemtintError as error:  # the engine checks the space as a policy's: the user chose a space
        text = str(error)
        prefix = next((p for p in ("invalid configuration: os.policy: ", "invalid configuration: os.vertical.bits: ")
                       if text.startswith(p)), None)
        raise type(error)(f"colour space '{named}': {text[len(prefix):]}" if prefix else text) from None
    if space == "vertical" and vertical is not None:  # the engine names the general space without its bits
        label = "vertical:" + ",".join(str(n) for n in vertical)
        own = layout.data["space"]
        own["description"] = own["description"].replace(own["name"], label, 1)
        own["name"] = label
    if not layout.masks:  # one colour: libmemtint refused it at start as an empty MEMTINT_COLOR_MASKS
        what = {"rank": "a single rank per channel: there are no ranks to partition",
                "llc": "no LLC set-index bit at or above the page offset (or no LLC): there are no LLC colours"}
        if space == "vertical" and vertical is not None and not any(vertical):
            raise MemtintError(f"colour space '{named}': (0, 0, 0) asks for no colour bit: give at least one B-, C- or "
                               "O-bit")
        raise MemtintError(f"colour space '{named}': mapping {layout.data['mapping']} has "
                           + what.get(space, "no colour bit in it at or above the page offset: one colour, nothing "
                                      "to partition"))
    return layout


def _vertical_bits(text: str, given: tuple[int, int, int] | None) -> tuple[int, int, int]:
    """(i, j, k) from ``vertical:i,j,k``."""
    if given is not None:
        raise MemtintError(f"colour space '{text}': give the bits once, in the name or as vertical=(i, j, k)")
    parts = text.removeprefix("vertical:").split(",")
    # ASCII digits, and as many as an address has bits: int() refuses other digits, u32 more
    if len(parts) != 3 or not all(re.fullmatch(r"\s*[0-9]{1,2}\s*", p) for p in parts):
        raise MemtintError(f"colour space '{text}': give vertical:I,J,K, the numbers of B-, C- and O-bits (HVR), "
                           "e.g. vertical:1,2,1")
    i, j, k = (int(p) for p in parts)
    return i, j, k


def machine_nodes(machine: str | dict[str, Any], mapping: str | None = None) -> list[dict[str, Any]]:
    """The machine's memory nodes as the engine builds them: each one's base, capacity bits,
    organisation and true address fields (``mapping``, a preset or TOML path, instead of its own)."""
    request: dict[str, Any] = {"machine": machine}
    if mapping:
        request["overrides"] = {"dram": {"mapping": mapping}}
    return json.loads(_engine.probe_rounds(json.dumps(request)))["machine"]["nodes"]


def policy_partition(machine: str | dict[str, Any], policy: str, processes: int, *,
                     mapping: str | None = None, os: dict[str, Any] | None = None) -> dict[str, Any]:
    """Each of `processes` processes' colours under placement policy `policy`, computed by the
    simulator's own policy code, so that a partition is the same in simulation and on Linux.

    Returns ``{"policy", "partitioned", "processes": [{"pid", "colours", "colours_text", "banks",
    "channels", "llc_sets"}], "layout", "shaped_by", "warnings"}``; ``layout`` is the policy's colour
    space as :func:`colour_layout` gives it; ``shaped_by``, the `[os]` keys that decide these sets
    (``exclude_bits``, the sets' keys the policy reads, ``profiles``, its own table); ``warnings``,
    what a run of the same `[os]` table would say of options that change nothing. ``os`` adds
    `[os]` options (``colours``, ``groups``, ``exclude_bits``, ``vertical``).
    """
    if os is not None and not isinstance(os, dict):  # ** of anything else was a bare TypeError
        raise MemtintError(f"os: expected a table of [os] options (a dict such as {{\"colours\": ...}}), got {os!r}")
    request = {"machine": machine, "mapping": mapping, "processes": processes, "os": {**(os or {}), "policy": policy}}
    return json.loads(_engine.policy_partition(json.dumps(request)))
