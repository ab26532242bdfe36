"""`memtint run --verify` (memtint.linux.isolation): the verdict from timers whose times come from
a known mapping (slow exactly for a row conflict), the command's wiring, and one real check on
this machine where it can run (root, x86-64, the probe built)."""

from __future__ import annotations

import os
import platform
import random

import pytest

from memtint import cli
from memtint.linux import isolation
from memtint.linux.errors import LinuxError
from memtint.linux.isolation import CANNOT_TELL, ISOLATED, NOT_ISOLATED, verify_isolation
from memtint.probe import linux as probe_linux
from memtint.probe.simulated import describe
from memtint.probe.timer import AddressSpace

I7_FIELDS = describe("i7-860")["nodes"][0]["fields"]
BANK_FIELDS = ("channel", "rank", "bank_group", "bank")
PAIRS = 200


def _masks(fields: dict, names) -> list[int]:
    return [sum(1 << b for b in bits) for name in names for bits in fields[name]]


def _value(masks: list[int], addr: int) -> tuple[int, ...]:
    return tuple((addr & m).bit_count() & 1 for m in masks)


class MappedTimer:
    """A Timer whose pairs take `slow_ns` when the true mapping `fields` puts them in one bank
    and different rows, `fast_ns` otherwise, with seeded jitter; `busy` is the share of
    measurements the machine is busy for (every round slow, whatever the pair)."""

    name = "mapped"

    def __init__(self, fields: dict = I7_FIELDS, frames: int | list[int] = 16384, fast_ns: float = 40.0,
                 slow_ns: float = 70.0, jitter_ns: float = 1.0, busy: float = 0.0, repetitions: int = 8, seed: int = 1):
        rng = random.Random(seed)
        chosen = frames if isinstance(frames, list) else rng.sample(range(1 << 21), frames)
        self._space = AddressSpace(33, chosen)
        self.bank = _masks(fields, BANK_FIELDS)
        self.row = _masks(fields, ("row",))
        self.fast_ns, self.slow_ns, self.jitter_ns, self.busy = fast_ns, slow_ns, jitter_ns, busy
        self.repetitions = repetitions
        self.rng = random.Random(seed + 1)
        self.measurements = 0
        self.conflicts_timed = 0

    def space(self) -> AddressSpace:
        return self._space

    def conflict(self, a: int, b: int) -> bool:
        return _value(self.bank, a) == _value(self.bank, b) and _value(self.row, a) != _value(self.row, b)

    def time(self, batch):
        out = []
        for m in batch:
            busy = self.rng.random() < self.busy
            samples = []
            for _ in range(self.repetitions):
                for a, b in m.rounds:
                    slow = busy or self.conflict(a, b)
                    self.conflicts_timed += self.conflict(a, b)
                    samples.append((self.slow_ns if slow else self.fast_ns) + self.rng.gauss(0, self.jitter_ns))
            out.append(samples)
        self.measurements += len(batch)
        return out


class ConstantTimer(MappedTimer):
    """Every round takes the same time: a timer that sees no row conflicts."""

    def time(self, batch):
        self.measurements += len(batch)
        return [[50.0] * (self.repetitions * len(m.rounds)) for m in batch]


# ---- the verdict ------------------------------------------------------------------------------


def test_bank_colours_against_the_others_are_isolated():
    timer = MappedTimer()
    report = verify_isolation("i7-860", None, "bank", "0-7", timer=timer, pairs=PAIRS)
    control, across, baseline = (report.populations[k] for k in ("control", "across", "baseline"))
    assert report.verdict == ISOLATED, report.reason
    assert report.other_colours == list(range(8, 32))
    assert control.slow == control.count == PAIRS and control.median_ns > 65
    assert across.slow == 0 and across.same_bank_by_mapping == 0
    assert baseline.slow == 0 and baseline.count == PAIRS
    assert timer.measurements >= 3 * PAIRS


def test_a_co_runner_whose_colours_overlap_the_programs_is_not_isolated():
    report = verify_isolation("i7-860", None, "bank", "0-7", other_colours="4-11", timer=MappedTimer(), pairs=PAIRS)
    across = report.populations["across"]
    assert report.verdict == NOT_ISOLATED, report.reason
    # Colours 4-7 are shared: the program lines in them find a co-runner line in their own bank.
    assert 0.3 < across.slow_share < 0.7
    assert across.slow == across.same_bank_by_mapping
    assert "share banks" in report.reason


def test_colours_from_a_mapping_that_is_not_the_machines_are_not_isolated():
    # The machine's b21 and b22 select rows, not ranks as the i7-860 mapping says: colours
    # differing only there share every bank.
    fields = dict(I7_FIELDS, rank=[], row=sorted(I7_FIELDS["row"] + [[21], [22]]))
    report = verify_isolation("i7-860", None, "bank", "0-7", timer=MappedTimer(fields), pairs=PAIRS)
    across = report.populations["across"]
    assert report.verdict == NOT_ISOLATED, report.reason
    assert across.same_bank_by_mapping == 0 and across.slow_share > 0.9
    assert "do not select banks" in report.reason


def test_a_timer_without_row_conflicts_cannot_tell(monkeypatch):
    report = verify_isolation("i7-860", None, "bank", "0-7", timer=ConstantTimer(), pairs=PAIRS)
    assert report.verdict == CANNOT_TELL
    assert "sees no row conflicts" in report.reason and "memtint probe" in report.reason


def test_a_busy_machine_slowing_whole_pairs_at_random_does_not_make_colours_shared():
    timer = MappedTimer(busy=0.05, seed=3)
    report = verify_isolation("i7-860", None, "bank", "0-7", timer=timer, pairs=PAIRS)
    assert report.verdict == ISOLATED, report.reason


def test_the_checks_pairs_are_what_their_populations_say():
    """Decoded independently of the check: control pairs conflict, across and baseline do not."""
    timer = MappedTimer()
    seen: list = []
    real_time = timer.time
    timer.time = lambda batch: (seen.extend(batch), real_time(batch))[1]
    verify_isolation("i7-860", None, "bank", "0-7", timer=timer, pairs=PAIRS)
    first = [m.rounds[0] for m in seen[:3 * PAIRS]]  # interleaved control, across, baseline
    colour = lambda a: _value(_masks({"c": [[13], [14], [15], [21], [22]]}, ("c",)), a)  # noqa: E731
    in_program = lambda a: colour(a)[3:] == (0, 0)  # noqa: E731
    for i, (a, b) in enumerate(first):
        kind = ("control", "across", "baseline")[i % 3]
        assert in_program(a)
        assert in_program(b) == (kind != "across")
        assert timer.conflict(a, b) == (kind == "control")


def test_a_program_with_every_colour_has_no_co_runner_to_check_against():
    with pytest.raises(LinuxError, match="every colour"):
        verify_isolation("i7-860", None, "bank", "0-31", timer=MappedTimer(), pairs=PAIRS)


def test_a_buffer_too_small_to_pair_says_to_enlarge_it():
    # One frame of the program's colours (frame 0: colour 0), so no two of its lines differ in row.
    frames = [0] + [(1 << 9) | f for f in range(64)]  # b21 set: colour 8 and up
    with pytest.raises(LinuxError, match=r"holds 0 distinct pairs of lines of the program's colours in one bank.*"
                                         r"--verify-buffer-mb"):
        verify_isolation("i7-860", None, "bank", "0-7", timer=MappedTimer(frames=frames), pairs=PAIRS)


def test_a_buffer_of_its_own_without_the_programs_colours_is_taken_again_larger(monkeypatch):
    # With transparent huge pages each 2 MiB of the buffer has one value of the high colour bits,
    # so a 16 MiB buffer missed colours 0-7 about one time in ten, and the check stopped.
    made: list[int] = []

    def timer(buffer_mb, repetitions, option):
        made.append(buffer_mb)
        t = MappedTimer(frames=[(1 << 9) | f for f in range(64)]) if len(made) == 1 else MappedTimer()
        t.close = lambda: None
        return t

    monkeypatch.setattr(probe_linux, "LinuxTimer", timer)
    monkeypatch.setattr(probe_linux, "vm_note", lambda: None)
    report = verify_isolation("i7-860", None, "bank", "0-7", buffer_mb=16, pairs=PAIRS)
    assert made == [16, 32] and report.verdict == ISOLATED
    assert report.notes[0] == ("a 16 MiB buffer held no frame of the program's colours; the check used 32 MiB")
    # A buffer that never holds them: GROW doublings, then the error naming the option.
    # Each smaller buffer stays mapped until the check ends, so the kernel cannot hand its frames
    # back to the larger one; the error names the colours the buffer had.
    made.clear()
    closed: list[int] = []
    def never(buffer_mb, repetitions, option):
        assert not closed, "a smaller buffer was freed before the larger one was mapped"
        made.append(buffer_mb)
        t = MappedTimer(frames=[(1 << 9) | f for f in range(64)])
        t.close = lambda: closed.append(buffer_mb)
        return t

    monkeypatch.setattr(probe_linux, "LinuxTimer", never)
    with pytest.raises(LinuxError, match=r"of colours 8-15\) has no frame of the program's colours: give it a larger "
                                         r"buffer \(--verify-buffer-mb\)"):
        verify_isolation("i7-860", None, "bank", "0-7", buffer_mb=16, pairs=PAIRS)
    assert made == [16, 32, 64] and sorted(closed) == [16, 32, 64]


def test_in_the_simulator_bank_colours_are_isolated_and_shared_ones_are_not():
    from memtint.probe.simulated import SimulatedTimer

    timer = SimulatedTimer("i7-860", share=0.01)
    assert verify_isolation("i7-860", None, "bank", "0-7", timer=timer, pairs=PAIRS).verdict == ISOLATED
    shared = verify_isolation("i7-860", None, "bank", "0-7", other_colours="4-11", timer=timer, pairs=PAIRS)
    assert shared.verdict == NOT_ISOLATED, shared.reason


@pytest.mark.parametrize("space, colours, shared", [("llc", "0-63", "colour 0 shares banks with colour 64"),
                                                     ("cache-only", "0-3", "colour 0 shares banks with colour 4")])
def test_a_space_whose_colours_share_banks_is_refused_not_judged(space, colours, shared):
    # Row conflicts across LLC colours are the mapping's own: it said "not isolated" of a partition
    # working as designed.
    timer = MappedTimer()
    with pytest.raises(LinuxError, match=f"checks bank isolation, and the {space} colour space of i7-860 does not "
                                         f"partition banks: {shared} by the mapping itself"):
        verify_isolation("i7-860", None, space, colours, timer=timer, pairs=PAIRS)
    assert timer.measurements == 0  # refused before anything is timed
    # LLC colours with bank bits b13-b15 (colour bits 1-3) all 0 are whole banks': judged, and isolated
    assert verify_isolation("i7-860", None, "llc", "0-1,16-17,32-33,48-49,64-65,80-81,96-97,112-113",
                            timer=MappedTimer(), pairs=PAIRS).verdict == ISOLATED


# ---- the command ------------------------------------------------------------------------------


def test_verify_and_its_buffer_are_parsed():
    args = cli.build_parser().parse_args(["run", "--verify", "--verify-buffer-mb", "32", "--colors", "0-7", "--",
                                          "/bin/true"])
    assert args.verify and args.verify_buffer_mb == 32
    args = cli.build_parser().parse_args(["run", "--colors", "0-7", "--", "/bin/true"])
    assert not args.verify and args.verify_buffer_mb is None


@pytest.mark.parametrize("argv, message", [
    (["--verify-buffer-mb", "8", "--colors", "0-7"], "--verify-buffer-mb only applies with --verify"),
    (["--verify", "--tier-policy", "local"], "--verify checks the isolation of colours"),
    # it was checked after --tier-policy's return, and so accepted there
    (["--verify-buffer-mb", "8", "--tier-policy", "local"], "--verify-buffer-mb applies to colouring (--colors), not "
                                                             "to --tier-policy"),
])
def test_verify_options_out_of_place_are_refused(argv, message, capsys):
    assert cli.main(["run", *argv, "--", "/bin/true"]) == 2
    assert message in capsys.readouterr().err


def test_unprivileged_verify_says_verify_needs_root_and_the_run_without_it_does_not(monkeypatch, tmp_path, capsys):
    # The timer's text said to run `memtint probe` as root, a command the user had not run.
    from memtint.linux import launch, pagemap

    monkeypatch.setattr(pagemap, "frame_access_error", lambda: "frame numbers need root")
    monkeypatch.setattr(launch, "frame_access_error", lambda: "frame numbers need root")
    free = tmp_path / "free_hugepages"
    free.write_text("4\n")
    monkeypatch.setattr(launch, "HUGEPAGES_FREE", str(free))
    marker = tmp_path / "ran"
    status = cli.main(["run", "--verify", "--colors", "0-3", "--space", "cache-only", "--mode", "hugepage", "--",
                       "/bin/sh", "-c", f"touch {marker}"])
    assert status == 2
    err = capsys.readouterr().err
    assert err.startswith("memtint: error: --verify needs root or CAP_SYS_ADMIN") and "without --verify this run needs no " \
        "privilege" in err and "memtint probe" not in err
    assert not marker.exists()


def test_verify_without_root_stops_with_the_timers_message_before_the_program_runs(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(probe_linux.os, "geteuid", lambda: 1000)
    with pytest.raises(LinuxError) as expected:
        probe_linux.LinuxTimer(isolation.BUFFER_MB)
    marker = tmp_path / "ran"
    status = cli.main(["run", "--verify", "--colors", "0-7", "--", "/bin/sh", "-c", f"touch {marker}"])
    assert status == 2
    assert f"memtint: error: {expected.value}" in capsys.readouterr().err
    assert not marker.exists()


ROOT = os.geteuid() == 0
X86 = platform.system() == "Linux" and platform.machine() in ("x86_64", "AMD64")


def _runnable() -> str | None:
    """Why `memtint run` cannot start a coloured program here, or None."""
    from memtint.linux import native

    if not ROOT:
        return "reading frame numbers needs root (CI runs as root)"
    try:
        native.library_path()
    except LinuxError:
        return "libmemtint is not built (make build)"
    return None


@pytest.mark.skipif(_runnable() is not None, reason=str(_runnable()))
def test_verify_prints_the_verdict_and_runs_the_program_unchanged(monkeypatch, tmp_path, capsys):
    made: list[int] = []

    def timer(buffer_mb, repetitions, option):
        made.append(buffer_mb)
        assert option == "--verify-buffer-mb"  # what its errors name
        t = MappedTimer()
        t.close = lambda: None
        return t

    monkeypatch.setattr(probe_linux, "LinuxTimer", timer)
    marker = tmp_path / "ran"
    status = cli.main(["run", "--verify", "--verify-buffer-mb", "8", "--colors", "0-7", "--", "/bin/sh", "-c",
                       f"echo $MEMTINT_COLORS > {marker}; exit 3"])
    err = capsys.readouterr().err
    assert status == 3, err
    assert made == [8]
    assert "isolated: row conflicts show" in err and "control" in err and "baseline" in err
    assert marker.read_text().strip() == "0-7"


def _real_skip() -> str | None:
    if not X86:
        return "the DRAM probe runs on Linux on x86-64"
    if not os.path.isfile(probe_linux.PACKAGED):
        return "the DRAM probe is not built (make native)"
    return _runnable()


@pytest.mark.skipif(_real_skip() is not None, reason=str(_real_skip()))
def test_a_real_check_on_this_machine_gives_one_of_the_verdicts(memtint):
    code, _, err = memtint("run", "--verify", "--verify-buffer-mb", "16", "--colors", "0-7", "--", "/bin/true")
    assert code == 0, err
    verdicts = [v for v in (NOT_ISOLATED, ISOLATED, CANNOT_TELL) if f"{v}: " in err]
    assert verdicts, err
    assert "control" in err and "across" in err and "baseline" in err
