"""The mapping search: from timed loads to a DRAM address mapping (docs/probe.md).

1. **Row conflicts.** Random pairs of lines are timed; a pair in one bank but different rows is
   slow every round (precharge and activate before each load). The times split into a fast and a
   slow cluster (two-means on each pair's median); the slow pairs are timed again and kept only
   if slow again.
2. **Bank functions (XOR search).** Every conflicting pair's difference a ^ b leaves each
   function that selects the bank (channel, rank, bank group, bank: linear functions over GF(2))
   unchanged, so the functions span the null space of the differences. It is computed from
   random subsets of the pairs and kept when at least 90 % of all pairs agree with it (a
   mis-timed pair cannot remove a function), and written in its lightest basis (single bits
   where the mapping has them, XOR pairs otherwise). Each function's consistency is the share of
   conflicting pairs that agree with it.
3. **Which function is which.** A channel function is the one whose fixing halves bandwidth:
   a wide round of loads to distinct banks, all with that function 0, is the slowest (PALLOC's
   test). Among the rest, pairs that differ in one function only: on DDR3 a rank costs the
   rank-to-rank switch (tRTRS) on top of the burst; on DDR4 a bank group is the fastest (tCCD_S
   against tCCD_L), and ranks are told from banks by activations: eight row misses within one
   rank wait for tFAW, across ranks they do not. The organisation's counts (channels, ranks,
   bank groups; from the machine, or the user on real hardware) say how many of each to take.
4. **Rows and columns (Algorithm 1).** Each remaining address bit is flipped with the bits that
   keep every bank function unchanged (each function's lowest bit, its own): if the pair
   conflicts, the bit selects the row, otherwise the column.

Timing cannot tell the order of bits within a field (bank 3 and bank 5 behave alike), nor which
of two bits of an XOR pair also feeds the row (both mappings have the same rows): the result
lists bits lowest first and gives an XOR pair's higher bit to the row, as memtint's presets do.
"""

from __future__ import annotations

import math
import random
import statistics
import dataclasses
from dataclasses import dataclass
from typing import Callable, Sequence

from memtint._engine import MemtintError
from memtint.probe import gf2
from memtint.probe.timer import LINE_BITS, AddressSpace, Measurement, Timer

FIELDS = ("channel", "rank", "bank_group", "bank")


class ProbeError(MemtintError):
    """The search could not finish: the signal is too weak or the memory too small."""


@dataclass
class Organisation:
    """What the search is told about the memory: counts only, no bits."""

    channels: int | None = None
    ranks: int | None = None
    bank_groups: int | None = None
    banks_per_group: int | None = None
    rows: int | None = None
    columns: int | None = None
    bus_bytes: int = 8
    burst_length: int = 8

    @classmethod
    def from_engine(cls, o: dict) -> "Organisation":
        return cls(
            channels=o["channels"],
            ranks=o["ranks"],
            bank_groups=o["bank_groups"],
            banks_per_group=o["banks_per_group"],
            rows=o["rows"],
            columns=o["columns"],
            bus_bytes=o["bus_width_bits"] // 8,
            burst_length=o["burst_length"],
        )

    def field_bits(self) -> dict[str, int | None]:
        def lg(n: int | None) -> int | None:
            return None if n is None else int(math.log2(n))

        return {"channel": lg(self.channels), "rank": lg(self.ranks), "bank_group": lg(self.bank_groups), "bank": lg(self.banks_per_group)}

    def bank_function_count(self) -> int | None:
        counts = self.field_bits()
        return None if any(v is None for v in counts.values()) else sum(counts.values())  # type: ignore[misc]


@dataclass
class Settings:
    """The search's knobs; the defaults found every preset mapping without noise (docs/probe.md)."""

    seed: int = 1
    batch: int = 512
    # Confirmations, and every later pair, run this many times the screening's rounds.
    confirm_factor: int = 4
    # Verified conflicting pairs to collect: enough that their differences span every row and
    # column bit many times over.
    conflicts: int = 96
    max_pairs: int = 400_000
    # Refuse before `max_pairs` once this many pairs were confirmed slow with no split between
    # them, and none since half as many: the two medians of a population that doubled without
    # separating stay where they are (0: only `max_pairs` ends the search).
    settled_confirmed: int = 1000
    subsets: int = 40
    agreement: float = 0.9
    # Pairs per function (hit pairs), per bit (row or column) and wide rounds per function.
    pairs_per_function: int = 8
    pairs_per_bit: int = 5
    wide_rounds: int = 4
    wide_loads: int = 64
    # Pairs within one aligned block of 2^span_bits bytes (None: anywhere in the buffer). In a
    # virtual machine whose host backs it with 2 MiB pages, guest and host agree on the bits
    # below 21 only, so pairs within 2 MiB see the host's functions of those bits.
    span_bits: int | None = None
    # The finest time difference taken as real: margins are counted in the larger of this and
    # the measurements' spread (a simulated timer has no spread of its own).
    resolution_ns: float = 1.0
    # A field is assigned when its functions' timing differs from the rest by this z-score;
    # below it every candidate is measured twice as often, at most `max_rounds` times.
    margin: float = 4.0
    max_rounds: int = 4


@dataclass
class Function:
    mask: int
    field: str = "bank"
    consistency: float = 1.0
    # How far the measurement that put it in its field lies from the other group's, in units
    # of the measurements' spread (inf where there was nothing to tell apart).
    margin: float = math.inf
    signature: dict = dataclasses.field(default_factory=dict)

    def bits(self) -> list[int]:
        return gf2.bits(self.mask)


@dataclass
class ProbeResult:
    capacity_bits: int
    offset_bits: int
    functions: list[Function]
    row_bits: list[int]
    column_bits: list[int]
    bit_confidence: dict[int, float]
    threshold_ns: float
    fast_ns: float
    slow_ns: float
    # The conflict's extra time in units of the other pairs' spread (or the resolution).
    separation: float
    measurements: int
    pairs_timed: int
    conflicts: int
    warnings: list[str] = dataclasses.field(default_factory=list)
    problems: list[str] = dataclasses.field(default_factory=list)
    raw: dict = dataclasses.field(default_factory=dict)

    def fields(self) -> dict[str, list]:
        """The mapping's `[fields]`: per field its coordinate bits, LSB first."""
        out: dict[str, list] = {f: [] for f in (*FIELDS, "row", "column")}
        for fn in sorted(self.functions, key=lambda f: f.bits()):
            b = fn.bits()
            out[fn.field].append(b[0] if len(b) == 1 else b)
        out["row"] = list(self.row_bits)
        out["column"] = list(self.column_bits)
        return out

    def confidence(self) -> float:
        """The least of every function's consistency and every bit's agreement."""
        values = [f.consistency for f in self.functions] + list(self.bit_confidence.values())
        return min(values) if values else 0.0


def median(xs: Sequence[float]) -> float:
    return statistics.median(xs) if xs else math.nan


def lower_half_mean(xs: Sequence[float]) -> float:
    """The mean of the values from the 10th to the 50th percentile."""
    ordered = sorted(xs)
    n = len(ordered)
    part = ordered[n // 10 : max(n // 2, n // 10 + 1)]
    return statistics.fmean(part)


def spread(xs: Sequence[float]) -> float:
    """A robust standard deviation (1.4826 MAD)."""
    if len(xs) < 2:
        return 0.0
    m = statistics.median(xs)
    return 1.4826 * statistics.median([abs(x - m) for x in xs])


def two_means(values: Sequence[float], lo: float | None = None) -> tuple[float, float, float]:
    """Fast centre, slow centre and the threshold between them: 1-D two-medians (medians, not
    means, so interrupt-hit outliers do not drag the slow centre), from `lo` (default the
    median) and the 99th percentile."""
    ordered = sorted(values)
    lo = median(ordered) if lo is None else lo
    hi = ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]
    for _ in range(50):
        t = (lo + hi) / 2
        fast = [v for v in ordered if v <= t]
        slow = [v for v in ordered if v > t]
        if not slow or not fast:
            break
        nlo, nhi = median(fast), median(slow)
        if (nlo, nhi) == (lo, hi):
            break
        lo, hi = nlo, nhi
    return lo, hi, (lo + hi) / 2


Progress = Callable[[str, int, int], None]


class Search:
    def __init__(self, timer: Timer, org: Organisation, settings: Settings | None = None, progress: Progress | None = None):
        self.timer = timer
        self.org = org
        self.s = settings or Settings()
        self.rng = random.Random(self.s.seed)
        self.space: AddressSpace = timer.space()
        self.cap = self.space.capacity_bits
        self.progress = progress or (lambda phase, done, total: None)
        self.warnings: list[str] = []
        # Disagreements with the organisation's counts: the result is not a mapping of it.
        self.problems: list[str] = []
        self.pairs_timed = 0
        self.raw: dict = {}
        self.too_small: str | None = None
        # Address bits the buffer varies: the line bits of a page, and the frame bits its frames
        # differ in. Others cannot be probed (a bank function over them would look constant).
        frames = self.space.frames()
        spread_bits = 0
        for f in frames:
            spread_bits |= f ^ frames[0]
        self.varying = (spread_bits << 12) | ((1 << 12) - (1 << LINE_BITS))
        if self.s.span_bits is not None:
            self.varying &= (1 << self.s.span_bits) - 1
        self._cut_unpaired_bits(frames, spread_bits)

    def _cut_unpaired_bits(self, frames: list[int], spread_bits: int) -> None:
        """A buffer whose frames cluster in part of memory (the kernel fills one zone first; a
        virtual machine's guest-physical memory) can vary a high bit yet hold no two frames
        differing in it alone: such bits only ever flip together, look like a function of each
        other, and a pair flipping one cannot be formed.
        From the lowest such bit up nothing is probed (step 4 takes them as rows). A buffer too
        small to hold such pairs at random is left alone: more memory is the remedy there, and
        :meth:`run` asks for it before timing anything when a bit it varies has no pair."""
        if len(frames) * self.space.share() < 32:
            present = set(frames)
            bit = next((b for b in range(spread_bits.bit_length()) if spread_bits >> b & 1
                        and self.varying >> (b + 12) & 1 and not any(f ^ (1 << b) in present for f in frames)), None)
            if bit is not None:
                self.too_small = (f"the buffer holds no pair of lines {1 << (bit + 12):#x} apart: its "
                                  f"{len(frames):,} frames cover {self.space.share():.1%} of memory; give the probe "
                                  "more memory (--buffer-mb)")
            return
        present = set(frames)
        for bit in range(spread_bits.bit_length()):
            if spread_bits >> bit & 1 and not any(f ^ (1 << bit) in present for f in frames):
                cut = bit + 12
                if not self.varying >> cut:
                    return
                self.varying &= (1 << cut) - 1
                ordered = sorted(frames)
                runs = 1 + sum(b != a + 1 for a, b in zip(ordered, ordered[1:]))
                gib = lambda f: f"{(f << 12) / (1 << 30):.1f}"  # noqa: E731
                self.warnings.append(
                    f"address bits b{cut} and above are not probed: no two of the buffer's {len(frames):,} frames "
                    f"differ in b{cut} alone (they lie between {gib(ordered[0])} and {gib(ordered[-1] + 1)} GiB, "
                    f"in {runs:,} runs), so it cannot be flipped alone; they are taken as row bits")
                return

    # -- measuring ---------------------------------------------------------------------------

    def _time(self, measurements: list[Measurement]) -> list[float]:
        """Each measurement's typical round time: the mean of its rounds from the 10th to the
        50th percentile. What disturbs a timed load (interrupts, other cores' traffic, TLB and
        cache misses) only ever adds time, and a row conflict adds it to every round, so the
        lower half carries the signal and stays clean while up to half the rounds are hit; a
        mean, not a median, so a coarse timer's ticks (10 ns on some VMs) average out."""
        return [lower_half_mean(s) for s in self.timer.time(measurements)]

    def _pairs(self, pairs: list[tuple[int, int]], factor: int = 1) -> list[float]:
        """Each pair's median round time, over `factor` times the timer's repetitions."""
        self.pairs_timed += len(pairs)
        b = self.space.base
        return self._time([Measurement(((b + x, b + y),) * factor) for x, y in pairs])

    def _partner(self, delta: int, tries: int = 4000) -> tuple[int, int]:
        """A random line a of the space with a ^ delta in it too."""
        for _ in range(tries):
            a = self.space.random_line(self.rng)
            if self.space.has(a ^ delta):
                return a, a ^ delta
        raise ProbeError(
            f"the buffer holds no pair of lines {delta:#x} apart after {tries} tries: "
            f"it covers {self.space.share():.1%} of memory; give the probe more memory"
        )

    # -- 1. row conflicts --------------------------------------------------------------------

    def conflicts(self) -> tuple[list[int], tuple[float, float, float]]:
        """Screen random pairs, confirm the slow ones with longer measurements, and split the
        confirmed times into fast and slow. Screening passes pairs above the fast pairs' median
        plus two spreads (most conflicts, a few per cent of the rest), so the confirmed
        population holds both kinds in numbers two-means can split even where conflicts are one
        pair in a thousand (a machine with many banks) and the timer is noisy."""
        screened: list[float] = []
        confirmed: list[tuple[int, float]] = []  # (difference, confirmed median)
        seen = 0
        fast = slow = threshold = math.nan
        # The confirmed count when the clusters last separated (or the search began).
        last_strong = 0
        while True:
            pairs = []
            while len(pairs) < self.s.batch:
                a, b = self.space.random_line(self.rng), self.space.random_line(self.rng)
                if self.s.span_bits is not None:
                    low = (1 << self.s.span_bits) - 1
                    b = (a & ~low) | (b & low)
                if a != b and self.space.has(b):
                    pairs.append((a, b))
            times = self._pairs(pairs)
            screened += times
            self.raw.setdefault("random_pair_ns", []).extend(round(t, 2) for t in times)
            seen += len(pairs)
            centre = median(screened)
            loose = centre + 2 * max(spread(screened), self.s.resolution_ns)
            slow_pairs = [(a, b) for (a, b), t in zip(pairs, times) if t > loose]
            if slow_pairs:
                again = self._pairs(slow_pairs, self.s.confirm_factor)
                confirmed += [(a ^ b, t) for (a, b), t in zip(slow_pairs, again)]
            verified: list[int] = []
            if len(confirmed) >= 2:
                fast, slow, threshold = two_means([t for _, t in confirmed] + [centre], lo=centre)
                fast_side = [t for _, t in confirmed if t <= threshold] + [centre]
                strong = slow - fast > 3 * max(spread(fast_side), self.s.resolution_ns)
                if strong:
                    verified = [d for d, t in confirmed if t > threshold]
                    last_strong = len(confirmed)
            self.progress("row conflicts", min(len(verified), self.s.conflicts), self.s.conflicts)
            if len(verified) >= self.s.conflicts:
                break
            settled = 0 < self.s.settled_confirmed <= len(confirmed) and len(confirmed) >= 2 * last_strong
            if seen >= self.s.max_pairs or settled:
                raise ProbeError(
                    f"{len(verified)} row conflicts confirmed in {seen:,} random pairs (other pairs {centre:.1f} ns; "
                    + (f"{len(confirmed)} pairs slow when timed again, at {slow:.1f} ns, too close to the others to "
                       "count as conflicts" if not math.isnan(slow) else "too few pairs slow when timed again")
                    + "): the timing signal is too weak to tell a row conflict apart; more --repetitions, an idle "
                    "machine or a larger buffer may help"
                )
        self.raw["confirmed_pair_ns"] = [round(t, 2) for _, t in confirmed]
        return verified, (fast, slow, threshold)

    # -- 2. bank functions -------------------------------------------------------------------

    def functions(self, diffs: list[int]) -> tuple[list[int], float]:
        width = self.cap - LINE_BITS
        best: tuple[int, float, list[int]] | None = None
        size = min(len(diffs), width + 8)
        for _ in range(self.s.subsets):
            sample = self.rng.sample(diffs, size)
            null = gf2.null_space(sample, self.cap, LINE_BITS, self.varying)
            if len(null) > 16:
                continue
            agree = sum(all(gf2.parity(m & d) == 0 for m in null) for d in diffs) / len(diffs)
            if agree >= self.s.agreement and (best is None or (len(null), agree) > (best[0], best[1])):
                best = (len(null), agree, null)
        if best is None or best[0] == 0:
            raise ProbeError(
                f"no bank function over the physical address bits agrees with {self.s.agreement:.0%} of the "
                f"{len(diffs)} slow pairs: they are not row conflicts of a linear mapping. Either noise made them "
                "slow (an idle machine and more --repetitions help), or the addresses the probe sees are not the "
                "memory controller's (in a virtual machine the hypervisor maps guest frames to host frames as it "
                "likes, so bits above its page size are scrambled)"
            )
        inliers = [d for d in diffs if all(gf2.parity(m & d) == 0 for m in best[2])]
        null = gf2.null_space(inliers, self.cap, LINE_BITS, self.varying)
        return gf2.lightest_basis(null), best[1]

    # -- 3. fields ---------------------------------------------------------------------------

    def _with_combo(self, functions: list[int], duals: list[int], want: dict[int, int]) -> int:
        """A line of the space whose functions `want` (index -> value) holds."""
        for _ in range(4000):
            x = self.space.random_line(self.rng)
            for i, v in want.items():
                if gf2.parity(functions[i] & x) != v:
                    x ^= duals[i]
            if self.space.has(x):
                return x
        raise ProbeError("the buffer holds too few lines of the wanted banks: give the probe more memory")

    def classify(self, masks: list[int], row_delta: int) -> list[Function]:
        k = len(masks)
        fns = [Function(m) for m in masks]
        if k == 0:
            return fns
        duals = gf2.solve_duals(masks, self.cap)
        counts = self.org.field_bits()
        b = self.space.base

        def hit(i: int) -> Measurement:
            # Both lines' rows stay open; only the function's own constraint shows.
            x, y = self._partner(duals[i])
            self.pairs_timed += 1
            return Measurement(((b + x, b + y),) * self.s.confirm_factor)

        def wide(i: int) -> Measurement:
            # Loads to distinct banks, all with function i = 0.
            combos = [c for c in range(1 << k) if not c >> i & 1]
            chosen = self.rng.sample(combos, min(len(combos), self.s.wide_loads))
            return Measurement((tuple(b + self._with_combo(masks, duals, {j: c >> j & 1 for j in range(k)}) for c in chosen),))

        hits = self._collect(hit, range(k), self.s.pairs_per_function)
        widths = self._collect(wide, range(k), self.s.wide_rounds)
        self.progress("fields", 1, 3)

        rest = list(range(k))
        # Channels: fixing a channel function confines the loads to part of the channels.
        n_ch = counts["channel"]
        if n_ch is None:
            typical = median([median(v) for v in widths.values()])
            chosen = [i for i in rest if median(widths[i]) > 1.25 * typical]
            z = math.inf
        else:
            chosen, z = self._split(wide, widths, rest, n_ch, larger=True)
        self._assign(fns, chosen, z, "channel")
        rest = [i for i in rest if i not in chosen]
        n_bg, n_rank = counts["bank_group"], counts["rank"]
        acts: dict[int, list[float]] = {}
        if n_bg:
            chosen, z = self._split(hit, hits, rest, n_bg, larger=False)
            self._assign(fns, chosen, z, "bank_group")
            bgs = chosen
            rest = [i for i in rest if i not in chosen]
            if n_rank:
                act = self._activation_round(masks, duals, rest, bgs, row_delta)
                acts = self._collect(act, rest, self.s.wide_rounds)
                chosen, z = self._split(act, acts, rest, n_rank, larger=False)
                self._assign(fns, chosen, z, "rank")
                rest = [i for i in rest if i not in chosen]
        elif n_rank:
            chosen, z = self._split(hit, hits, rest, n_rank, larger=True)
            self._assign(fns, chosen, z, "rank")
            rest = [i for i in rest if i not in chosen]
        elif n_rank is None:
            self.warnings.append("ranks and bank groups are not told apart from banks without the organisation's counts")
        for i, f in enumerate(fns):
            f.signature = {"pair_ns": round(median(hits[i]), 3), "wide_ns": round(median(widths[i]), 3)}
            if i in acts:
                f.signature["misses_ns"] = round(median(acts[i]), 3)
        self.progress("fields", 3, 3)
        return fns

    def _collect(self, make: Callable[[int], Measurement], idxs: Sequence[int], n: int,
                 into: dict[int, list[float]] | None = None) -> dict[int, list[float]]:
        """`n` more measurements from `make` per index, their times added to `into`."""
        out = into if into is not None else {i: [] for i in idxs}
        order = [i for i in idxs for _ in range(n)]
        for i, t in zip(order, self._time([make(i) for i in order])):
            out.setdefault(i, []).append(t)
        return out

    def _split(self, make: Callable[[int], Measurement], values: dict[int, list[float]], pool: list[int], n: int,
               larger: bool) -> tuple[list[int], float]:
        """The `n` functions of `pool` with the largest (or smallest) typical time, and the
        margin to the others: the z-score between the nearest two across the split. Below
        `Settings.margin` every candidate is measured twice as often, up to `max_rounds` times."""
        if n == 0 or n >= len(pool):
            return list(pool[:n]), math.inf
        for attempt in range(self.s.max_rounds + 1):
            est = {i: median(values[i]) for i in pool}
            order = sorted(pool, key=lambda i: -est[i] if larger else est[i])
            mine, other = order[n - 1], order[n]

            def se(i: int) -> float:
                return max(spread(values[i]), self.s.resolution_ns) / math.sqrt(len(values[i]))

            z = abs(est[mine] - est[other]) / math.hypot(se(mine), se(other))
            if z >= self.s.margin or attempt == self.s.max_rounds:
                return order[:n], z
            self._collect(make, pool, len(values[pool[0]]), values)
        raise AssertionError("unreachable")

    def _activation_round(self, masks: list[int], duals: list[int], rest: list[int], bgs: list[int], row_delta: int):
        """For candidate f: row misses to the banks that f and the bank groups select, every
        other function fixed. Within one rank they wait for tFAW; across ranks they do not."""
        k = len(masks)
        b = self.space.base

        def make(i: int) -> Measurement:
            free = [i, *bgs]
            fixed = {j: self.rng.randrange(2) for j in range(k) if j not in free}
            firsts, seconds = [], []
            for c in range(1 << len(free)):
                want = dict(fixed) | {j: c >> n & 1 for n, j in enumerate(free)}
                for _ in range(100):
                    x = self._with_combo(masks, duals, want)
                    if self.space.has(x ^ row_delta):
                        break
                else:
                    raise ProbeError("the buffer holds too few rows of the wanted banks: give the probe more memory")
                firsts.append(b + x)
                seconds.append(b + (x ^ row_delta))
            return Measurement((tuple(firsts), tuple(seconds)))

        return make

    def _assign(self, fns: list[Function], chosen: list[int], z: float, name: str) -> None:
        for i in chosen:
            fns[i].field = name
            fns[i].margin = z
        if z < self.s.margin:
            # With the functions' count already at odds with the organisation, the fields cannot fit it:
            # that, not noise, is the likelier cause.
            miscounted = any(p.startswith("found ") and "bank functions, the organisation has" in p for p in self.problems)
            why = ("the organisation given does not fit the functions found (above): check --channels, --ranks, "
                   "--bank-groups and --banks" if miscounted else "too much noise")
            self.problems.append(
                f"{name}: could not tell {', '.join('^'.join(f'b{x}' for x in fns[i].bits()) for i in chosen)} from the "
                f"other bank functions by timing (margin {z:.1f}, needs {self.s.margin:g}): {why}"
            )

    # -- 4. rows and columns -----------------------------------------------------------------

    def rows_and_columns(self, masks: list[int], threshold: float) -> tuple[list[int], list[int], dict[int, float]]:
        """Per bit, pairs flipping it (and the bank-only bits that keep every function): slow
        pairs vote row, fast ones column. A split vote is measured again with twice the pairs, at
        most `max_rounds` times; a bit still below 80 % agreement is a problem."""
        reduced = gf2.echelon(masks)  # pivot (a function's own lowest bit) -> function
        candidates = [k for k in range(LINE_BITS, self.cap) if k not in reduced]
        untestable = [k for k in candidates if not self.varying >> k & 1]
        deltas = {}
        for k in candidates:
            delta = 1 << k
            for p, f in reduced.items():
                if f >> k & 1:
                    delta ^= 1 << p
            deltas[k] = delta
        votes: dict[int, list[float]] = {}
        todo = {k: self.s.pairs_per_bit for k in candidates if k not in untestable}
        for _ in range(self.s.max_rounds + 1):
            pairs, owner = [], []
            for k, n in todo.items():
                try:
                    found = [self._partner(deltas[k]) for _ in range(n)]
                except ProbeError:
                    untestable.append(k)
                    continue
                pairs += found
                owner += [k] * len(found)
            for k, t in zip(owner, self._pairs(pairs, self.s.confirm_factor)):
                votes.setdefault(k, []).append(t)
            todo = {}
            for k, ts in votes.items():
                slow = sum(t > threshold for t in ts)
                if 0 < slow < len(ts):
                    todo[k] = len(ts)
            if not todo:
                break
        rows, cols, conf = [], [], {}
        self.raw["bit_flip_ns"] = {}
        for k in candidates:
            if k in untestable:
                # Above what the buffer reaches: rows lie highest on every known controller.
                rows.append(k)
                conf[k] = 0.0
                continue
            ts = votes[k]
            self.raw["bit_flip_ns"][str(k)] = [round(t, 2) for t in ts]
            slow = sum(t > threshold for t in ts)
            (rows if 2 * slow > len(ts) else cols).append(k)
            conf[k] = max(slow, len(ts) - slow) / len(ts)
            if conf[k] < 0.8:
                self.problems.append(f"b{k}: {slow} of {len(ts)} flips conflicted; row or column cannot be told (too much noise)")
        if untestable:
            self.warnings.append(
                "no two lines of the buffer differ in address bit(s) " + ", ".join(f"b{k}" for k in sorted(untestable))
                + " alone: taken as row bits, untested (confidence 0); a larger buffer may reach them"
            )
        return rows, cols, conf

    # -- the whole search --------------------------------------------------------------------

    def run(self) -> ProbeResult:
        if self.too_small:  # before minutes of timing that would end in the same error
            raise ProbeError(self.too_small)
        diffs, (fast, slow, threshold) = self.conflicts()
        masks, agree = self.functions(diffs)
        expected = self.org.bank_function_count()
        if expected is not None and len(masks) != expected:
            self.problems.append(
                f"found {len(masks)} bank functions, the organisation has {expected} "
                f"({self.org.channels} channels x {self.org.ranks} ranks x {self.org.bank_groups} bank groups x "
                f"{self.org.banks_per_group} banks)"
            )
        consistency = [sum(gf2.parity(m & d) == 0 for d in diffs) / len(diffs) for m in masks]
        row_delta = next((d for d in diffs if all(gf2.parity(m & d) == 0 for m in masks)), 0)
        fns = self.classify(masks, row_delta)
        for f, c in zip(fns, consistency):
            f.consistency = c
        self.progress("rows and columns", 0, 1)
        rows, cols, conf = self.rows_and_columns(masks, threshold)
        self.progress("rows and columns", 1, 1)
        offset_bits = int(math.log2(self.org.bus_bytes))
        column_bits = list(range(offset_bits, LINE_BITS)) + cols
        for what, n, want in (("row", len(rows), self.org.rows), ("column", len(column_bits), self.org.columns)):
            if want is not None and 1 << n != want:
                self.problems.append(f"found {n} {what} bits, the organisation has {want} {what}s ({int(math.log2(want))} bits)")
        return ProbeResult(
            capacity_bits=self.cap,
            offset_bits=offset_bits,
            functions=fns,
            row_bits=rows,
            column_bits=column_bits,
            bit_confidence=conf,
            threshold_ns=threshold,
            fast_ns=fast,
            slow_ns=slow,
            separation=(slow - fast) / max(spread([v for v in self.raw["random_pair_ns"] if v <= threshold]), self.s.resolution_ns),
            measurements=self.timer.measurements,
            pairs_timed=self.pairs_timed,
            conflicts=len(diffs),
            warnings=self.warnings,
            problems=self.problems,
            raw=self.raw | {"agreement": agree, "conflict_differences": [hex(d) for d in diffs]},
        )
