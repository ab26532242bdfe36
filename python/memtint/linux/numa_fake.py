"""A NUMA kernel in a directory, for tests of the multi-node logic on a one-node host: the same
`NumaSystem` interface as `LinuxNuma`, with the kernel's documented semantics.

- Files: the directory is the fake's root; it holds sys/devices/system/node (has_memory, nodeN/
  meminfo, cpulist, access0 bandwidths when given), sys/kernel/mm/mempolicy/weighted_interleave,
  proc/sys/kernel/numa_balancing and sys/kernel/mm/damon/admin/kdamonds. Writes behave as the
  kernel's: a weight outside 1-255 fails with EINVAL and a valid one switches auto mode off
  (ABI sysfs-kernel-mm-mempolicy-weighted-interleave); writing a true value to `auto` recomputes
  every weight from the nodes' bandwidths as mm/mempolicy.c does; writing nr_kdamonds,
  nr_contexts, nr_targets, nr_schemes creates directories 0..N-1 (DAMON usage.rst). Without
  root every write fails with EACCES.
- System calls act on address spaces kept in memory (`space(pid)`, `map`, `touch`):
  interleave and weighted interleave pick the node from the page's interleave index (its page
  offset in the anonymous mapping, i.e. address >> 12: numa_memory_policy.rst and
  mm/mempolicy.c weighted_interleave_nid), nodes in ascending order, each taking its weight of
  consecutive indices; EINVAL for a mode it does not know or a mask with no node with memory;
  move_pages gives each page its node or -ENOENT (not present), -EFAULT (not mapped), -EACCES
  (mapped by several processes, without MPOL_MF_MOVE_ALL), -EBUSY (pinned), processes pages in
  order and fails with ENODEV at the first target without memory, EPERM for MPOL_MF_MOVE_ALL
  without root (move_pages(2)). A process the fake was not told about has each page it is asked
  about present on the node of its CPU (first touch under the default policy).
- Every system call is appended to syscalls.jsonl, from any process (a child's set_mempolicy
  before exec included), so tests can check which calls a command made.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
from dataclasses import dataclass, field
from typing import Any, Sequence

from memtint.linux.numa import (AUTO_NAMES, DAMON_DIR, MODE_NAMES, MPOL_BIND, MPOL_DEFAULT,
                                MPOL_INTERLEAVE, MPOL_LOCAL, MPOL_MF_MOVE, MPOL_MF_MOVE_ALL, MPOL_MF_STRICT,
                                MPOL_PREFERRED, MPOL_PREFERRED_MANY, MPOL_WEIGHTED_INTERLEAVE, NODE_DIR,
                                NUMA_BALANCING, PAGE_BYTES, TIERS_DIR, WEIGHTS_DIR, NumaError, NumaSystem,
                                call_error)
from memtint.linux.tiering import kernel_auto_weights

CONFIG = "fake.json"
LOG = "syscalls.jsonl"
# What writing nr_<kind> creates in each new directory: files (with contents) and subdirectories.
DAMON_TREES: dict[str, dict[str, Any]] = {
    "kdamonds": {"state": "off", "pid": "-1", "contexts/nr_contexts": "0"},
    "contexts": {"avail_operations": "vaddr\nfvaddr\npaddr", "operations": "vaddr",
                 "monitoring_attrs/intervals/sample_us": "5000", "monitoring_attrs/intervals/aggr_us": "100000",
                 "monitoring_attrs/intervals/update_us": "1000000", "monitoring_attrs/nr_regions/min": "10",
                 "monitoring_attrs/nr_regions/max": "1000", "targets/nr_targets": "0", "schemes/nr_schemes": "0"},
    "targets": {"pid_target": "0", "regions/nr_regions": "0"},
    "regions": {"start": "0", "end": "0"},
    "schemes": {"action": "stat", "target_nid": "-1", "apply_interval_us": "0",
                **{f"access_pattern/{k}/{m}": "0" for k in ("sz", "nr_accesses", "age") for m in ("min", "max")},
                "quotas/ms": "0", "quotas/bytes": "0", "quotas/reset_interval_ms": "0",
                "watermarks/metric": "none", "watermarks/interval_us": "0", "watermarks/high": "0",
                "watermarks/mid": "0", "watermarks/low": "0"},
}
DAMON_ACTIONS = ("willneed", "cold", "pageout", "hugepage", "nohugepage", "lru_prio", "lru_deprio",
                 "migrate_hot", "migrate_cold", "stat")


@dataclass
class Vma:
    start: int
    end: int
    policy: tuple[int, tuple[int, ...]] | None = None


@dataclass
class AddressSpace:
    """One fake process: mappings with their policies, the task policy, and its pages' nodes."""

    cpu_node: int
    vmas: list[Vma] = field(default_factory=list)
    task_policy: tuple[int, tuple[int, ...]] = (MPOL_DEFAULT, ())
    pages: dict[int, int] = field(default_factory=dict)
    shared: set[int] = field(default_factory=set)
    busy: set[int] = field(default_factory=set)
    known: bool = True

    def vma_at(self, address: int) -> Vma | None:
        for v in self.vmas:
            if v.start <= address < v.end:
                return v
        return None


class FakeNuma(NumaSystem):
    """The fake kernel whose files live under `root` (see the module's description)."""

    def __init__(self, root: str, config: dict[str, Any]) -> None:
        super().__init__(root)
        self.config = config
        self.spaces: dict[int, AddressSpace] = {}

    # ---- making one -------------------------------------------------------------------------

    @classmethod
    def create(cls, root: str, nodes: dict[int, dict[str, Any]] | None = None, *, kernel: tuple[int, int] = (6, 18),
               as_root: bool = True, auto_name: str | None = "auto", weighted_interleave: bool = True,
               damon: bool = True, hmat: bool = False, numa_balancing: str = "1",
               tiers: list[list[int]] | None = None) -> "FakeNuma":
        """A fake machine: `nodes` maps a node to {"gbs": bandwidth, "cpus": [...], "bytes": size}
        (default two nodes, 20 and 10 GB/s, CPUs on node 0)."""
        nodes = nodes or {0: {"gbs": 20.0, "cpus": [0, 1]}, 1: {"gbs": 10.0, "cpus": []}}
        config = {"kernel": list(kernel), "root": as_root, "nodes": {str(n): v for n, v in nodes.items()}}
        os.makedirs(root, exist_ok=True)
        fake = cls(root, config)
        with open(os.path.join(root, CONFIG), "w", encoding="utf-8") as f:
            json.dump(config, f)
        node_list = ",".join(map(str, sorted(nodes)))
        fake._put(f"{NODE_DIR}/has_memory", node_list)
        fake._put(f"{NODE_DIR}/online", node_list)
        for n, v in nodes.items():
            fake._put(f"{NODE_DIR}/node{n}/meminfo", f"Node {n} MemTotal:       {v.get('bytes', 16 << 30) // 1024} kB")
            fake._put(f"{NODE_DIR}/node{n}/cpulist", ",".join(map(str, v.get("cpus", []))))
            if hmat:
                fake._put(f"{NODE_DIR}/node{n}/access0/initiators/read_bandwidth", str(int(v["gbs"] * 1000)))
        if weighted_interleave:
            weights = fake._auto_table() if auto_name else {n: 1 for n in nodes}
            for n, w in weights.items():
                fake._put(f"{WEIGHTS_DIR}/node{n}", str(w))
            if auto_name:
                fake._put(f"{WEIGHTS_DIR}/{auto_name}", "true")
        fake._put(NUMA_BALANCING, numa_balancing)
        if damon:
            fake._put(f"{DAMON_DIR}/nr_kdamonds", "0")
        for i, members in enumerate(tiers or []):
            fake._put(f"{TIERS_DIR}/memory_tier{4 * (i + 1)}/nodelist", ",".join(map(str, members)))
        return fake

    @classmethod
    def load(cls, root: str) -> "FakeNuma":
        with open(os.path.join(root, CONFIG), encoding="utf-8") as f:
            return cls(root, json.load(f))

    def _put(self, relative: str, text: str) -> None:
        # A sysfs read sees a whole value, never a half-written one: write aside, then rename.
        path = self.path(relative)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        aside = f"{path}.{os.getpid()}.tmp"
        with open(aside, "w", encoding="utf-8") as f:
            f.write(text + "\n")
        os.replace(aside, path)

    def _bandwidth(self, node: int) -> float:
        return float(self.config["nodes"][str(node)].get("gbs", 0))

    def _auto_table(self) -> dict[int, int]:
        nodes = sorted(int(n) for n in self.config["nodes"])
        return dict(zip(nodes, kernel_auto_weights([self._bandwidth(n) for n in nodes])))

    # ---- the machine -------------------------------------------------------------------------

    def kernel_version(self) -> tuple[int, int]:
        return tuple(self.config["kernel"])  # type: ignore[return-value]

    def is_root(self) -> bool:
        return bool(self.config["root"])

    def log(self, call: str, **values: Any) -> None:
        with open(os.path.join(self.root, LOG), "a", encoding="utf-8") as f:
            f.write(json.dumps({"call": call, "pid": os.getpid(), **values}) + "\n")

    def calls(self) -> list[dict[str, Any]]:
        try:
            with open(os.path.join(self.root, LOG), encoding="utf-8") as f:
                # A line still being appended by another process has no newline yet.
                return [json.loads(line) for line in f if line.endswith("\n")]
        except FileNotFoundError:
            return []

    # ---- files, as the kernel treats writes -------------------------------------------------

    def write(self, relative: str, value: str) -> None:
        path = self.path(relative)
        if not self.is_root():
            raise NumaError(f"cannot write '{value}' to {path}: Permission denied", errno.EACCES)
        self.log("write", path=relative, value=value)
        directory, name = os.path.split(relative)
        if directory == WEIGHTS_DIR and name.startswith("node"):
            try:
                weight = int(value)
            except ValueError:
                weight = 0
            if not 1 <= weight <= 255:
                raise NumaError(f"cannot write '{value}' to {path}: Invalid argument", errno.EINVAL)
            self._put(relative, str(weight))
            auto = self.auto_file()
            if auto:
                self._put(auto, "false")
            return
        if directory == WEIGHTS_DIR and name in AUTO_NAMES:
            text = value.strip().lower()
            if text in ("1", "y", "yes", "true", "on"):
                for n, w in self._auto_table().items():
                    self._put(f"{WEIGHTS_DIR}/node{n}", str(w))
                self._put(relative, "true")
            elif text in ("0", "n", "no", "false", "off"):
                self._put(relative, "false")
            else:
                raise NumaError(f"cannot write '{value}' to {path}: Invalid argument", errno.EINVAL)
            return
        if relative == NUMA_BALANCING and value.strip() not in ("0", "1", "2", "3"):
            raise NumaError(f"cannot write '{value}' to {path}: Invalid argument", errno.EINVAL)
        if relative.startswith(DAMON_DIR):
            self._damon_write(relative, name, value.strip())
            return
        if not os.path.exists(path):
            raise NumaError(f"cannot write '{value}' to {path}: No such file or directory", errno.ENOENT)
        self._put(relative, value.strip())

    def _damon_write(self, relative: str, name: str, value: str) -> None:
        path = self.path(relative)
        if name.startswith("nr_"):
            kind = name[3:]
            base = os.path.dirname(path)
            if kind == "kdamonds" and any(self.read(f"{DAMON_DIR}/{d}/state") == "on" for d in self._numbered(base)):
                raise NumaError(f"cannot write '{value}' to {path}: Device or resource busy", errno.EBUSY)
            for d in self._numbered(base):
                shutil.rmtree(os.path.join(base, d))
            for i in range(int(value)):
                for file, text in DAMON_TREES[kind].items():
                    self._put(os.path.relpath(os.path.join(base, str(i), file), self.root), text)
        elif name == "state":
            if value not in ("on", "off", "commit", "update_schemes_stats"):
                raise NumaError(f"cannot write '{value}' to {path}: Invalid argument", errno.EINVAL)
            if value in ("on", "off"):
                self._put(os.path.relpath(os.path.join(os.path.dirname(path), "pid"), self.root),
                          "4242" if value == "on" else "-1")
                self._put(relative, value)
            return
        elif name == "action" and value not in DAMON_ACTIONS:
            raise NumaError(f"cannot write '{value}' to {path}: Invalid argument", errno.EINVAL)
        elif not os.path.exists(path):
            raise NumaError(f"cannot write '{value}' to {path}: No such file or directory", errno.ENOENT)
        self._put(relative, value)

    @staticmethod
    def _numbered(base: str) -> list[str]:
        return [d for d in os.listdir(base) if d.isdigit()] if os.path.isdir(base) else []

    # ---- address spaces ---------------------------------------------------------------------

    def space(self, pid: int = 0) -> AddressSpace:
        """Process `pid`'s address space (0: the calling process, as mbind and set_mempolicy act on)."""
        if pid not in self.spaces:
            first = self.memory_nodes()[0]
            self.spaces[pid] = AddressSpace(cpu_node=first, known=pid == 0)
        return self.spaces[pid]

    def map(self, pid: int, start: int, length: int) -> None:
        self.space(pid).vmas.append(Vma(start, start + length))
        self.space(pid).known = True

    def touch(self, pid: int, start: int, length: int) -> list[int]:
        """Fault in every absent page of [start, start+length) as the kernel would; their nodes."""
        s = self.space(pid)
        placed = []
        for address in range(start - start % PAGE_BYTES, start + length, PAGE_BYTES):
            vma = s.vma_at(address)
            if vma is None:
                raise NumaError(f"fake: touch of unmapped address {address:#x}", errno.EFAULT)
            if address not in s.pages:
                s.pages[address] = self._allocation_node(s, vma, address)
            placed.append(s.pages[address])
        return placed

    def _allocation_node(self, s: AddressSpace, vma: Vma, address: int) -> int:
        mode, nodes = vma.policy or s.task_policy
        index = address // PAGE_BYTES  # anonymous memory: vm_pgoff + offset in the VMA = address >> 12
        if mode == MPOL_INTERLEAVE:
            return nodes[index % len(nodes)]
        if mode == MPOL_WEIGHTED_INTERLEAVE:
            return self.weighted_interleave_node(index, nodes)
        if mode in (MPOL_BIND, MPOL_PREFERRED, MPOL_PREFERRED_MANY):
            return s.cpu_node if s.cpu_node in nodes else nodes[0]
        return s.cpu_node

    def weighted_interleave_node(self, index: int, nodes: Sequence[int]) -> int:
        """mm/mempolicy.c weighted_interleave_nid: index modulo the weights' sum, then walk the
        nodes in order, each taking its weight of positions."""
        weights = self.interleave_weights()
        table = [(n, weights.get(n, 1) or 1) for n in sorted(nodes)]
        target = index % sum(w for _, w in table)
        for n, w in table:
            if target < w:
                return n
            target -= w
        raise AssertionError("unreachable")

    # ---- system calls ------------------------------------------------------------------------

    def _check_policy(self, call: str, mode: int, nodes: Sequence[int], detail: str) -> tuple[int, ...]:
        if mode not in MODE_NAMES:
            raise call_error(call, errno.EINVAL, detail)
        if mode == MPOL_WEIGHTED_INTERLEAVE and self.kernel_version() < (6, 9):
            raise call_error(call, errno.EINVAL, detail)
        if mode in (MPOL_DEFAULT, MPOL_LOCAL):
            if nodes:
                raise call_error(call, errno.EINVAL, detail)
            return ()
        usable = tuple(n for n in sorted(set(nodes)) if n in self.memory_nodes())
        if not usable:  # set_mempolicy(2): none of the nodes is online with memory
            raise call_error(call, errno.EINVAL, detail)
        return usable

    def set_mempolicy(self, mode: int, nodes: Sequence[int] = ()) -> None:
        detail = f"{MODE_NAMES.get(mode, mode)}, {{{','.join(f'node{n}' for n in nodes)}}}"
        try:
            self.space(0).task_policy = (mode, self._check_policy("set_mempolicy", mode, nodes, detail))
        except NumaError as error:
            self.log("set_mempolicy", mode=mode, nodes=list(nodes), errno=error.errno)
            raise
        self.log("set_mempolicy", mode=mode, nodes=list(nodes), errno=0)

    def get_mempolicy(self, address: int | None = None) -> int:
        s = self.space(0)
        if address is None:
            return s.task_policy[0]
        vma = s.vma_at(address)
        if vma is None:
            raise call_error("get_mempolicy", errno.EFAULT, f"addr={address:#x}")
        # MPOL_F_ADDR reports the VMA's own policy; a VMA without one reports MPOL_DEFAULT
        return vma.policy[0] if vma.policy else MPOL_DEFAULT

    def mbind(self, address: int, length: int, mode: int, nodes: Sequence[int], flags: int = 0) -> None:
        detail = f"{address:#x}, {length}, {MODE_NAMES.get(mode, mode)}, {{{','.join(f'node{n}' for n in nodes)}}}"
        s = self.space(0)
        if address % PAGE_BYTES or flags & ~(MPOL_MF_STRICT | MPOL_MF_MOVE | MPOL_MF_MOVE_ALL):
            raise call_error("mbind", errno.EINVAL, detail)
        usable = self._check_policy("mbind", mode, nodes, detail)
        end = address + ((length + PAGE_BYTES - 1) // PAGE_BYTES) * PAGE_BYTES
        covered = sum(min(v.end, end) - max(v.start, address) for v in s.vmas if v.start < end and v.end > address)
        if covered < end - address:  # mbind(2): EFAULT when part of the range is not mapped
            raise call_error("mbind", errno.EFAULT, detail)
        # split the VMAs at the range's ends, then set the policy on those inside
        pieces: list[Vma] = []
        for v in s.vmas:
            cuts = sorted({v.start, v.end, *(c for c in (address, end) if v.start < c < v.end)})
            pieces.extend(Vma(a, b, v.policy) for a, b in zip(cuts, cuts[1:]))
        for v in pieces:
            if address <= v.start and v.end <= end:
                v.policy = (mode, usable) if mode != MPOL_DEFAULT else None
        s.vmas = pieces
        self.log("mbind", address=address, length=length, mode=mode, nodes=list(nodes), flags=flags)
        if flags & (MPOL_MF_MOVE | MPOL_MF_MOVE_ALL) and mode in (MPOL_BIND, MPOL_INTERLEAVE, MPOL_WEIGHTED_INTERLEAVE):
            for page in [p for p in s.pages if address <= p < end]:
                want = self._allocation_node(s, s.vma_at(page), page)  # type: ignore[arg-type]
                if s.pages[page] not in usable and page not in s.busy:
                    s.pages[page] = want

    def move_pages(self, pid: int, pages: Sequence[int], nodes: Sequence[int] | None = None,
                   flags: int = MPOL_MF_MOVE) -> list[int]:
        detail = f"pid {pid}, {len(pages)} pages" + ("" if nodes is None else f" to {sorted(set(nodes))}")
        if flags & ~(MPOL_MF_MOVE | MPOL_MF_MOVE_ALL):
            raise call_error("move_pages", errno.EINVAL, detail)
        if flags & MPOL_MF_MOVE_ALL and not self.is_root():
            raise call_error("move_pages", errno.EPERM, detail)
        if nodes is not None and len(nodes) != len(pages):
            raise call_error("move_pages", errno.EINVAL, detail)
        s = self.space(pid)
        status: list[int] = []
        moved = 0
        for i, address in enumerate(pages):
            page = address - address % PAGE_BYTES
            if not s.known and page not in s.pages:
                s.pages[page] = s.cpu_node  # a real process the fake was not told about: first touch
            if nodes is not None and nodes[i] not in self.memory_nodes():
                self.log("move_pages", pid=pid, count=len(pages), moved=moved, errno=errno.ENODEV)
                raise call_error("move_pages", errno.ENODEV, detail)
            if s.known and s.vma_at(page) is None:
                status.append(-errno.EFAULT)
            elif page not in s.pages:
                status.append(-errno.ENOENT)
            elif nodes is None:
                status.append(s.pages[page])
            elif page in s.shared and not flags & MPOL_MF_MOVE_ALL:
                status.append(-errno.EACCES)
            elif page in s.busy:
                status.append(-errno.EBUSY)
            else:
                if s.pages[page] != nodes[i]:
                    moved += 1
                s.pages[page] = nodes[i]
                status.append(nodes[i])
        self.log("move_pages", pid=pid, count=len(pages), moved=moved, query=nodes is None, errno=0)
        return status


__all__ = ["AddressSpace", "FakeNuma"]
