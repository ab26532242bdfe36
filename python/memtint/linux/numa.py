"""The kernel's NUMA interface as memtint uses it (issue 30, "Real Linux"): memory nodes, memory
policies, page moves and the sysfs/procfs files that tune them, behind one class so the same
tiering code runs on the real kernel (`LinuxNuma`) and on a fake with the kernel's documented
semantics (`memtint.linux.numa_fake.FakeNuma`, for multi-node tests on one-node hosts).

What each piece follows:
- set_mempolicy(2), mbind(2), get_mempolicy(2), move_pages(2) (man-pages) and
  Documentation/admin-guide/mm/numa_memory_policy.rst: modes MPOL_DEFAULT..MPOL_WEIGHTED_INTERLEAVE
  (6, kernel 6.9+), nodemasks of unsigned longs, EINVAL when no node of the mask has memory,
  move_pages' per-page status (a node, or -ENOENT/-EACCES/-EBUSY/-EFAULT...) and ENODEV for a
  target node without memory.
- Documentation/ABI/testing/sysfs-kernel-mm-mempolicy-weighted-interleave: weights 1-255 in
  /sys/kernel/mm/mempolicy/weighted_interleave/nodeN, the `auto` file (6.16+). Some 6.18 builds
  name that file `__auto_type` (the kernel's `#define auto __auto_type` reached the attribute
  name); both names are accepted, `auto` first.
- Documentation/admin-guide/sysctl/kernel.rst: /proc/sys/kernel/numa_balancing (0, 1, 2 tiering).
- Documentation/admin-guide/mm/damon/usage.rst: /sys/kernel/mm/damon/admin/kdamonds, schemes with
  actions migrate_hot/migrate_cold and target_nid (6.11+, paddr operations only).
- Documentation/admin-guide/mm/numaperf.rst: HMAT/CDAT figures in
  /sys/devices/system/node/nodeN/access0/initiators/{read,write}_bandwidth (MB/s).

Every sysfs and procfs path is under `root` ("/" for the real system), so tests can point the
same code at a temporary directory.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
from typing import Callable, Iterable, Sequence, TypeVar

from memtint.linux.errors import LinuxError

T = TypeVar("T")

MPOL_DEFAULT, MPOL_PREFERRED, MPOL_BIND, MPOL_INTERLEAVE, MPOL_LOCAL, MPOL_PREFERRED_MANY = range(6)
MPOL_WEIGHTED_INTERLEAVE = 6
MODE_NAMES = {MPOL_DEFAULT: "default", MPOL_PREFERRED: "preferred", MPOL_BIND: "bind",
              MPOL_INTERLEAVE: "interleave", MPOL_LOCAL: "local", MPOL_PREFERRED_MANY: "preferred-many",
              MPOL_WEIGHTED_INTERLEAVE: "weighted-interleave"}
MPOL_F_NODE, MPOL_F_ADDR = 1, 2
MPOL_MF_STRICT, MPOL_MF_MOVE, MPOL_MF_MOVE_ALL = 1, 2, 4
# The first kernel with MPOL_WEIGHTED_INTERLEAVE (6.9, March 2024).
WEIGHTED_INTERLEAVE_KERNEL = (6, 9)
WEIGHT_MIN, WEIGHT_MAX = 1, 255
MAX_NODES = 1024
PAGE_BYTES = os.sysconf("SC_PAGE_SIZE")

NODE_DIR = "sys/devices/system/node"
WEIGHTS_DIR = "sys/kernel/mm/mempolicy/weighted_interleave"
AUTO_NAMES = ("auto", "__auto_type")
NUMA_BALANCING = "proc/sys/kernel/numa_balancing"
DAMON_DIR = "sys/kernel/mm/damon/admin/kdamonds"
TIERS_DIR = "sys/devices/virtual/memory_tiering"

# System call numbers (include/uapi/asm-generic/unistd.h for arm64, arch/x86/entry/syscalls).
SYSCALLS = {
    "x86_64": {"mbind": 237, "set_mempolicy": 238, "get_mempolicy": 239, "move_pages": 279},
    "aarch64": {"mbind": 235, "get_mempolicy": 236, "set_mempolicy": 237, "move_pages": 239},
}


class NumaError(LinuxError):
    """A NUMA system call failed: `errno` is its error, the message names the call and its values."""

    def __init__(self, message: str, err: int = 0) -> None:
        super().__init__(message)
        self.errno = err


def call_error(call: str, err: int, detail: str) -> NumaError:
    return NumaError(f"{call}({detail}) failed: {errno.errorcode.get(err, err)} ({os.strerror(err)})", err)


#: Above any node or CPU number a kernel can have (MAX_NUMNODES is at most 1024, NR_CPUS at most
#: 8192): a list naming one is not a kernel's, and its range is not expanded.
KERNEL_LIST_LIMIT = 1 << 16


def parse_node_list(text: str) -> list[int]:
    """A kernel list ("0-1,3", or empty) as numbers; ``ValueError`` for what a kernel never
    writes (a descending range, a number above :data:`KERNEL_LIST_LIMIT`)."""
    nodes: list[int] = []
    for part in text.strip().split(","):
        if not part:
            continue
        first, dash, last = part.partition("-")
        lo, hi = int(first), int(last) if dash else int(first)
        if not 0 <= lo <= hi < KERNEL_LIST_LIMIT:
            raise ValueError(part)
        nodes.extend(range(lo, hi + 1))
    return nodes


def parse_some_nodes(text: str) -> list[int]:
    """A node list that names at least one node (every machine has one with memory)."""
    nodes = parse_node_list(text)
    if not nodes:
        raise ValueError("no node")
    return nodes


def parse_switch(text: str) -> bool:
    """A sysfs boolean as the kernel shows it (it reads more words, but shows only these)."""
    if text in ("true", "false"):
        return text == "true"
    raise ValueError(text)


def parse_balancing(text: str) -> str:
    if not text.isdigit():
        raise ValueError(text)
    return text


def parse_meminfo(text: str) -> dict[str, int]:
    """A node's meminfo ("Node 0 MemTotal:   16384 kB" per line) as bytes by field."""
    fields = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 4 and parts[-1] == "kB":
            fields[parts[2].rstrip(":")] = int(parts[3]) * 1024
    return fields


NODE_LIST = "a node list such as 0-1,3"
MEMINFO = "lines like 'Node 0 MemTotal: 16384 kB'"


def node_text(nodes: Iterable[int]) -> str:
    return ",".join(f"node{n}" for n in nodes)


class NumaSystem:
    """Nodes, memory policies, page moves and their tunables; subclasses supply the system calls."""

    def __init__(self, root: str = "/") -> None:
        self.root = root

    # ---- files -------------------------------------------------------------------------------

    def path(self, relative: str) -> str:
        return os.path.join(self.root, relative)

    def read(self, relative: str) -> str | None:
        try:
            with open(self.path(relative), encoding="utf-8", errors="replace") as f:
                return f.read().strip()
        except (FileNotFoundError, NotADirectoryError):
            return None

    def read_value(self, relative: str, parse: Callable[[str], T], expected: str) -> T | None:
        """A kernel file's value through `parse`, or None when the file is absent. A value `parse`
        refuses is an error naming the file: an ABI we do not understand, never a traceback."""
        text = self.read(relative)
        if text is None:
            return None
        try:
            return parse(text)
        except (ValueError, IndexError):
            shown = (text if len(text) <= 60 else text[:57] + "...").encode("ascii", "backslashreplace").decode()
            raise NumaError(f"{self.path(relative)}: expected {expected}, got '{shown}'", errno.EINVAL) from None

    def write(self, relative: str, value: str) -> None:
        """Write a tunable; the kernel's refusal is an error naming the file and the value."""
        try:
            with open(self.path(relative), "w", encoding="utf-8") as f:
                f.write(value)
        except OSError as error:
            raise NumaError(f"cannot write '{value}' to {self.path(relative)}: {error.strerror or error}",
                            error.errno or 0) from None

    # ---- the machine -------------------------------------------------------------------------

    def memory_nodes(self) -> list[int]:
        """Nodes with memory (N_MEMORY), in order."""
        nodes = self.read_value(f"{NODE_DIR}/has_memory", parse_some_nodes, NODE_LIST)
        if nodes is not None:
            return nodes
        try:
            entries = os.listdir(self.path(NODE_DIR))
            return sorted(int(d[4:]) for d in entries if d.startswith("node") and d[4:].isdigit())
        except FileNotFoundError:
            return [0]  # a kernel without NUMA: one node

    def node_memory_bytes(self, node: int) -> int | None:
        return (self.read_value(f"{NODE_DIR}/node{node}/meminfo", parse_meminfo, MEMINFO) or {}).get("MemTotal")

    def node_free_bytes(self, node: int) -> int | None:
        """What a program can take on ``node`` without reclaim beyond the page cache: its
        MemFree plus its inactive file pages (the part of MemAvailable a node's meminfo gives)."""
        fields = self.read_value(f"{NODE_DIR}/node{node}/meminfo", parse_meminfo, MEMINFO) or {}
        if "MemFree" not in fields:
            return None
        return fields["MemFree"] + fields.get("Inactive(file)", 0)

    def node_cpus(self, node: int) -> list[int]:
        return self.read_value(f"{NODE_DIR}/node{node}/cpulist", parse_node_list, "a CPU list such as 0-3,8") or []

    def cpu_node(self, cpu: int) -> int:
        """The node whose cpulist holds `cpu` (the first memory node when none says so)."""
        for node in self.memory_nodes():
            if cpu in self.node_cpus(node):
                return node
        return self.memory_nodes()[0]

    def hmat_bandwidths(self) -> dict[int, float] | None:
        """Each memory node's read bandwidth from its nearest initiator in GB/s (numaperf.rst:
        access0/initiators/read_bandwidth, MB/s), or None when a node has no such figure."""
        found: dict[int, float] = {}
        for node in self.memory_nodes():
            mbs = self.read_value(f"{NODE_DIR}/node{node}/access0/initiators/read_bandwidth", int,
                                  "a bandwidth in MB/s")
            if mbs is None:
                return None
            found[node] = mbs / 1000.0
        return found

    def memory_tiers(self) -> list[list[int]]:
        """The kernel's memory tiers (memory_tiering/memory_tierN/nodelist), fastest first: nodes
        of one tier are of one kind, the thesis's "memory cluster"."""
        try:
            names = sorted((int(d[len("memory_tier"):]), d) for d in os.listdir(self.path(TIERS_DIR))
                           if d.startswith("memory_tier"))
        except FileNotFoundError:
            return []
        return [self.read_value(f"{TIERS_DIR}/{d}/nodelist", parse_node_list, NODE_LIST) or [] for _, d in names]

    def kernel_version(self) -> tuple[int, int]:
        release = platform.release()
        parts = release.split(".")
        try:
            return int(parts[0]), int("".join(c for c in parts[1] if c.isdigit()) or 0)
        except (IndexError, ValueError):
            return (0, 0)

    def is_root(self) -> bool:
        return os.geteuid() == 0

    # ---- weighted interleave (sysfs) --------------------------------------------------------

    def has_weighted_interleave(self) -> bool:
        return self.kernel_version() >= WEIGHTED_INTERLEAVE_KERNEL and os.path.isdir(self.path(WEIGHTS_DIR))

    def auto_file(self) -> str | None:
        """The weighted-interleave auto-mode file's path relative to root, under either name."""
        for name in AUTO_NAMES:
            if os.path.exists(self.path(f"{WEIGHTS_DIR}/{name}")):
                return f"{WEIGHTS_DIR}/{name}"
        return None

    def interleave_weights(self) -> dict[int, int]:
        weights = {}
        for node in self.memory_nodes():
            weight = self.read_value(f"{WEIGHTS_DIR}/node{node}", int, "an interleave weight 1-255")
            if weight is not None:
                weights[node] = weight
        return weights

    def set_interleave_weight(self, node: int, weight: int) -> None:
        self.write(f"{WEIGHTS_DIR}/node{node}", str(weight))

    def auto_weights(self) -> bool | None:
        relative = self.auto_file()
        if relative is None:
            return None
        return self.read_value(relative, parse_switch, "true or false")

    def set_auto_weights(self, on: bool) -> None:
        relative = self.auto_file()
        if relative is None:
            raise LinuxError(f"{self.path(WEIGHTS_DIR)} has no auto file (kernel before 6.16)")
        self.write(relative, "true" if on else "false")

    # ---- numa_balancing (procfs) --------------------------------------------------------------

    def numa_balancing(self) -> str | None:
        """The mode as the kernel shows it (0 off, 1 normal, 2 memory tiering, 3 both), kept as text
        so that restoring it writes back exactly what was there."""
        return self.read_value(NUMA_BALANCING, parse_balancing, "a mode 0-3")

    def set_numa_balancing(self, value: str) -> None:
        self.write(NUMA_BALANCING, value)

    # ---- system calls (subclasses) ------------------------------------------------------------

    def set_mempolicy(self, mode: int, nodes: Sequence[int] = ()) -> None:
        raise NotImplementedError

    def get_mempolicy(self, address: int | None = None) -> int:
        raise NotImplementedError

    def mbind(self, address: int, length: int, mode: int, nodes: Sequence[int], flags: int = 0) -> None:
        raise NotImplementedError

    def move_pages(self, pid: int, pages: Sequence[int], nodes: Sequence[int] | None = None,
                   flags: int = MPOL_MF_MOVE) -> list[int]:
        """Each page's node after the call (or the query, `nodes` None), or -errno for that page."""
        raise NotImplementedError


def _nodemask(nodes: Iterable[int]):
    mask = (ctypes.c_ulong * (MAX_NODES // 64))()
    for n in nodes:
        if not 0 <= n < MAX_NODES:
            raise NumaError(f"node {n} is outside 0-{MAX_NODES - 1}", errno.EINVAL)
        mask[n // 64] |= 1 << (n % 64)
    return mask


class LinuxNuma(NumaSystem):
    """The running kernel, through libc's syscall() (no libnuma needed)."""

    def __init__(self, root: str = "/") -> None:
        super().__init__(root)
        machine = platform.machine()
        if machine not in SYSCALLS:
            raise LinuxError(f"NUMA system calls are not known for {machine} (known: {', '.join(SYSCALLS)})")
        self.numbers = SYSCALLS[machine]
        self.libc = ctypes.CDLL(None, use_errno=True)
        self.libc.syscall.restype = ctypes.c_long

    def _call(self, name: str, detail: str, *args) -> int:
        result = self.libc.syscall(ctypes.c_long(self.numbers[name]), *args)
        if result < 0:
            raise call_error(name, ctypes.get_errno(), detail)
        return result

    def set_mempolicy(self, mode: int, nodes: Sequence[int] = ()) -> None:
        mask = _nodemask(nodes)
        self._call("set_mempolicy", f"{MODE_NAMES.get(mode, mode)}, {{{node_text(nodes)}}}",
                   ctypes.c_int(mode), mask if nodes else None, ctypes.c_ulong(MAX_NODES + 1 if nodes else 0))

    def get_mempolicy(self, address: int | None = None) -> int:
        mode = ctypes.c_int()
        flags = MPOL_F_ADDR if address is not None else 0
        self._call("get_mempolicy", f"addr={address:#x}" if address is not None else "",
                   ctypes.byref(mode), None, ctypes.c_ulong(0), ctypes.c_void_p(address or 0), ctypes.c_ulong(flags))
        return mode.value

    def mbind(self, address: int, length: int, mode: int, nodes: Sequence[int], flags: int = 0) -> None:
        mask = _nodemask(nodes)
        self._call("mbind", f"{address:#x}, {length}, {MODE_NAMES.get(mode, mode)}, {{{node_text(nodes)}}}",
                   ctypes.c_void_p(address), ctypes.c_ulong(length), ctypes.c_int(mode),
                   mask if nodes else None, ctypes.c_ulong(MAX_NODES + 1 if nodes else 0), ctypes.c_uint(flags))

    def move_pages(self, pid: int, pages: Sequence[int], nodes: Sequence[int] | None = None,
                   flags: int = MPOL_MF_MOVE) -> list[int]:
        count = len(pages)
        if count == 0:
            return []
        addresses = (ctypes.c_void_p * count)(*pages)
        status = (ctypes.c_int * count)()
        targets = (ctypes.c_int * count)(*nodes) if nodes is not None else None
        self._call("move_pages", f"pid {pid}, {count} pages" + ("" if nodes is None else f" to {sorted(set(nodes))}"),
                   ctypes.c_int(pid), ctypes.c_ulong(count), addresses, targets, status, ctypes.c_int(flags))
        return list(status)


FAKE_ENV = "MEMTINT_NUMA_FAKE"


def numa_system() -> NumaSystem:
    """The real kernel, or the fake whose directory MEMTINT_NUMA_FAKE names (tests)."""
    fake = os.environ.get(FAKE_ENV)
    if fake:
        from memtint.linux.numa_fake import FakeNuma

        return FakeNuma.load(fake)
    return LinuxNuma()


def check_policy(system: NumaSystem, mode: int, nodes: Sequence[int]) -> int:
    """set_mempolicy then get_mempolicy in a throwaway thread (a policy belongs to one thread, so
    memtint's own stays as it was): the mode the kernel reports, or the call's error, before a
    child tries the same between fork and exec (`policy_in_child`), where an error could only
    say 'preexec_fn failed'."""
    import threading

    result: dict[str, object] = {}

    def probe() -> None:
        try:
            system.set_mempolicy(mode, [] if mode == MPOL_LOCAL else list(nodes))
            result["mode"] = system.get_mempolicy()
        except LinuxError as error:
            result["error"] = error

    thread = threading.Thread(target=probe, name="memtint-mempolicy-check")
    thread.start()
    thread.join()
    if "error" in result:
        raise result["error"]  # type: ignore[misc]
    return result["mode"]  # type: ignore[return-value]


def policy_in_child(system: NumaSystem, mode: int | None, nodes: Sequence[int],
                    cpus: Iterable[int] | None = None) -> Callable[[], None] | None:
    """A child's set-up between fork and exec (`preexec_fn`): its CPUs and its memory policy,
    both inherited across execve, so what it allocates follows the policy from its first page.
    None when there is nothing to set. Check the policy first with `check_policy`."""
    chosen = set(cpus) if cpus else None
    if mode is None and not chosen:
        return None
    nodes = [] if mode == MPOL_LOCAL else list(nodes)

    def in_child() -> None:
        if chosen:
            os.sched_setaffinity(0, chosen)
        if mode is not None:
            system.set_mempolicy(mode, nodes)

    return in_child


__all__ = ["FAKE_ENV", "LinuxNuma", "MPOL_BIND", "MPOL_DEFAULT", "MPOL_INTERLEAVE", "MPOL_LOCAL", "MPOL_MF_MOVE",
           "MPOL_MF_MOVE_ALL", "MPOL_PREFERRED", "MPOL_WEIGHTED_INTERLEAVE", "NumaError", "NumaSystem", "check_policy",
           "numa_system", "parse_node_list", "policy_in_child"]


def kernel_nodes_text(nodes: Iterable[int]) -> str:
    nodes = list(nodes)
    return f"{len(nodes)} node{'s' if len(nodes) != 1 else ''} ({', '.join(f'node{n}' for n in nodes)})"
