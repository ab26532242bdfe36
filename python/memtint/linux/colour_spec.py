"""Colour and CPU lists as users write them ("0-3,8,10-11"), parsed and checked against what
exists, and written back in the same compact form (the format of MEMTINT_COLORS)."""

from __future__ import annotations

from memtint.linux.errors import LinuxError


def parse_list(text: str, what: str = "colour", *, count: int | None = None, where: str = "") -> list[int]:
    """"0-3,8,10-11" -> [0, 1, 2, 3, 8, 10, 11] (sorted, no duplicates); an error names the bad part.

    With ``count``, every value must be below it (``where`` names what has that many: "the bank
    colour space of i7-860", "this machine"); checked before a range is expanded, so "0-4294967296" is an
    error at once rather than four billion numbers."""
    if not text.strip():
        raise LinuxError(f"empty {what} list; write e.g. '0-3,8'")
    ranges: list[tuple[int, int]] = []
    for part in text.split(","):
        part = part.strip()
        lo_text, sep, hi_text = part.partition("-")
        try:
            lo = int(lo_text, 0)
            hi = int(hi_text, 0) if sep else lo
        except ValueError:
            raise LinuxError(f"bad {what} list '{text}': '{part}' is not a number or a range like 0-3") from None
        if lo < 0 or hi < lo:
            raise LinuxError(f"bad {what} list '{text}': '{part}' is not an ascending range of non-negative numbers")
        ranges.append((lo, hi))
    if count is not None:
        absent = [(max(lo, count), hi) for lo, hi in ranges if hi >= count]
        if absent:
            names = ",".join(str(lo) if lo == hi else f"{lo}-{hi}" for lo, hi in absent)
            many = len(absent) > 1 or absent[0][0] != absent[0][1]
            raise LinuxError(f"{what}{'s' if many else ''} {names} do{'' if many else 'es'} not exist: "
                             f"{where or 'the list'} has {count} {what}s (0-{count - 1})")
    values: set[int] = set()
    for lo, hi in ranges:
        values.update(range(lo, hi + 1))
    return sorted(values)


def check_colours(colours: list[int], count: int, where: str) -> None:
    """An error naming the colours that do not exist where there are `count` colours (`where`:
    "the bank colour space of i7-860")."""
    missing = [c for c in colours if c >= count]
    if missing:
        raise LinuxError(
            f"colour{'s' if len(missing) > 1 else ''} {format_list(missing)} do{'es' if len(missing) == 1 else ''} "
            f"not exist: {where} has {count} colours (0-{count - 1})"
        )


def format_list(values: list[int]) -> str:
    """[0, 1, 2, 3, 8] -> "0-3,8"."""
    out: list[str] = []
    ordered = sorted(set(values))
    i = 0
    while i < len(ordered):
        j = i
        while j + 1 < len(ordered) and ordered[j + 1] == ordered[j] + 1:
            j += 1
        out.append(str(ordered[i]) if i == j else f"{ordered[i]}-{ordered[j]}")
        i = j + 1
    return ",".join(out)
