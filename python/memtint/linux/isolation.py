"""`memtint run --verify`: whether the colours given to a program isolate it from a co-runner's
on this machine, measured with the mapping probe's timer (memtint.probe; docs/linux.md).

The lines of the timer's buffer are decoded with the machine's mapping (bank, row) and colour
space (colour), and three populations of pairs are timed. A pair's two lines are loaded
together and flushed, round after round: when they share a bank but not a row, every round
is a row conflict, and slow.

- control: both lines in the program's colours, one bank and different rows by the mapping.
  Slow wherever the timer sees row conflicts at all.
- across: one line in the program's colours, one in the co-runner's, the co-runner's line in
  the bank nearest the program line's (the fewest bank functions apart) and another row: the
  pairs that would conflict if the colour bits did not separate banks here.
- baseline: both lines in the program's colours, different banks: how often a pair is slow
  without a row conflict.

A pair is slow when its time is above the threshold between control and baseline, and again
when timed over longer rounds. The colours are isolated when control's median is above
baseline's by more than three of baseline's spreads and across pairs are slow no more often
than baseline pairs (within three standard errors of the difference); not isolated when they
are slow more often; a timer that shows no row conflicts (control not that much slower) cannot
tell.
"""

from __future__ import annotations

import math
import random
import time
from dataclasses import dataclass, field
from typing import Any, Sequence

from memtint.linux.colour_spec import check_colours, format_list, parse_list
from memtint.linux.errors import LinuxError
from memtint.linux.layout import colour_layout, linear_value, machine_nodes
from memtint.probe.search import FIELDS, Organisation, Search, Settings, median, spread, two_means
from memtint.probe.timer import LINE_BITS, PAGE_BITS, Timer

ISOLATED = "isolated"
NOT_ISOLATED = "not isolated"
CANNOT_TELL = "cannot tell"

BUFFER_MB = 64
PAIRS = 400
# Timed rounds per pair on this machine: the probe's own default on Linux.
REPETITIONS = 50
# Gaps and excesses count as real beyond this many spreads (or standard errors).
SPREADS = 3.0
# The finest time difference taken as real, where a population has no spread of its own.
RESOLUTION_NS = 1.0
POPULATIONS = ("control", "across", "baseline")
DESCRIPTIONS = {"control": "program's colours, one bank by the mapping, different rows",
                "across": "program's colours against the co-runner's, the nearest bank, different rows",
                "baseline": "program's colours, different banks"}
LINES_PER_PAGE = 1 << (PAGE_BITS - LINE_BITS)


@dataclass
class Population:
    """One population of timed pairs: each pair's interquartile-mean round time, and how many
    were slow (above the threshold when screened and again when confirmed)."""

    name: str
    description: str
    times_ns: list[float]
    slow: int = 0
    # Pairs the mapping itself puts in one bank and different rows.
    same_bank_by_mapping: int = 0

    @property
    def count(self) -> int:
        return len(self.times_ns)

    @property
    def median_ns(self) -> float:
        return median(self.times_ns)

    @property
    def spread_ns(self) -> float:
        return spread(self.times_ns)

    @property
    def slow_share(self) -> float:
        return self.slow / self.count if self.count else math.nan

    def summary(self) -> dict[str, Any]:
        return {"description": self.description, "pairs": self.count, "median_ns": round(self.median_ns, 2),
                "spread_ns": round(self.spread_ns, 2), "slow": self.slow, "slow_share": round(self.slow_share, 4),
                "same_bank_by_mapping": self.same_bank_by_mapping}


@dataclass
class IsolationReport:
    machine: str
    mapping: str
    space: str
    colours: list[int]
    other_colours: list[int]
    timer: str
    frames: int
    populations: dict[str, Population]
    threshold_ns: float
    verdict: str
    reason: str
    seconds: float
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "machine": self.machine, "mapping": self.mapping, "space": self.space,
            "colours": format_list(self.colours), "other_colours": format_list(self.other_colours),
            "timer": self.timer, "frames": self.frames, "threshold_ns": round(self.threshold_ns, 2),
            "populations": {k: p.summary() for k, p in self.populations.items()},
            "verdict": self.verdict, "reason": self.reason, "seconds": round(self.seconds, 2), "notes": self.notes,
        }


class _Linear:
    """GF(2)-linear functions of an address by byte tables (one lookup per address byte)."""

    def __init__(self, masks: Sequence[int]):
        width = max((m.bit_length() for m in masks), default=0)
        self.tables = [[linear_value(list(masks), v << (8 * k)) for v in range(256)] for k in range((width + 7) // 8)]

    def __call__(self, addr: int) -> int:
        out = 0
        for table in self.tables:
            out ^= table[addr & 0xFF]
            addr >>= 8
        return out


def _masks(field_bits: list[list[int]]) -> list[int]:
    return [sum(1 << b for b in bits) for bits in field_bits]


class _Decoder:
    """Bank and row of a physical address by the machine's mapping (each node's, its offset
    from the node's base), and its colour by the colour space."""

    def __init__(self, machine: str | dict[str, Any], mapping: str | None, layout):
        nodes = machine_nodes(machine, mapping)
        self.bases = [n["base"] for n in nodes]
        bank_masks = [[m for f in FIELDS for m in _masks(n["fields"][f])] for n in nodes]
        self.bank_bits = max(len(m) for m in bank_masks)
        self.bank = [_Linear(m) for m in bank_masks]
        self.row = [_Linear(_masks(n["fields"]["row"])) for n in nodes]
        self.colour = _Linear(layout.masks)

    def node(self, addr: int) -> int:
        return max((i for i, b in enumerate(self.bases) if b <= addr), default=0)

    def bank_of(self, addr: int) -> int:
        """The bank key: the node's bank functions, with the node above them."""
        n = self.node(addr)
        return self.bank[n](addr - self.bases[n]) | n << self.bank_bits

    def row_of(self, addr: int) -> int:
        n = self.node(addr)
        return self.row[n](addr - self.bases[n])


class _Lines:
    """The buffer's lines by colour, bank and row. Every function is linear and a frame's base
    has no bits inside the page, so a line's bank is its frame's XOR its offset's (the offset's
    bank part is the in-page bits, such as the i7-860's channel bit b6)."""

    def __init__(self, timer: Timer, decoder: _Decoder):
        space = timer.space()
        self.base = space.base
        self.frames = space.frames()
        addr = [self.base + (f << PAGE_BITS) for f in self.frames]
        self.frame_bank = [decoder.bank_of(a) for a in addr]
        self.frame_row = [decoder.row_of(a) for a in addr]
        self.frame_colour = [decoder.colour(a) for a in addr]
        # In-page offsets' parts, relative to the page's base (node 0's functions: a node's base
        # is page aligned, so every node's in-page part is the same where the mappings agree).
        offsets = [o << LINE_BITS for o in range(LINES_PER_PAGE)]
        self.offset_bank = [decoder.bank[0](o) for o in offsets]
        self.offset_row = [decoder.row[0](o) for o in offsets]
        self.offsets_by_bank: dict[int, list[int]] = {}
        for i, k in enumerate(self.offset_bank):
            self.offsets_by_bank.setdefault(k, []).append(i)

    def of_colours(self, colours: set[int]) -> "_Group":
        return _Group(self, [i for i, c in enumerate(self.frame_colour) if c in colours])

    def line(self, frame: int, offset: int) -> int:
        """The line's offset from the space's base (what the timer is given, with the base)."""
        return (self.frames[frame] << PAGE_BITS) | (offset << LINE_BITS)

    def bank(self, frame: int, offset: int) -> int:
        return self.frame_bank[frame] ^ self.offset_bank[offset]

    def row(self, frame: int, offset: int) -> int:
        return self.frame_row[frame] ^ self.offset_row[offset]


class _Group:
    """Frames of some colours, indexed by their frames' bank keys."""

    def __init__(self, lines: _Lines, frames: list[int]):
        self.lines = lines
        self.frames = frames
        self.by_bank: dict[int, list[int]] = {}
        for f in frames:
            self.by_bank.setdefault(lines.frame_bank[f], []).append(f)

    def random_line(self, rng: random.Random) -> tuple[int, int]:
        return rng.choice(self.frames), rng.randrange(LINES_PER_PAGE)

    def nearest(self, bank: int) -> tuple[int, list[tuple[int, int]]]:
        """The fewest bank functions any line of the group differs from `bank` in, and the
        (frame bank, offset bank) keys of the lines that differ in so few."""
        best, keys = None, []
        for fk in self.by_bank:
            for ok in self.lines.offsets_by_bank:
                d = (bank ^ fk ^ ok).bit_count()
                if best is None or d < best:
                    best, keys = d, [(fk, ok)]
                elif d == best:
                    keys.append((fk, ok))
        return (-1 if best is None else best), keys

    def partner(self, a: tuple[int, int], keys: list[tuple[int, int]], rng: random.Random,
                tries: int = 16) -> tuple[int, int] | None:
        """A line of the group with one of `keys` and another row than `a`'s."""
        row = self.lines.row(*a)
        for _ in range(tries):
            fk, ok = rng.choice(keys)
            b = rng.choice(self.by_bank[fk]), rng.choice(self.lines.offsets_by_bank[ok])
            if b != a and self.lines.row(*b) != row:
                return b
        return None


def _draw(pairs: int, pick, lines: _Lines, what: str) -> list[tuple[int, int, bool]]:
    """`pairs` distinct pairs from `pick(rng) -> (a, b, same bank by the mapping) | None`, as
    (line, line, same bank) with lines as offsets from the space's base."""
    found: dict[frozenset, tuple[int, int, bool]] = {}
    for _ in range(50 * pairs):
        if len(found) == pairs:
            break
        got = pick()
        if got:
            a, b, same = got
            key = frozenset((a, b))
            found.setdefault(key, (lines.line(*a), lines.line(*b), same))
    if len(found) < pairs:
        raise LinuxError(f"the timer's buffer ({len(lines.frames)} frames) holds {len(found)} distinct pairs of "
                         f"{what}, {pairs} are needed: give it a larger buffer (--verify-buffer-mb)")
    return list(found.values())


def _choose(program: _Group, other: _Group, pairs: int, rng: random.Random) -> dict[str, list[tuple[int, int, bool]]]:
    """Each population's pairs (module docstring)."""
    lines = program.lines

    def control():
        a = program.random_line(rng)
        d, keys = program.nearest(lines.bank(*a))
        b = program.partner(a, keys, rng) if d == 0 else None
        return (a, b, True) if b else None

    def across():
        a = program.random_line(rng)
        d, keys = other.nearest(lines.bank(*a))
        b = other.partner(a, keys, rng)
        return (a, b, d == 0) if b else None

    def baseline():
        a, b = program.random_line(rng), program.random_line(rng)
        return (a, b, False) if lines.bank(*a) != lines.bank(*b) else None

    return {"control": _draw(pairs, control, lines, "lines of the program's colours in one bank"),
            "across": _draw(pairs, across, lines, "lines of the program's and the co-runner's colours"),
            "baseline": _draw(pairs, baseline, lines, "lines of the program's colours in different banks")}


def _verdict(pops: dict[str, Population], note: str | None) -> tuple[str, str]:
    control, across, baseline = (pops[k] for k in POPULATIONS)
    gap = control.median_ns - baseline.median_ns
    noise = max(baseline.spread_ns, RESOLUTION_NS)
    if gap <= SPREADS * noise:
        why = ("this is a virtual machine, whose guest-physical frames do not select the host's banks as the "
               "mapping says" if note else
               "the mapping may not be this machine's (memtint probe finds it), or a busy machine hides them")
        return CANNOT_TELL, (f"the timer sees no row conflicts: pairs in one bank by the mapping take "
                             f"{control.median_ns:.1f} ns, pairs in different banks {baseline.median_ns:.1f} ns "
                             f"(spread {baseline.spread_ns:.1f} ns); {why}")
    # Across pairs are slow more often than baseline pairs beyond sampling error (two proportions).
    p = (across.slow + baseline.slow) / (across.count + baseline.count)
    error = math.sqrt(p * (1 - p) * (1 / across.count + 1 / baseline.count))
    excess = across.slow_share - baseline.slow_share
    if excess > SPREADS * error:
        cause = (f"the mapping itself puts {across.same_bank_by_mapping} of them in one bank: the colour sets share "
                 "banks" if across.same_bank_by_mapping else
                 "the mapping puts none of them in one bank, so the colour bits do not select banks on this machine "
                 "(memtint probe finds its mapping)")
        return NOT_ISOLATED, (f"{across.slow} of {across.count} pairs across the colour sets are row conflicts "
                              f"({100 * across.slow_share:.1f} % against {100 * baseline.slow_share:.1f} % of "
                              f"different-bank pairs); {cause}")
    return ISOLATED, (f"row conflicts show ({control.median_ns:.1f} against {baseline.median_ns:.1f} ns, "
                      f"{gap / noise:.0f} spreads), and pairs across the colour sets are slow no more often than "
                      f"different-bank pairs ({100 * across.slow_share:.1f} % against "
                      f"{100 * baseline.slow_share:.1f} %)")


#: How many times `verify_isolation` doubles a buffer of its own that lacks one colour set's frames.
GROW = 2


def verify_isolation(machine: str | dict[str, Any], mapping: str | None, space: str, colours: str | Sequence[int],
                     other_colours: str | Sequence[int] | None = None, buffer_mb: int = BUFFER_MB, pairs: int = PAIRS,
                     timer: Timer | None = None, seed: int = 1) -> IsolationReport:
    """Time `pairs` pairs of each population (module docstring) in the buffer of `timer` (default:
    this machine's `LinuxTimer` with `buffer_mb` MiB, root only; its LinuxError says what to do)
    and judge whether `colours` of `space` on `machine` (or `mapping`) are isolated from
    `other_colours` (default: every other colour). Colours are lists or "0-3,8". Row conflicts
    tell banks apart, so a space whose colour sets share banks by the mapping (llc, cache-only)
    is refused before anything is timed."""
    from memtint.probe.linux import vm_note

    started = time.monotonic()
    layout = colour_layout(machine, space, mapping=mapping)
    chosen = _colours(colours, layout)
    others = ([c for c in range(layout.colours) if c not in chosen] if other_colours is None
              else _colours(other_colours, layout))
    if not others:
        raise LinuxError(f"the program has every colour of {layout.described}: there are no co-runner colours to "
                         "check against")
    if pairs < 2:
        raise LinuxError(f"pairs must be at least 2, got {pairs}")
    shared = _sharing_banks(layout, chosen, others)
    if shared:
        # Row conflicts across would be the mapping's own, not a leak: "not isolated" said nothing.
        raise LinuxError(
            f"the check times DRAM row conflicts, so it checks bank isolation, and {layout.described} does not "
            f"partition banks: colour {shared[0]} shares banks with colour {shared[1]} by the mapping itself (colour "
            "bits that select no bank); nothing to check here. Verify a space whose colours are banks (bank, rank, "
            "channel, channel-bank, dram), or run without the check")
    decoder = _Decoder(machine, mapping, layout)
    own = timer is None
    grown: list[str] = []
    held: list[Timer] = []
    try:
        # A buffer of our own that holds no frame of one colour set (transparent huge pages fix
        # the high colour bits of each 2 MiB) is taken again twice as large, up to GROW times.
        # The smaller one stays mapped until the check ends: freed first, its frames would be the
        # first the kernel hands out again (its free lists are last in, first out).
        for attempt in range(GROW + 1 if own else 1):
            if own:
                from memtint.probe.linux import LinuxTimer

                timer = LinuxTimer(buffer_mb=buffer_mb << attempt, repetitions=REPETITIONS, option="--verify-buffer-mb")
            lines = _Lines(timer, decoder)
            program, other = lines.of_colours(set(chosen)), lines.of_colours(set(others))
            if program.frames and other.frames:
                break
            missing = "program" if not program.frames else "co-runner"
            if own and attempt < GROW:
                grown.append(f"a {buffer_mb << attempt} MiB buffer held no frame of the {missing}'s colours; "
                             f"the check used {buffer_mb << (attempt + 1)} MiB")
                held.append(timer)
                timer = None
                continue
            had = format_list(sorted(set(lines.frame_colour)))
            raise LinuxError(f"the timer's buffer ({len(lines.frames)} frames, of colours {had or 'none'}) has no "
                             f"frame of the {missing}'s colours: give it a larger buffer (--verify-buffer-mb)")
        rng = random.Random(seed)
        chosen_pairs = _choose(program, other, pairs, rng)
        settings = Settings(seed=seed)
        search = Search(timer, Organisation(), settings)
        # One batch, the populations interleaved pair by pair, so a drift in the machine's
        # state (another process waking up) falls on all of them alike.
        order = [(k, i) for i in range(pairs) for k in POPULATIONS]
        times = search._pairs([chosen_pairs[k][i][:2] for k, i in order])
        by_pop: dict[str, list[float]] = {k: [0.0] * pairs for k in POPULATIONS}
        for (k, i), t in zip(order, times):
            by_pop[k][i] = t
        pops = {k: Population(k, DESCRIPTIONS[k], by_pop[k], same_bank_by_mapping=sum(p[2] for p in chosen_pairs[k]))
                for k in POPULATIONS}
        _, _, threshold = two_means(by_pop["control"] + by_pop["baseline"], lo=pops["baseline"].median_ns)
        # A pair is slow when it is slow again over longer rounds: one interrupt does not make it so.
        suspects = [(k, i) for (k, i) in order if by_pop[k][i] > threshold]
        again = (search._pairs([chosen_pairs[k][i][:2] for k, i in suspects], settings.confirm_factor)
                 if suspects else [])
        for (k, _), t in zip(suspects, again):
            pops[k].slow += t > threshold
        note = vm_note() if own else None
        verdict, reason = _verdict(pops, note)
        return IsolationReport(
            machine=layout.data["machine"], mapping=layout.data["mapping"], space=layout.space, colours=chosen,
            other_colours=others, timer=timer.name, frames=len(lines.frames), populations=pops,
            threshold_ns=threshold, verdict=verdict, reason=reason, seconds=time.monotonic() - started,
            notes=grown + ([note] if note else []))
    finally:
        if own:
            for t in held + ([timer] if timer is not None else []):
                t.close()


def _sharing_banks(layout, chosen: Sequence[int], others: Sequence[int]) -> tuple[int, int] | None:
    """Two different colours, one of `chosen` and one of `others`, that frames of one bank can both
    have, or None when none can (the colour bits separate banks). Over GF(2) on the frame bits:
    two colours share a bank when they differ by a colour value reachable without changing the
    bank, so each colour is reduced modulo those values and the sets compared."""
    bank, masks = layout.data["functions"]["bank"], layout.masks
    width = len(masks)
    basis: dict[int, int] = {}  # leading bit -> vector (bank id above the colour bits)
    for bit in range(layout.page_bytes.bit_length() - 1, 64):
        v = linear_value(bank, 1 << bit) << width | linear_value(masks, 1 << bit)
        while v:
            lead = v.bit_length() - 1
            if lead not in basis:
                basis[lead] = v
                break
            v ^= basis[lead]
    same_bank = sorted(((lead, v) for lead, v in basis.items() if lead < width), reverse=True)

    def reduced(colour: int) -> int:
        for lead, v in same_bank:
            if colour >> lead & 1:
                colour ^= v
        return colour

    own: dict[int, list[int]] = {}
    for c in chosen:
        own.setdefault(reduced(c), []).append(c)
    # a colour in both sets is an overlap the timing judges, not the space's doing
    return next(((o, c) for c in others for o in own.get(reduced(c), ()) if o != c), None)


def _colours(colours: str | Sequence[int], layout) -> list[int]:
    if isinstance(colours, str):
        return parse_list(colours, count=layout.colours, where=layout.described)
    values = sorted(set(colours))
    check_colours(values, layout.colours, layout.described)
    return values
