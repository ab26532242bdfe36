"""`memtint inspect`: where a running process's resident pages are, by DRAM bank, channel, rank
and LLC colour, split into heap, stack, file-backed and other mappings, and how much of it lies
in the colours the process was given. Works on any process, coloured or not (issue 5). The JSON
schema is in docs/linux.md."""

from __future__ import annotations

import os
import re
from collections import defaultdict
from typing import Any, Iterator

from memtint.linux.assigned import assigned_colours
from memtint.linux.colour_spec import format_list
from memtint.linux.errors import LinuxError, PrivilegeError, is_zombie, zombie
from memtint.linux.hypervisor import vm_warning
from memtint.linux.layout import ColourLayout, colour_layout, linear_value, machine_nodes
from memtint.linux.maps import CLASSES, libmemtint_mapped, mark_allocator_arena, read_maps
from memtint.linux.pagemap import FRAME_PRIVILEGE, check_frame_access, open_pagemap, read_frames

SCHEMA_VERSION = 1
# Inaccessible mappings larger than this are reservations (libmemtint's 512 GiB arena) and skipped.
RESERVATION_BYTES = 1 << 30


def _argv(pid: int) -> list[str] | None:
    """Process ``pid``'s command line as its words (None when it is gone)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return [a.decode(errors="replace") for a in f.read().split(b"\0") if a]
    except OSError:
        return None


def _command_line(pid: int) -> str:
    return " ".join(_argv(pid) or [])


def _memtint_subcommand(pid: int) -> str | None:
    """``run`` or ``run-mix`` when process ``pid`` is that memtint command (the wrapper whose
    child is the program, and whose PID a shell's ``$!`` gives), else None."""
    argv = _argv(pid) or []
    for i, word in enumerate(argv[:-1]):
        if os.path.basename(word) == "memtint" or (i and argv[i - 1] == "-m" and word in ("memtint", "memtint.cli")):
            rest = [a for a in argv[i + 1:] if not a.startswith("-")]
            return rest[0] if rest and rest[0] in ("run", "run-mix") else None
    return None


def process_stats() -> Iterator[tuple[int, list[str]]]:
    """Each process's PID and the fields of its /proc/PID/stat after the command name (state,
    parent, process group, session, ...); processes that end meanwhile are skipped."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8", errors="replace") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        yield int(entry), fields


def _children(pid: int) -> list[int]:
    """The children of ``pid`` but the `true` that `run` starts once to try the library's
    settings (launch.check_library_starts) just before the program."""
    def trial(child: int) -> bool:
        argv = _argv(child)
        return argv is None or (len(argv) == 1 and os.path.basename(argv[0]) == "true")  # None: ended meanwhile

    return sorted(c for c, fields in process_stats() if fields[1:2] == [str(pid)] and not trial(c))


def _program_of_wrapper(pid: int) -> int | None:
    """The program's PID when ``pid`` is `memtint run` (None when it is not a wrapper); raises
    when the wrapper's program is not one process to inspect."""
    command = _memtint_subcommand(pid)
    if command is None:
        return None
    children = _children(pid)
    if command == "run" and len(children) == 1:
        return children[0]
    if not children:
        raise LinuxError(f"PID {pid} is `memtint {command}`, whose program{'s have' if command == 'run-mix' else ' has'} "
                         "ended or not started: inspect the program's own PID")
    raise LinuxError(f"PID {pid} is `memtint {command}`, not a program: its programs are PIDs "
                     f"{', '.join(map(str, children))}; inspect one of them")


def _histogram(counts: dict[tuple[int, ...], dict[str, int]], assigned: bool) -> list[dict[str, Any]]:
    rows = []
    for ids in sorted(counts):
        row: dict[str, Any] = {"ids": list(ids), "label": "+".join(map(str, ids))}
        row.update({k: counts[ids].get(k, 0) for k in CLASSES})
        row["total"] = sum(row[k] for k in CLASSES)
        row["in_colours"] = counts[ids].get("in_colours", 0) if assigned else None
        rows.append(row)
    return rows


INSPECT_ATTEMPTS = 5


def _map_shape(mappings: list) -> list[tuple]:
    return [(m.start, m.end, m.perms, m.path) for m in mappings]


def _walk(pid: int, mappings: list, layout: "ColourLayout", colour_masks: list[int], wanted: set[int] | None,
          page_shift: int) -> tuple[dict[str, int], dict[str, int], int, dict]:
    """One pass over the resident pages of `mappings`: pages and pages in colours per class,
    swapped pages, and the histograms."""
    pages = dict.fromkeys(CLASSES, 0)
    in_colours = dict.fromkeys(CLASSES, 0)
    swapped = 0
    hist: dict[str, dict[tuple[int, ...], dict[str, int]]] = {
        k: defaultdict(lambda: defaultdict(int)) for k in ("colour", "bank", "channel", "rank", "llc_colour")}
    # Every value is a function of the address bits some mask selects: memoised on those bits
    # (2^10 keys on the i7-860), a 1 GiB process takes about a second.
    relevant = 0
    for masks in (colour_masks, *layout.data["functions"].values()):
        for mask in masks:
            relevant |= mask
    seen: dict[int, tuple[Any, ...]] = {}
    fd = open_pagemap(pid)
    try:
        for m in mappings:
            if m.perms.startswith("---") and m.end - m.start > RESERVATION_BYTES:
                continue  # an address-space reservation: reading its pagemap would take minutes
            frames = read_frames(pid, m.start, m.end, fd)
            swapped += frames.swapped
            for pfn in frames.pfns:
                addr = (pfn << page_shift) & relevant
                keys = seen.get(addr)
                if keys is None:
                    keys = ((linear_value(colour_masks, addr),), layout.ids_of_page("bank", addr),
                            layout.ids_of_page("channel", addr), layout.ids_of_page("rank", addr),
                            (layout.llc_colour_of(addr),))
                    seen[addr] = keys
                pages[m.kind] += 1
                if wanted is not None and keys[0][0] in wanted:
                    in_colours[m.kind] += 1
                inside = wanted is not None and keys[0][0] in wanted
                for name, key in zip(("colour", "bank", "channel", "rank", "llc_colour"), keys):
                    hist[name][key][m.kind] += 1
                    if inside:
                        hist[name][key]["in_colours"] += 1
    finally:
        os.close(fd)

    return pages, in_colours, swapped, hist


def pages_per_node(pid: int, mappings: list) -> tuple[dict[int, dict[str, int]], dict[str, int]]:
    """Resident pages per NUMA node and mapping class from /proc/PID/numa_maps (one line per VMA:
    its start, its memory policy, N<node>=<pages> in pages of kernelpagesize_kB), counted in
    base pages; and how many VMAs have each memory policy."""
    by_start = {m.start: m.kind for m in mappings}
    nodes: dict[int, dict[str, int]] = {}
    policies: dict[str, int] = {}
    try:
        with open(f"/proc/{pid}/numa_maps", encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return nodes, policies
    base_kb = os.sysconf("SC_PAGE_SIZE") // 1024
    for line in lines:
        address, _, rest = line.partition(" ")
        # two policy names hold a space ("weighted interleave:0-1", "prefer (many):0-1")
        policy = re.match(r"(weighted interleave|prefer \(many\))?\S*", rest).group(0)  # type: ignore[union-attr]
        fields = rest[len(policy):].split()
        if not address or not policy:
            continue
        kind = by_start.get(int(address, 16), "other")
        policies[policy] = policies.get(policy, 0) + 1
        scale = 1
        for field in fields:
            if field.startswith("kernelpagesize_kB="):
                scale = max(1, int(field.split("=")[1]) // base_kb)
        for field in fields:
            if field[0] == "N" and "=" in field and field[1:].split("=")[0].isdigit():
                node, count = field[1:].split("=")
                row = nodes.setdefault(int(node), dict.fromkeys(CLASSES, 0))
                row[kind] += int(count) * scale
    return nodes, policies


def _nodes_note(machine: str | dict[str, Any], mapping: str | None, layout: ColourLayout) -> str | None:
    """On a machine of several memory nodes, how a page is decoded: with the node's own mapping,
    over the address bits below a node's capacity (the machine's nodes begin at multiples of it)."""
    nodes = machine_nodes(machine, mapping)
    if len(nodes) < 2:
        return None
    size = 1 << nodes[0]["capacity_bits"]
    gib = f"{size / (1 << 30):g} GiB"
    return (f"{layout.data['machine']} has {len(nodes)} memory nodes: every page is decoded with the node mapping "
            f"{layout.data['mapping']} over its address bits below {gib}, as the machine's nodes begin at multiples "
            f"of {gib} (on a real machine whose nodes do not, pages outside node 0 are decoded wrongly); by_node "
            "counts each node's pages from numa_maps")


def inspect_process(pid: int, machine: str | dict[str, Any] = "i7-860", *, mapping: str | None = None,
                    space: str | None = None) -> dict[str, Any]:
    """A histogram of process `pid`'s resident pages by bank, channel, rank, LLC colour and
    colour, split into heap/stack/file/other, and the fraction of its pages in its assigned colours.

    Colours are those of ``space`` (default bank) on ``machine`` unless the process's environment assigns its
    own (MEMTINT_COLOR_MASKS and MEMTINT_COLORS, as ``memtint run`` sets them): then ``by_colour``
    and the fractions use those masks. ``heap_fraction_in_colours`` is None when the process has
    no assigned colours. Needs root or CAP_SYS_ADMIN (raises PrivilegeError saying so).
    """
    if isinstance(pid, bool) or not isinstance(pid, int) or pid < 1:  # "3" read as PID 3
        raise LinuxError(f"pid: expected a process id (a whole number of at least 1), got {pid!r}")
    if not os.path.exists(f"/proc/{pid}"):
        raise LinuxError(f"no process with PID {pid}")
    followed = _program_of_wrapper(pid)
    if followed is not None:
        pid, followed = followed, pid
    if is_zombie(pid):  # its maps read as empty: it would look like a process with no pages
        raise zombie(pid)
    try:
        return _inspect(pid, followed, machine, mapping, space)
    except (LinuxError, OSError) as error:
        # Its files vanish (ENOENT, "no process with PID") or fail (ESRCH) when it exits under
        # the walk: the process was there, so say what happened rather than that it never was.
        if isinstance(error, PrivilegeError) or not _ended(pid):
            raise
        raise LinuxError(f"PID {pid} exited while it was being inspected (its pages went with it): inspect a "
                         f"process that runs longer, or stop it meanwhile (kill -STOP {pid})") from None


def _ended(pid: int) -> bool:
    return not os.path.exists(f"/proc/{pid}") or is_zombie(pid)


def _inspect(pid: int, followed: int | None, machine: str | dict[str, Any], mapping: str | None,
             space: str | None) -> dict[str, Any]:
    check_frame_access(FRAME_PRIVILEGE)
    layout: ColourLayout = colour_layout(machine, space or "bank", mapping=mapping)
    assigned = assigned_colours(pid)
    colour_masks = assigned.masks if assigned else layout.masks
    wanted = set(assigned.colours) if assigned else None
    page_shift = layout.page_bytes.bit_length() - 1
    if layout.page_bytes != os.sysconf("SC_PAGE_SIZE"):
        raise LinuxError(f"the host's pages are {os.sysconf('SC_PAGE_SIZE')} bytes, the layout's {layout.page_bytes}")

    # Read the map, walk its pages, read the map again: a process that maps or unmaps memory
    # meanwhile (a growing heap) gives an inconsistent picture, so walk again, a few times.
    for attempt in range(1, INSPECT_ATTEMPTS + 1):
        mappings = read_maps(pid)
        loaded = assigned is not None and libmemtint_mapped(mappings, assigned.ld_preload)
        arena = mark_allocator_arena(mappings) if loaded else None
        pages, in_colours, swapped, hist = _walk(pid, mappings, layout, colour_masks, wanted, page_shift)
        stable = _map_shape(read_maps(pid)) == _map_shape(mappings)
        if stable:
            break

    resident = sum(pages.values())
    node_pages, numa_policies = pages_per_node(pid, mappings)
    warnings = [w for w in [vm_warning()] if w]
    if followed is not None:
        warnings.append(f"PID {followed} is `memtint run`, not the program it started: this is its program, "
                        f"PID {pid}")
    if assigned and space is not None:  # the process's own masks are what is reported
        warnings.append(f"--space {space}: the process has its own colours (MEMTINT_COLOR_MASKS), which by_colour "
                        "reports; --space applies to a process without them")
    if not stable:
        warnings.append(f"the process changed its memory map during each of {INSPECT_ATTEMPTS} inspections (it is "
                        "allocating): the figures are a moving snapshot and may undercount its heap; stop it "
                        f"(kill -STOP {pid}) for exact ones")
    bits_inside = {k: layout.data["in_page"][f"{k}_bits_below_page"] for k in ("bank", "channel", "rank")}
    notes = []
    for what, bits in bits_inside.items():
        if bits:
            notes.append(
                f"{what} bits {', '.join(f'b{b}' for b in bits)} lie inside the {layout.page_bytes}-byte page: "
                f"each page spans {len(layout.data['in_page'][f'{what}_offsets'])} {what}s, so the {what} histogram "
                f"counts pages by the {what}s they span (ids joined by '+')")
    node_note = _nodes_note(machine, mapping, layout)
    if node_note:
        notes.append(node_note)
    hugepage_heap = any(m.path.startswith("/anon_hugepage") and m.kind == "heap" for m in mappings)
    if hugepage_heap:
        notes.append("the heap holds hugepages (libmemtint's hugepage mode): a hugepage is resident as a whole, "
                     "including the 4 KiB parts of colours the allocator never hands out, and those count as heap "
                     "pages outside the colours")
    outside = {k: pages[k] - in_colours[k] for k in CLASSES} if wanted is not None else None
    heap_outside = outside["heap"] if outside else 0
    text = format_list(sorted(wanted)) if wanted is not None else ""
    if assigned and not loaded:
        # Not the moved-pages causes below: nothing ever coloured these pages.
        warnings.append(f"the environment assigns colours but libmemtint is not loaded (not in /proc/{pid}/maps): the "
                        "process was never coloured (LD_PRELOAD was removed, as env -u LD_PRELOAD does, or a statically "
                        "linked program was exec'd, which LD_PRELOAD cannot reach), so nothing colours its pages "
                        f"({heap_outside} of the {pages['heap']} heap pages are outside colours {text})")
    elif heap_outside and not hugepage_heap:
        # A page libmemtint delivered in its colours leaves them only if its frame changes.
        warnings.append(f"{heap_outside} of the {pages['heap']} heap pages are outside the assigned colours {text}: "
                        "the kernel moved them (compaction, NUMA balancing, DAMON, KSM), a fork() copied them on "
                        "write, libmemtint spilled them (--spill), or glibc allocated them before libmemtint started; "
                        "the program's libmemtint report counts moves (pages_found_moved)")
    fraction = (lambda n, d: (n / d) if d else None)
    return {
        "schema_version": SCHEMA_VERSION,
        "kind": "inspect",
        "pid": pid,
        "command": _command_line(pid),
        "machine": layout.data["machine"],
        "mapping": layout.data["mapping"],
        "page_bytes": layout.page_bytes,
        "organisation": layout.data["organisation"],
        "space": {
            "name": "assigned" if assigned else layout.space,
            "source": "process environment (MEMTINT_COLOR_MASKS)" if assigned else f"machine {layout.data['machine']}",
            "masks_hex": [hex(m) for m in colour_masks],
            "colours": 1 << len(colour_masks),
        },
        "allocator_arena": [hex(arena[0]), hex(arena[1])] if arena else None,
        "assigned_colours": sorted(wanted) if wanted is not None else None,
        "assigned_colours_text": text if wanted is not None else None,
        "stable": stable,
        "inspections": attempt,
        "resident_pages": resident,
        "swapped_pages": swapped,
        "pages": pages,
        "pages_in_colours": in_colours if wanted is not None else None,
        "pages_outside_colours": outside,
        "heap_pages": pages["heap"],
        "heap_pages_outside_colours": heap_outside if wanted is not None else None,
        "heap_fraction_in_colours": fraction(in_colours["heap"], pages["heap"]) if wanted is not None else None,
        "fraction_in_colours": fraction(sum(in_colours.values()), resident) if wanted is not None else None,
        "by_colour": _histogram(hist["colour"], wanted is not None),
        "by_bank": _histogram(hist["bank"], wanted is not None),
        "by_channel": _histogram(hist["channel"], wanted is not None),
        "by_rank": _histogram(hist["rank"], wanted is not None),
        "by_llc_colour": _histogram(hist["llc_colour"], wanted is not None),
        "by_node": [{"ids": [n], "label": f"node{n}", **row, "total": sum(row.values()), "in_colours": None}
                    for n, row in sorted(node_pages.items())],
        "numa_policies": numa_policies,
        "bits_inside_page": bits_inside,
        "warnings": warnings,
        "notes": notes,
    }
