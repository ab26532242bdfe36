"""A process's mappings from /proc/PID/maps, each classified as heap, stack, file or other.

What counts as heap (documented in docs/linux.md):
- `[heap]` (the brk heap) and every anonymous private writable mapping: glibc's mmap'd chunks and
  thread arenas, libmemtint's coloured arena (its delivered pages *and* its pool), and memory the
  program maps itself (`mmap(MAP_ANONYMOUS)`, e.g. CPython's pymalloc arenas) all look alike
  in /proc/PID/maps; this kernel has no CONFIG_ANON_VMA_NAME to tell them apart by name, so they
  are all heap, except:
- stack: `[stack]`, and every mapping holding a thread's stack pointer (read from
  /proc/PID/task/TID/syscall; a thread running at that instant has none to read, so its
  stack counts as heap);
- other: `[vdso]`, `[vvar]`, `[vsyscall]`, other named kernel mappings and non-writable anonymous
  mappings (e.g. PROT_NONE reservations);
- a binary's or library's .bss is an unnamed anonymous mapping too, and counts as heap (a few
  pages per library; telling it apart would need the ELF headers of every mapped file);
- file: mappings backed by a file (binary, libraries, mapped files, deleted files), shared memory.

In a process running under libmemtint the heap is known exactly: every page the library hands out
or pools lies in its one reserved arena (512 GiB of address space, PROT_NONE where unbacked), so
heap is the arena's pages, and anonymous writable memory outside it (memory the program maps
itself, e.g. CPython's pymalloc arenas unless PYTHONMALLOC=malloc; the library's metadata; .bss)
is "other": uncoloured, and counted as such.
"""

from __future__ import annotations

from dataclasses import dataclass

from memtint.linux.errors import LinuxError, unreadable

CLASSES = ("heap", "stack", "file", "other")
# libmemtint reserves 512 GiB; no other mapping of a normal process comes near this.
ARENA_MIN_BYTES = 1 << 38


@dataclass
class Mapping:
    start: int
    end: int
    perms: str
    offset: int
    inode: int
    path: str
    kind: str = "other"

    @property
    def anonymous(self) -> bool:
        # MAP_HUGETLB|MAP_ANONYMOUS memory shows as a deleted file on the internal hugetlbfs.
        hugetlb = self.path.startswith("/anon_hugepage")
        return hugetlb or (self.inode == 0 and (self.path == "" or self.path.startswith("[anon")))

    @property
    def private_writable(self) -> bool:
        return self.perms[1] == "w" and self.perms[3] == "p"


def parse_maps(text: str) -> list[Mapping]:
    """Mappings of a /proc/PID/maps text, classified."""
    mappings = []
    for number, line in enumerate(text.splitlines(), 1):
        fields = line.split(maxsplit=5)
        if len(fields) < 5:
            raise LinuxError(f"/proc/PID/maps line {number} is not 'start-end perms offset dev inode path': {line!r}")
        start_text, _, end_text = fields[0].partition("-")
        try:
            mappings.append(Mapping(int(start_text, 16), int(end_text, 16), fields[1], int(fields[2], 16),
                                    int(fields[4]), fields[5] if len(fields) > 5 else ""))
        except ValueError:
            raise LinuxError(f"/proc/PID/maps line {number} has a malformed field: {line!r}") from None
    for m in mappings:
        m.kind = classify(m)
    return mappings


def classify(m: Mapping) -> str:
    """heap, stack, file or other for mapping `m` (thread stacks are found by `read_maps`)."""
    if m.path == "[heap]":
        return "heap"
    if m.path.startswith("[stack"):
        return "stack"
    if m.path.startswith("[anon"):
        return "heap" if m.private_writable else "other"
    if m.path.startswith("["):
        return "other"
    if not m.anonymous:
        return "file"
    if m.path.startswith("/anon_hugepage") and m.perms[3] == "s":
        return "other"  # shared hugetlb memory
    return "heap" if m.private_writable else "other"


def mark_allocator_arena(mappings: list[Mapping]) -> tuple[int, int] | None:
    """Find libmemtint's arena (the widest run of adjacent anonymous mappings, if it spans at least
    ARENA_MIN_BYTES); make its writable pieces heap and other anonymous writable memory other.
    Returns the arena's [start, end), or None when there is none."""
    best: tuple[int, int] | None = None
    i = 0
    while i < len(mappings):
        j = i
        while mappings[i].anonymous and j + 1 < len(mappings) and mappings[j + 1].anonymous \
                and mappings[j + 1].start == mappings[j].end:
            j += 1
        span = (mappings[i].start, mappings[j].end)
        if mappings[i].anonymous and span[1] - span[0] >= ARENA_MIN_BYTES and (
                best is None or span[1] - span[0] > best[1] - best[0]):
            best = span
        i = j + 1
    if best is None:
        return None
    for m in mappings:
        if m.kind == "heap" and m.path == "":
            m.kind = "heap" if best[0] <= m.start < best[1] else "other"
    return best


def libmemtint_mapped(mappings: list[Mapping], ld_preload: str = "") -> bool:
    """Whether libmemtint is loaded in the process: a mapped libmemtint*.so, or a library its
    LD_PRELOAD names (MEMTINT_LIB may be called anything) that exports memtint_set_colors.
    LD_PRELOAD alone does not tell: a static program exec'd keeps it and never loads it."""
    import os

    from memtint.linux.native import exports_libmemtint

    named = {p for p in ld_preload.replace(" ", ":").split(":") if p}
    for path in {m.path.removesuffix(" (deleted)") for m in mappings if not m.anonymous and m.path}:
        if os.path.basename(path).startswith("libmemtint") or (path in named and exports_libmemtint(path)):
            return True
    return False


def read_maps(pid: int | str) -> list[Mapping]:
    """The classified mappings of process `pid`, thread stacks included."""
    try:
        with open(f"/proc/{pid}/maps", encoding="utf-8", errors="surrogateescape") as f:
            mappings = parse_maps(f.read())
    except OSError as error:
        raise unreadable(pid, "maps", error) from None
    for sp in thread_stack_pointers(pid):
        for m in mappings:
            if m.start <= sp < m.end and m.kind == "heap":
                m.kind = "stack"
    return mappings


def thread_stack_pointers(pid: int | str) -> list[int]:
    """Stack pointers of the process's blocked threads (/proc/PID/task/TID/syscall: "nr args... sp
    pc"; "running" or unreadable for others)."""
    import os

    pointers = []
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return pointers
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/syscall", encoding="ascii") as f:
                fields = f.read().split()
        except OSError:
            continue
        if len(fields) >= 3 and fields[0] != "running":
            try:
                pointers.append(int(fields[-2], 16))
            except ValueError:
                continue
    return pointers
