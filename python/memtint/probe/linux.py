"""The probe's timer on this machine: measurements run by the native program
native/dram_probe/dram_probe.c (`memtint-dram-probe`) on a locked buffer of its own.

The program maps the buffer, reads its pages' frame numbers from /proc/self/pagemap (root only:
others read frame 0) and prints them; the buffer's frames are the `AddressSpace` the search draws
addresses from. It then takes measurements as physical addresses, translates them through its
frame table and times each round with rdtscp, its lines flushed with clflush after it (the
protocol is in the program's header comment). Times come back in TSC ticks and are converted
to ns with the TSC rate the program measured against CLOCK_MONOTONIC_RAW.

The address space spans the top of the "System RAM" ranges of /proc/iomem, rounded up to a power
of two (where /proc/iomem shows zeros, MemTotal rounded up), and always the buffer's highest
frame: an address bit the search considers is one the machine's memory can have.
"""

from __future__ import annotations

import os
import platform
import subprocess
import tempfile
import weakref
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from memtint import stopping
from memtint.linux.errors import LinuxError, PrivilegeError
from memtint.probe.timer import PAGE_BITS, AddressSpace, Measurement

PACKAGED = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "_native", "memtint-dram-probe")
MIB = 1 << 20
HUGE_PAGE_MB = 2
HUGE_SYSFS = "/sys/kernel/mm/hugepages/hugepages-2048kB"
# The simulated timer's defaults (memtint_engine::mapping_probe), and its bounds.
REPETITIONS = 8
WARMUP = 1
MAX_REPETITIONS = 100_000
MAX_WARMUP = 1000
# Samples per request to the program (it refuses more than 16M): larger batches are split.
SAMPLES_PER_REQUEST = 1_000_000

Meminfo = Callable[[], "dict[str, int]"]


def probe_path() -> str:
    """The native program: MEMTINT_DRAM_PROBE, else the one `make build` puts in the package."""
    override = os.environ.get("MEMTINT_DRAM_PROBE")
    if override:
        if not os.path.isfile(override):
            raise LinuxError(f"MEMTINT_DRAM_PROBE={override}: no such file (unset it to use the built probe)")
        return override
    if not os.path.isfile(PACKAGED):
        raise LinuxError(f"the DRAM probe is not built ({PACKAGED} is missing): run make build")
    return PACKAGED


def read_meminfo(path: str = "/proc/meminfo") -> dict[str, int]:
    """/proc/meminfo: sizes in bytes (its kB fields), counts as they are (HugePages_*)."""
    out: dict[str, int] = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            name, _, rest = line.partition(":")
            parts = rest.split()
            if parts and parts[0].isdigit():
                out[name] = int(parts[0]) * (1024 if parts[1:] == ["kB"] else 1)
    return out


@dataclass(frozen=True)
class Hugepages:
    """The 2 MiB hugepage pool; `default` when 2 MiB is the default size (/proc/sys/vm/nr_hugepages)."""

    total: int
    free: int
    default: bool

    def pool_file(self) -> str:
        return "/proc/sys/vm/nr_hugepages" if self.default else f"{HUGE_SYSFS}/nr_hugepages"


def hugepages_2mb(meminfo: Meminfo = read_meminfo) -> Hugepages:
    def count(name: str) -> int:
        try:
            with open(f"{HUGE_SYSFS}/{name}", encoding="utf-8") as f:
                return int(f.read())
        except (OSError, ValueError):
            return 0

    return Hugepages(count("nr_hugepages"), count("free_hugepages"), meminfo().get("Hugepagesize") == 2 * MIB)


def system_ram_top(iomem: str) -> int | None:
    """One past the highest "System RAM" address of /proc/iomem's text; None when it shows only
    zeros (what it shows users other than root)."""
    top = 0
    for line in iomem.splitlines():
        span, _, name = line.partition(" : ")
        if name.strip() == "System RAM" and not line.startswith(" "):
            try:
                top = max(top, int(span.split("-")[1], 16) + 1)
            except (IndexError, ValueError):
                continue
    return top if top > 1 else None


def capacity_bits(meminfo: Meminfo = read_meminfo, iomem_path: str = "/proc/iomem") -> tuple[int, str]:
    """Address bits covering the machine's physical memory, and where the figure came from."""
    try:
        with open(iomem_path, encoding="utf-8") as f:
            top = system_ram_top(f.read())
    except OSError:
        top = None
    if top:
        return (top - 1).bit_length(), f"top of System RAM in {iomem_path} (0x{top:x}), rounded up to a power of two"
    total = meminfo().get("MemTotal", 0)
    return max(total - 1, 1).bit_length(), "MemTotal in /proc/meminfo, rounded up to a power of two"


def vm_note() -> str | None:
    """A sentence for the probe's output in a virtual machine; None on bare metal."""
    from memtint.linux.hypervisor import detect_hypervisor

    evidence = detect_hypervisor()
    if evidence is None:
        return None
    return (f"running in a virtual machine ({evidence}): the frames are guest-physical, so the mapping found is "
            "the one seen through the hypervisor's translation; the host's own address mapping and other guests' "
            "traffic are hidden from the probe")


def check_host(buffer_mb: int, hugepages: bool, meminfo: Meminfo = read_meminfo, option: str = "--buffer-mb") -> str:
    """Refuse, with the remedy, what would make the probe fail or mislead; the program's path."""
    if platform.system() != "Linux" or platform.machine() not in ("x86_64", "AMD64"):
        raise LinuxError(f"memtint probe runs on Linux on x86-64 (clflush, rdtscp, /proc/self/pagemap); "
                         f"this machine is {platform.system()} on {platform.machine()}")
    if os.geteuid() != 0:
        raise PrivilegeError("timing loads to physical addresses needs them from /proc/self/pagemap, which only root reads: run the command as root")
    if buffer_mb < 1:
        raise LinuxError(f"--buffer-mb must be at least 1, got {buffer_mb}")
    if hugepages:
        needed = -(-buffer_mb // HUGE_PAGE_MB)
        pool = hugepages_2mb(meminfo)
        if pool.free < needed:
            raise LinuxError(
                f"a {buffer_mb} MiB buffer of 2 MiB hugepages needs {needed} free hugepages, {pool.free} are free: "
                f"as root, echo {pool.total - pool.free + needed} > {pool.pool_file()}"
                # a smaller buffer fits only what is free (with none free, it was no remedy)
                + (f" (or {option} {pool.free * HUGE_PAGE_MB} or less)" if pool.free else ""))
    else:
        available = meminfo().get("MemAvailable", 0)
        if buffer_mb * MIB > available:
            suggestion = 1 << max((available // 2 // MIB).bit_length() - 1, 0)
            raise LinuxError(
                f"a {buffer_mb} MiB buffer is more than the memory available ({available // MIB} MiB, MemAvailable "
                f"in /proc/meminfo): choose a smaller {option}, e.g. {suggestion}")
    return probe_path()


def _bound_to(bind: tuple[Any, int] | None):
    """The probe child's set-up between fork and exec: its memory policy bound to one node, so
    the buffer it allocates is that node's; `bind` is (NumaSystem, node), already checked by the
    caller."""
    if bind is None:
        return None
    from memtint.linux.numa import MPOL_BIND, policy_in_child

    system, node = bind
    return policy_in_child(system, MPOL_BIND, [node])


class LinuxTimer:
    """The `Timer` of this machine: a `memtint-dram-probe` child holding a `buffer_mb` buffer.
    `repetitions` timed passes over each measurement's rounds follow `warmup` untimed ones."""

    name = "linux"

    def __init__(self, buffer_mb: int = 256, hugepages: bool = False, repetitions: int = REPETITIONS,
                 warmup: int = WARMUP, meminfo: Meminfo = read_meminfo, option: str = "--buffer-mb",
                 bind: tuple[Any, int] | None = None):
        if not 1 <= repetitions <= MAX_REPETITIONS:
            raise LinuxError(f"repetitions must be from 1 to {MAX_REPETITIONS}, got {repetitions}")
        if not 0 <= warmup <= MAX_WARMUP:
            raise LinuxError(f"warmup must be from 0 to {MAX_WARMUP}, got {warmup}")
        path = check_host(buffer_mb, hugepages, meminfo, option)
        self.buffer_mb = buffer_mb
        self.hugepages = hugepages
        self.repetitions = repetitions
        self.warmup = warmup
        self.measurements = 0
        self.samples_per_request = SAMPLES_PER_REQUEST
        self.capacity_bits, self.capacity_source = capacity_bits(meminfo)
        self._space: AddressSpace | None = None
        self._stderr = tempfile.TemporaryFile()
        args = [path, str(buffer_mb)] + (["--hugepages"] if hugepages else [])
        try:
            self._proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr,
                                          preexec_fn=_bound_to(bind))
        except OSError as error:
            self._stderr.close()
            raise LinuxError(f"cannot start the DRAM probe {path}: {error.strerror} (run make build)") from None
        self._finalizer = weakref.finalize(self, _end, self._proc, self._stderr)
        stopping.register(self._proc)
        try:
            self._read_startup()
        except BaseException:
            self.close()
            raise
        top = (max(self.frames) + 1) << PAGE_BITS
        self.capacity_bits = max(self.capacity_bits, (top - 1).bit_length())

    @property
    def pid(self) -> int:
        return self._proc.pid

    def _read_startup(self) -> None:
        self.tsc_hz = 0.0
        self.frames: list[int] = []
        while True:
            line = self._line("starting")
            key, _, value = line.partition(" ")
            if key == "tsc_hz":
                self.tsc_hz = float(value)
            elif key == "page_bytes":
                self.page_bytes = int(value)
            elif key == "overhead":
                self.overhead_ticks = int(value)
            elif key == "frames":
                pages, runs = map(int, value.split())
                for _ in range(runs):
                    first, count = self._line("listing its frames").split()
                    start = int(first, 16)
                    self.frames.extend(range(start, start + int(count)))
                if len(self.frames) != pages:
                    raise LinuxError(f"memtint-dram-probe listed {len(self.frames)} frames, announced {pages}")
            elif key == "ready":
                break
            else:
                raise LinuxError(f"memtint-dram-probe: unexpected output while starting: '{line[:80]}'")
        if self.tsc_hz <= 0 or not self.frames:
            raise LinuxError("memtint-dram-probe started without a clock rate or frames")
        self.overhead_ns = self.overhead_ticks * 1e9 / self.tsc_hz

    def _line(self, doing: str) -> str:
        raw = self._proc.stdout.readline()
        if not raw:
            raise self._died(doing)
        return raw.decode().rstrip("\n")

    def _died(self, doing: str) -> LinuxError:
        code = self._proc.wait()
        self._stderr.seek(0)
        why = self._stderr.read().decode(errors="replace").strip().removeprefix("memtint-dram-probe: ")
        return LinuxError(f"memtint-dram-probe exited ({'signal ' + str(-code) if code < 0 else 'status ' + str(code)}) "
                          f"while {doing}" + (f": {why}" if why else ""))

    def space(self) -> AddressSpace:
        if self._space is None:
            self._space = AddressSpace(self.capacity_bits, self.frames)
        return self._space

    def time(self, batch: Sequence[Measurement]) -> list[list[float]]:
        if self._proc.poll() is not None or not self._finalizer.alive:
            raise self._died("waiting for a batch") if self._finalizer.alive else LinuxError("the timer is closed")
        out: list[list[float]] = []
        start = 0
        while start < len(batch):
            end, samples = start, 0
            while end < len(batch) and (end == start or samples + self._samples(batch[end]) <= self.samples_per_request):
                samples += self._samples(batch[end])
                end += 1
            out.extend(self._request(batch[start:end]))
            start = end
        self.measurements += len(batch)
        return out

    def _samples(self, m: Measurement) -> int:
        return self.repetitions * len(m.rounds)

    def _request(self, batch: Sequence[Measurement]) -> list[list[float]]:
        lines = [f"batch {len(batch)} {self.repetitions} {self.warmup}"]
        for m in batch:
            if not m.rounds or not all(m.rounds):
                raise ValueError(f"a measurement needs rounds of at least one address each, got {m.rounds}")
            lines.append(";".join(" ".join(format(a, "x") for a in r) for r in m.rounds))
        try:
            self._proc.stdin.write(("\n".join(lines) + "\n").encode())
            self._proc.stdin.flush()
        except BrokenPipeError:
            raise self._died("receiving a batch") from None
        per_tick = 1e9 / self.tsc_hz
        out: list[list[float]] = []
        for m in batch:
            line = self._line("timing a batch")
            if line.startswith("error "):
                raise LinuxError(f"memtint-dram-probe refused the batch: {line[6:]}")
            if not line.startswith("t"):
                raise LinuxError(f"memtint-dram-probe: unexpected output '{line[:80]}'")
            times = [int(t) * per_tick for t in line[1:].split()]
            if len(times) != self._samples(m):
                raise LinuxError(f"memtint-dram-probe returned {len(times)} times for a measurement of "
                                 f"{len(m.rounds)} rounds x {self.repetitions} repetitions")
            out.append(times)
        line = self._line("ending a batch")
        if line.startswith("error "):
            raise LinuxError(f"memtint-dram-probe: {line[6:]}")
        if line != "ok":
            raise LinuxError(f"memtint-dram-probe: unexpected output '{line[:80]}'")
        return out

    def close(self) -> None:
        """Kill the program (its buffer is freed with it); safe to call twice."""
        stopping.unregister(self._proc)
        self._finalizer()

    def __enter__(self) -> "LinuxTimer":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _end(proc: subprocess.Popen, stderr) -> None:
    if proc.poll() is None:
        proc.kill()
    proc.wait()
    for stream in (proc.stdin, proc.stdout, stderr):
        try:
            stream.close()
        except (OSError, ValueError):
            pass
