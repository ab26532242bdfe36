"""Starting programs under libmemtint: the environment of the library's contract
(native/libmemtint/include/memtint.h: MEMTINT_COLOR_MASKS, MEMTINT_COLORS, MEMTINT_NODE, MEMTINT_MODE,
MEMTINT_ON_EXHAUSTION, MEMTINT_REPORT) plus LD_PRELOAD, CPU affinity, and the checks that must
pass before anything runs: the library exists, the colours exist, frame numbers are readable
(or the hugepage mode can colour with the chosen bits), the program is dynamically linked."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, Sequence

from memtint.linux.colour_spec import check_colours, format_list, parse_list
from memtint.linux.elf import find_program, static_program
from memtint.linux.errors import LinuxError, PrivilegeError
from memtint.linux.layout import ColourLayout
from memtint.linux.native import library_path
from memtint.linux.numa import NumaSystem
from memtint.linux.pagemap import FRAME_PRIVILEGE, PRIVILEGE_FIX, frame_access_error

MODES = ("auto", "pagemap", "hugepage")
# A 2 MiB hugepage's physical address bits 0-20 equal its virtual offset.
HUGEPAGE_BITS = 21


def check_can_colour(layout: ColourLayout, mode: str, option: str = "--space") -> None:
    """Raise unless libmemtint can colour with `layout` in `mode` here, as its start decides
    (native/libmemtint/src/shim.c, choose_mode): pagemap needs readable frame numbers; hugepage
    needs free hugepages, and readable frame numbers too when a colour bit lies above the 2 MiB
    page (one pagemap read per hugepage gives its base frame). Without frame numbers the error
    names the spaces (`option` --space) or policies (--policy) within the hugepage."""
    if mode not in MODES:
        raise LinuxError(f"unknown mode '{mode}'; valid modes: {', '.join(MODES)}")
    above = sorted({b for m in layout.masks for b in range(64) if m >> b & 1 and b >= HUGEPAGE_BITS})
    bits = ", ".join(f"b{b}" for b in above)
    if mode == "hugepage":
        if above and frame_access_error() is not None:
            raise PrivilegeError(
                f"hugepage mode with colour bits {bits} (at or above b{HUGEPAGE_BITS}, outside a 2 MiB page) reads "
                f"each hugepage's frame number: {FRAME_PRIVILEGE}; or {_within_hugepage(layout, option)}")
        free = free_hugepages()
        if free == 0:  # libmemtint would stop the program at its first allocation, with status 2
            raise LinuxError(f"hugepage mode: no free 2 MB hugepages ({HUGEPAGES_FREE} is 0); reserve some "
                             "(as root: echo N > /proc/sys/vm/nr_hugepages) or use --mode pagemap (as root)")
        return
    problem = frame_access_error()
    if problem is None:
        return
    if mode == "auto" and not above:
        return  # the library falls back to hugepages, which need no frame numbers
    if mode == "pagemap":
        raise PrivilegeError(problem)
    raise PrivilegeError(f"{FRAME_PRIVILEGE}. Without it libmemtint colours in hugepage mode, which needs no frame "
                         f"numbers only when every colour bit lies below b{HUGEPAGE_BITS} (inside a 2 MiB page); "
                         f"{layout.described} uses {bits}: {_within_hugepage(layout, option)}")


#: Spaces tried for one whose colour bits all lie inside a 2 MiB hugepage, in the order offered.
HUGEPAGE_SPACES = ("cache-only", "a-vp", "c-vp", "llc", "bank-only-8")
#: Those that are placement policies too (run-mix's --policy).
HUGEPAGE_POLICIES = ("cache-only", "a-vp", "c-vp", "bank-only-8")


def _within_hugepage(layout: ColourLayout, option: str) -> str:
    """What to give instead: the machine's spaces (or policies) whose colour bits all lie below b21."""
    from memtint.linux.layout import MemtintError, colour_layout

    found = []
    for name in HUGEPAGE_POLICIES if option == "--policy" else HUGEPAGE_SPACES:
        try:
            other = colour_layout(layout.data["machine"], name, mapping=layout.data["mapping"])
        except (MemtintError, KeyError, TypeError):
            continue  # a machine given as a table or file is not found again by its name
        if other.masks and all(m < 1 << HUGEPAGE_BITS for m in other.masks):
            found.append(name)
    if not found:
        return f"give a colour space whose bits all lie below b{HUGEPAGE_BITS}, with --mode hugepage"
    return f"colour within the hugepage with --mode hugepage and {option} {found[0]}" + (
        f" (or {', '.join(found[1:])})" if len(found) > 1 else "")


#: The system's free 2 MB hugepages (what libmemtint's hugepage mode maps, MAP_HUGETLB).
HUGEPAGES_FREE = "/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages"


def free_hugepages() -> int | None:
    """Free 2 MB hugepages here, or None where the kernel does not say."""
    try:
        with open(HUGEPAGES_FREE, encoding="ascii") as f:
            return int(f.read().strip())
    except (OSError, ValueError):
        return None


def check_node(node: int | None, numa: NumaSystem | None = None) -> None:
    """Raise unless `node` (None or -1: any node) has memory (/sys/devices/system/node/has_memory):
    libmemtint binds the coloured frames to it and would refuse it at start with status 2."""
    if node is None or node == -1:
        return
    nodes = (numa or NumaSystem()).memory_nodes()
    if node not in nodes:
        raise LinuxError(f"node {node} does not exist or has no memory: the nodes with memory here are "
                         f"{format_list(nodes)} (--node -1 or no --node: any node)")


def parse_cpus(text: str) -> list[int]:
    """A CPU list ("0-1,3"), each CPU checked against the machine's count before a range is expanded."""
    count = max(os.sysconf("SC_NPROCESSORS_CONF"), max(os.sched_getaffinity(0)) + 1)
    return parse_list(text, "CPU", count=count, where="this machine")


def check_preloadable(argv: Sequence[str], env: dict[str, str]) -> None:
    """Refuse a program LD_PRELOAD cannot reach (statically linked): it would run uncoloured with
    no sign of it (no report, no warning)."""
    if argv:
        problem = static_program(argv[0], env.get("PATH"))
        if problem:
            raise LinuxError(problem)


def check_startable(argv: Sequence[str], env: dict[str, str]) -> None:
    """Refuse a program exec would not find, or a script whose #! interpreter is missing, as
    `start` says it (`start_failure`), but before any warning; what else exec refuses (permission,
    format) is said when it starts."""
    import errno

    if not argv:
        return
    name = argv[0]
    if "/" in name:
        found = os.path.exists(name)
    else:  # execvp tries every PATH entry: a file there, executable or not, is exec's to judge
        found = bool(name) and any(os.path.exists(os.path.join(d or ".", name))
                                   for d in env.get("PATH", os.defpath).split(os.pathsep))
    if not found or _missing_interpreter(name):
        raise start_failure(name, FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT)))


def check_cpus_available(cpus: Sequence[int] | None) -> None:
    """Refuse CPUs this process may not use before anything starts (`start` would, at the start)."""
    _affinity(cpus)


def check_library_starts(env: dict[str, str]) -> None:
    """Start the library once, in ``true``, with ``env`` (no report): libmemtint checks its
    settings (the MEMTINT_* variables, this host's frames in auto mode) before the program's
    main and exits 2 on a bad one, which afterwards could not be told from the program's own
    status 2. Said here, before the program starts."""
    true = shutil.which("true")
    if not true:
        return
    trial = {k: v for k, v in env.items() if k != "MEMTINT_REPORT"}
    trial["MEMTINT_QUIET"] = "1"
    try:
        done = subprocess.run([true], env=trial, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True, errors="replace", timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return
    said = [line.removeprefix("libmemtint: error: ") for line in done.stderr.splitlines()
            if line.startswith("libmemtint: error: ")]
    if done.returncode != 0 and said:
        raise LinuxError("libmemtint cannot start with these settings: " + "; ".join(said))


def command_inputs(argv: Sequence[str], env: dict[str, str]) -> list[str]:
    """The files a command reads as far as can be told from outside: its program and the
    pieces of its arguments that name existing files (memtint.outputs.argument_paths). An
    output must not be one of them."""
    from memtint.outputs import argument_paths

    found = find_program(argv[0], env.get("PATH")) if argv else None
    return ([found] if found else []) + [a for a in argument_paths(argv[1:]) if os.path.lexists(a)]


def map_count_warning(mode: str, path: str = "/proc/sys/vm/max_map_count") -> str | None:
    """libmemtint moves coloured 4 KiB pages one by one into place, and a page moved alone is two
    mappings (its own and the hole it leaves): the default limit of 65530 can stop a heap of one
    colour in 32 at about 150 MB (docs/libmemtint.md, Modes)."""
    if mode == "hugepage":
        return None
    try:
        with open(path, encoding="ascii") as f:
            limit = int(f.read())
    except (OSError, ValueError):
        return None
    if limit >= 262144:
        return None
    return (f"vm.max_map_count is {limit}: a coloured heap may hit it from about {limit // 2 * 4096 // 2**20} MB, "
            "the sooner the fewer its colours (allocations then fail); raise it with sysctl vm.max_map_count=1048576")


#: PYTHONMALLOC values under which CPython takes every object from malloc.
PYTHON_MALLOC = ("malloc", "malloc_debug")


def pymalloc_warning(argv: Sequence[str], env: dict[str, str]) -> str | None:
    """CPython takes its objects of up to 512 bytes (most of them) from arenas it maps itself
    (pymalloc), not from malloc, so libmemtint cannot colour them; PYTHONMALLOC=malloc makes it
    use malloc. Said when the program is CPython (its name, its #! interpreter, or the program
    `env` runs, is python*) and its environment does not set that, or its options (-E, -I, on
    the command or the #! line) make it ignore the environment; memtint does not set it itself,
    as it changes the program's allocator."""
    found = _cpython_command(list(argv), dict(env))
    if found is None:
        return None
    python_argv, python_env, from_shebang = found
    pymalloc = ("objects of up to 512 bytes (most of them) come from arenas it maps itself (pymalloc), not from "
                "malloc")
    option = _ignores_environment(python_argv[1:])
    if option:
        # No -X option or file chooses the allocator: PYTHONMALLOC is the only way, and -E/-I shut it.
        flag = "-I (isolated mode, which implies -E)" if option == "I" else "-E"
        where = " on its #! line" if from_shebang else ""
        set_here = " (set to malloc here)" if python_env.get("PYTHONMALLOC") in PYTHON_MALLOC else ""
        drop = f"-{option} from the #! line" if from_shebang else f"-{option}"
        if option == "I":
            drop += " (-s -P keep the rest of its isolation; -P from Python 3.11)"
        return (f"{argv[0]} runs CPython with {flag}{where}, which ignores PYTHONMALLOC{set_here}, and no -X option "
                f"chooses the allocator: its {pymalloc}, and stay uncoloured; to colour them, drop {drop} and give it "
                "PYTHONMALLOC=malloc, or accept that its small objects stay uncoloured")
    if python_env.get("PYTHONMALLOC") in PYTHON_MALLOC:
        return None
    return (f"{argv[0]} runs CPython, whose {pymalloc}: they stay uncoloured; to colour them, give it "
            "PYTHONMALLOC=malloc (PYTHONMALLOC=malloc memtint ..., or env PYTHONMALLOC=malloc before the program)")


#: CPython's short options that take an argument (the rest of the word, or the next word);
#: -c and -m end the options.
_PYTHON_OPTION_ARGS = "cmWX"


def _ignores_environment(options: Sequence[str]) -> str | None:
    """The option, I or E, by which CPython's command-line options make it ignore PYTHON* variables
    (-I, isolated mode, implies -E), else None; read as CPython reads them: up to the script, -c,
    -m, "-" or "--", short options combined ("-IE", "-Es", "-Wd")."""
    found = None
    i = 0
    while i < len(options):
        word = options[i]
        if word == "--" or not word.startswith("-") or word == "-":
            break
        i += 1
        if word.startswith("--"):
            if word == "--check-hash-based-pycs":
                i += 1
            continue
        for k, flag in enumerate(word[1:], 1):
            if flag == "I" or (flag == "E" and found is None):
                found = flag
            if flag in _PYTHON_OPTION_ARGS:
                if flag in "cm":
                    return found
                if k == len(word) - 1:
                    i += 1  # its argument is the next word
                break
    return found


def _cpython_command(argv: list[str], env: dict[str, str], depth: int = 0,
                     from_shebang: bool = False) -> tuple[list[str], dict[str, str], bool] | None:
    """The command line and environment CPython gets when `argv` runs it (through `env` or a #!
    line), and whether it came from a #! line; else None."""
    from memtint.linux.elf import SCRIPT_DEPTH, _shebang, env_command

    if not argv or depth > SCRIPT_DEPTH:
        return None
    name = os.path.basename(argv[0])
    if name == "env":
        rest, env = env_command(argv[1:], env)
        return _cpython_command(rest, env, depth + 1, from_shebang)
    if name.startswith("python"):
        return argv, env, from_shebang
    path = find_program(argv[0], env.get("PATH"))
    words = _shebang(path) if path else None
    # The kernel runs the interpreter with the #! line's words, then the script and its arguments.
    return _cpython_command([*words, path, *argv[1:]], env, depth + 1, True) if words and path else None


#: A colour mask whose lowest bit is at least this selects regions of 1 GiB or more.
REGION_BIT = 30


def library_mode(mode: str) -> str:
    """The mode libmemtint takes for `mode` here (shim.c, choose_mode): auto is pagemap when frame
    numbers are readable, else hugepage (`check_can_colour` refused auto's other cases)."""
    if mode != "auto":
        return mode
    return "pagemap" if frame_access_error() is None else "hugepage"


def cost_note(chosen: Sequence[int], colours: int, mode: str, masks: Sequence[int] = ()) -> str | None:
    """What colouring with the colours `chosen` costs the kernel, said before the program starts:
    frames are taken from the kernel in whatever colours it hands out, so a fraction f of the
    colours takes about 1/f of the heap's size in frames while libmemtint collects them (the rest
    is held aside for later growth or given back). A colour bit that selects regions of a GiB or
    more (a channel or node bit high in the address) costs far more: the kernel hands out frames
    from one region for long stretches (measured: 1.4 GB of frames for a 4 MB heap). Hugepage
    mode (`mode` as libmemtint takes it: `library_mode`) has its own cost (`_hugepage_cost`)."""
    n = len(set(chosen))
    if n <= 0 or n >= colours:
        return None
    if mode == "hugepage":
        return _hugepage_cost(sorted(set(chosen)), colours, masks)
    regions = sorted({(m & -m).bit_length() - 1 for m in masks if m and (m & -m).bit_length() - 1 >= REGION_BIT})
    if regions:
        return (f"{n} of {colours} colours by bit(s) {', '.join(f'b{b}' for b in regions)}, which select regions "
                f"of {2 ** (regions[0] - 30)} GiB or more of physical memory: the kernel hands out frames from one region "
                "for long stretches, so libmemtint may take hundreds of MB of frames for each MB of heap it keeps "
                "(MEMTINT_POOL_LIMIT caps what it holds; a bank or cache colour space does not have this cost)")
    factor = colours / n
    if factor < 4:
        return None
    return (f"{n} of {colours} colours: each MB of heap takes about {factor:.0f} MB of frames from the kernel "
            "while libmemtint collects them (the rest is held aside or given back; MEMTINT_POOL_LIMIT caps what it "
            "holds)")


def _span(vectors: Sequence[int]) -> set[int]:
    """Every XOR of some of `vectors` (colours are parities, so sums of colours are colours)."""
    span = {0}
    for v in vectors:
        if v not in span:
            span |= {x ^ v for x in span}
    return span


def _reduced(v: int, basis: list[int]) -> int:
    """`v` with the leading bits of an echelon `basis` (largest first) cleared: one value per coset."""
    for b in basis:
        v = min(v, v ^ b)
    return v


def _hugepage_cost(chosen: list[int], colours: int, masks: Sequence[int]) -> str:
    """Hugepage mode takes whole 2 MiB hugepages from the reserved pool (libmemtint, hugepage.c).
    Piece i of a hugepage whose base has colour h has colour h ^ low[i], low[i] the colour of
    offset i * 4 KiB: mask bits below b21 give every hugepage a group of colours (the span of
    low), laid out the same in each, and bits at or above b21 choose the group (h). Pieces of the
    group's other colours stay held in a hugepage while it is in use, and a hugepage of a group
    with none of the colours is of no use: libmemtint gives it back once the search that took it
    ends, but one that keeps coming straight back (no other program takes it) is held aside
    after 3 times. So a fraction f of the colours takes about 1/f of the heap in hugepages when
    free hugepages are spread evenly over the groups, which the kernel does not promise (on a test
    VM 146 of 256 shared one value of b21-b22). A block is a run of the colours inside one
    hugepage or whole hugepages all of the colours, so the longest such run bounds every malloc
    (`_hugepage_run_limit`). Any fraction is said: the reserved pool is small and fixed, and the
    cost does not go away."""
    wanted = set(chosen)
    per_group: dict[int, int] = {}
    if not masks:  # no layout given: every colour taken to lie inside the hugepage
        low: list[int] = []
        group, high, groups, held = set(range(colours)), {0}, 1, len(wanted)
    else:
        low = [_colour(i << 12, masks) for i in range(512)]
        group = _span(low)
        high = _span([_colour(1 << b, masks) for b in range(HUGEPAGE_BITS, 64)])
        # an echelon basis of the group: a colour reduced by it names the colour's group
        basis: list[int] = []
        for v in group:
            if (r := _reduced(v, basis)):
                basis = sorted([*basis, r], reverse=True)
        per_group = dict.fromkeys({_reduced(h, basis) for h in high}, 0)
        for c in wanted:
            if (g := _reduced(c, basis)) in per_group:
                per_group[g] += 1
        groups, held = len(per_group), sum(per_group.values())
    if not held:
        return (f"hugepage mode, {len(wanted)} of {colours} colours: no 2 MiB hugepage holds any of them (the masks "
                "never give these colours), so libmemtint cannot colour the heap with them")
    factor = groups * len(group) / held
    about = f"{factor:.0f}" if factor >= 10 else f"{factor:.2g}"
    cost = f"each MB of heap takes about {about} MB of reserved hugepages (vm.nr_hugepages)"
    limit = _hugepage_run_limit(wanted, low, high) if masks else ""
    above = _bit_names(b for b in range(HUGEPAGE_BITS, 64) if any(m >> b & 1 for m in masks))
    if len(group) == 1:
        return (f"hugepage mode, {len(wanted)} of {colours} colours by bit(s) {above}, at or above "
                f"b{HUGEPAGE_BITS}, which are one value for a whole 2 MiB hugepage: one of no chosen colour is of no "
                "use (given back once the search that took it ends, held aside whole when it keeps coming straight "
                f"back), so {cost} if the kernel's free hugepages are spread evenly over those bits, and more when "
                "they are not (MEMTINT_POOL_LIMIT caps what libmemtint holds)")
    if groups == 1:
        return (f"hugepage mode, {len(wanted)} of {colours} colours: every 2 MiB hugepage holds all {colours} colours, "
                f"so {cost}, and the pieces of other colours stay held aside in them while the program runs (a "
                f"hugepage goes back only whole; MEMTINT_POOL_LIMIT caps what libmemtint holds){limit}")
    touched = [g for g, k in per_group.items() if k]
    whole = all(per_group[g] == len(group) for g in touched)
    plural = "s" if len(touched) > 1 else ""
    share = (f"{len(touched)} whole group{plural}" if whole else
             f"part of {len(touched)} group{plural} ({held} of {'their' if plural else 'its'} "
             f"{len(touched) * len(group)} colours)")
    inside = _bit_names(b for b in range(12, HUGEPAGE_BITS) if any(m >> b & 1 for m in masks))
    pieces = "" if whole else ", and the other colours' pieces of each one used stay held aside"
    return (f"hugepage mode, {len(wanted)} of {colours} colours: bit(s) {inside} lie inside a 2 MiB hugepage, so "
            f"each holds a group of {len(group)} colours (such as {format_list(sorted(group))}), and {above} above "
            f"it choose which of {groups} groups; these colours are {share}, so a hugepage of another group is of no "
            f"use (given back once the search that took it ends, held aside when it keeps coming straight back)"
            f"{pieces}: {cost} if the kernel's free hugepages are spread evenly over {above}, and more when they are "
            f"not (MEMTINT_POOL_LIMIT caps what libmemtint holds){limit}")


def _bit_names(bits: Iterable[int]) -> str:
    """b13, b14, b15."""
    return ", ".join(f"b{b}" for b in bits)


def _colour(paddr: int, masks: Sequence[int]) -> int:
    """The colour of a physical address: bit i is the parity of paddr & masks[i]."""
    return sum(((paddr & m).bit_count() & 1) << i for i, m in enumerate(masks))


def _hugepage_run_limit(wanted: set[int], low: list[int], high: set[int]) -> str:
    """The largest malloc hugepage mode can colour, when some is too large: the longest run of
    the colours inside any hugepage (libmemtint's mt_huge_best_run, which refuses longer blocks
    before taking a hugepage), unless a hugepage can be all of them (then whole hugepages are
    chained into blocks of any size)."""
    longest = 0
    group = set(low)
    seen: set[frozenset[int]] = set()
    for h in high:  # the hugepages whose pieces are the same colours of the group behave alike
        inside = frozenset(x for x in group if h ^ x in wanted)
        if not inside or inside in seen:
            continue
        seen.add(inside)
        run = 0
        for colour in low:
            run = run + 1 if colour in inside else 0
            longest = max(longest, run)
        if longest == len(low):
            return ""
    return (f"; and no hugepage is all of these colours, so no malloc over 2 MiB can be coloured, nor any over "
            f"{longest * 4} KiB (their longest run in a hugepage): libmemtint refuses them with ENOMEM (with --spill "
            "it makes them of other colours, counted)")


def coloured_environment(layout: ColourLayout, colours: Sequence[int], *, mode: str = "auto", spill: bool = False,
                         report: str | None = None, base: dict[str, str] | None = None,
                         node: int | None = None) -> dict[str, str]:
    """The environment that makes libmemtint colour a program's heap with `colours` of `layout`,
    from frames on `node` (None: any node; checked by `check_node`)."""
    check_colours(list(colours), layout.colours, layout.described)
    env = dict(os.environ if base is None else base)
    lib = library_path()
    preload = env.get("LD_PRELOAD", "")
    env["LD_PRELOAD"] = f"{lib}:{preload}" if preload else lib
    env["MEMTINT_COLOR_MASKS"] = layout.env_masks()
    env["MEMTINT_COLORS"] = format_list(list(colours))
    env.pop("MEMTINT_NODE", None)  # an inherited node must not apply to a run that asked for none
    if node is not None and node != -1:
        env["MEMTINT_NODE"] = str(node)
    env["MEMTINT_MODE"] = mode
    env["MEMTINT_ON_EXHAUSTION"] = "spill" if spill else "error"
    # Nor an inherited report: the library would write it unchecked (over an input of the
    # command, or, empty, end the program with status 2); --report is checked before the run.
    env.pop("MEMTINT_REPORT", None)
    if report:
        env["MEMTINT_REPORT"] = os.path.abspath(report)
    return env


def _affinity(cpus: Sequence[int] | None):
    if not cpus:
        return None
    available = os.sched_getaffinity(0)
    missing = [c for c in cpus if c not in available]
    if missing:
        raise LinuxError(f"CPU{'s' if len(missing) > 1 else ''} {format_list(missing)} "
                         f"{'are' if len(missing) > 1 else 'is'} not available here (this process may use "
                         f"{format_list(sorted(available))})")
    chosen = set(cpus)
    return lambda: os.sched_setaffinity(0, chosen)


def exit_status(returncode: int) -> int:
    """A child's status as a shell reports it: 128 + N when signal N killed it."""
    return 128 - returncode if returncode < 0 else returncode


@dataclass
class CommandRun:
    """One program started by `run` or `run-mix`."""

    argv: list[str]
    colours: list[int]
    cpus: list[int] | None
    report_path: str | None = None
    process: subprocess.Popen | None = None
    started: float = 0.0
    wall_seconds: float | None = None
    exit_code: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def library_report(self) -> dict[str, Any] | None:
        """libmemtint's JSON report (MEMTINT_REPORT), when the program wrote one at exit."""
        # only a regular file can be read back (opening a FIFO would wait for a writer)
        if not self.report_path or not os.path.isfile(self.report_path):
            return None
        try:
            with open(self.report_path, encoding="utf-8") as f:
                return json.load(f)
        except (OSError, ValueError, RecursionError):
            return None


def no_report_reason(pid: int, exit_code: int | None) -> str:
    """Why a program (process ``pid``) left no libmemtint report of its own: the library writes it
    from the exit handlers of each process it is loaded in, which ``_exit`` (every dash script) or
    a signal skip, and a process it never loaded in writes none. Once the program has ended the two
    cannot be told apart, so both are named."""
    how = f"was killed by signal {exit_code - 128}" if exit_code and exit_code > 128 else \
        f"exited with status {exit_code}"
    return (f"the program (PID {pid}) {how} and either ended without running its exit handlers, where libmemtint "
            "writes its report (_exit, a signal; dash scripts end with _exit), or never loaded libmemtint (it removed "
            "LD_PRELOAD, as env -u LD_PRELOAD does, or exec'd a statically linked program), and then its heap was "
            "never coloured")


def start(argv: Sequence[str], env: dict[str, str], cpus: Sequence[int] | None,
          stdout: int | None = None) -> subprocess.Popen:
    """Start `argv` with `env`, pinned to `cpus`, its standard output to the file descriptor
    `stdout` (None: memtint's own); a clear error when the program cannot start."""
    if not argv:
        raise LinuxError("no program given: write the command after '--'")
    try:
        return subprocess.Popen(list(argv), env=env, preexec_fn=_affinity(cpus), stdout=stdout)
    except OSError as error:  # every way exec fails is the program's, said as such (run-mix stops the others)
        raise start_failure(argv[0], error) from None


def kill_tree(process: subprocess.Popen) -> None:
    """Kill a program memtint started, and every process it started in turn (a script's commands,
    a version manager's shim and its helpers), and reap it. Each is stopped before its children
    are listed, so none forks past the list; killed, none of them writes a library report into a
    directory memtint is about to remove, or runs on after memtint has exited."""
    found = [process.pid]
    stopped: set[int] = set()
    while len(stopped) < len(found):
        for pid in found:
            if pid not in stopped:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGSTOP)
                stopped.add(pid)
        parents = _parents()
        found += [pid for pid, parent in parents.items() if parent in stopped and pid not in stopped and pid not in found]
    for pid in found:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    process.wait()


def _parents() -> dict[int, int]:
    """Every process's parent, from /proc/PID/stat (a process gone meanwhile is left out)."""
    out = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2:].split()  # after the command name, which may hold spaces
        if len(fields) > 1:
            out[int(name)] = int(fields[1])
    return out


def start_failure(program: str, error: OSError) -> LinuxError:
    """Why ``program`` could not be started, as the user can act on it."""
    import errno

    if not program:
        return LinuxError("the program's name is empty: write the command after '--'")
    if error.errno == errno.ENOEXEC:
        return LinuxError(f"{program}: cannot be executed: it is neither a program for this machine nor a script "
                          f"starting with a #! line (run a shell script as: sh {program})")
    if not isinstance(error, (FileNotFoundError, PermissionError)):
        return LinuxError(f"{program}: cannot be started: {error.strerror or error}")
    if isinstance(error, FileNotFoundError):
        interpreter = _missing_interpreter(program)
        if interpreter:
            return LinuxError(f"{program}: its interpreter {interpreter} (the #! line) does not exist")
        return LinuxError(f"{program}: command not found")
    return LinuxError(f"{program}: " + ("is a directory, not a program" if os.path.isdir(program) else
                                        "permission denied (not executable)"))


def _missing_interpreter(program: str) -> str | None:
    """The interpreter a script's #! line names, when the script exists and that does not (the
    kernel's ENOENT is then the interpreter's, not the script's)."""
    path = program if os.sep in program else shutil.which(program)
    try:
        with open(path or program, "rb") as f:
            first = f.readline(256)
    except OSError:
        return None
    if not first.startswith(b"#!"):
        return None
    words = first[2:].split()
    if not words:
        return None
    interpreter = os.fsdecode(words[0])
    return None if os.path.exists(interpreter) else interpreter


#: Signals passed on to the programs memtint runs. SIGHUP too: memtint killed by a hangup would
#: leave its program running without anyone to report its end.
RELAYED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
#: siginfo's si_code for a signal the kernel sent itself (a terminal's Ctrl-C, Ctrl-\\, hangup).
SI_KERNEL = 0x80


class SignalRelay:
    """SIGINT, SIGTERM and SIGHUP while memtint runs programs: passed on to them (each program
    decides when to stop; memtint waits for it and reports its status), with two exceptions.

    - A signal the terminal sent (Ctrl-C) reached every process of the foreground process group,
      the programs included: passing it on again would give each program two SIGINTs for one
      Ctrl-C (a program that shuts down cleanly on the first and at once on the second would
      skip its clean-up). Told apart by the sender (siginfo: the kernel), which `wait` reads by
      taking the signals with sigtimedwait; a program in a process group of its own gets it.
    - Before any program has started there is nothing to pass it to: `Stopped` is raised, so the
      command ends as every memtint command does (130, 143) after its own clean-up. While a
      program is being started the signal waits for it (`starting`), then is passed on.

    Used as a context manager around the start and the wait (main thread only; elsewhere the
    signals are left as they are)."""

    def __init__(self) -> None:
        self.processes: list[subprocess.Popen] = []
        self.previous: dict[int, Any] = {}
        self.pending: list[int] = []
        self.received: list[int] = []
        self._starting = False

    def __enter__(self) -> "SignalRelay":
        import threading

        if threading.current_thread() is threading.main_thread():
            self.previous = {s: signal.signal(s, self._handler) for s in RELAYED}
        return self

    def __exit__(self, *exc: Any) -> None:
        for s, h in self.previous.items():
            signal.signal(s, h)
        self.previous = {}

    def _handler(self, signum: int, _frame: Any) -> None:
        # Python's handler: no sender to tell, so the signal is passed on (the usual way in is
        # `wait`, which reads the sender; this one takes a signal outside it).
        self.relay(signum, from_terminal=False)

    def relay(self, signum: int, *, from_terminal: bool) -> None:
        self.received.append(signum)
        if self._starting:
            self.pending.append(signum)
            return
        if not self.processes:
            from memtint.stopping import Stopped

            raise Stopped(signum)
        own_group = os.getpgrp()
        for p in self.processes:
            if p.poll() is not None:
                continue
            if from_terminal:
                try:
                    if os.getpgid(p.pid) == own_group:
                        continue  # it had the terminal's signal itself
                except OSError:
                    continue
            p.send_signal(signum)

    @contextlib.contextmanager
    def starting(self) -> Iterator[None]:
        """Within this block (a program being started) a signal waits; then it is passed on to
        the programs started, or, when none could start, ends the command (`Stopped`)."""
        self._starting = True
        try:
            yield
        finally:
            self._starting = False
        pending, self.pending = self.pending, []
        for signum in pending:
            self.relay(signum, from_terminal=False)

    def add(self, process: subprocess.Popen) -> None:
        self.processes.append(process)

    @property
    def stopping(self) -> bool:
        """Whether a signal came: a command starting several programs starts no more."""
        return bool(self.received)

    @contextlib.contextmanager
    def waiting(self) -> Iterator[Callable[[float], None]]:
        """Within this block the relayed signals (and SIGCHLD, which ends a wait when a program
        exits) are blocked and taken by the function yielded, ``pause(timeout)``, with their
        sender; a thread started within inherits the block. Outside the main thread ``pause``
        only sleeps (the handlers, if any, pass signals on)."""
        import threading
        import time

        if not self.previous or threading.current_thread() is not threading.main_thread():
            yield time.sleep
            return
        taken = {*RELAYED, signal.SIGCHLD}
        held = signal.pthread_sigmask(signal.SIG_BLOCK, taken)

        def pause(timeout: float) -> None:
            info = signal.sigtimedwait(taken, timeout)
            if info is not None and info.si_signo != signal.SIGCHLD:
                self.relay(info.si_signo, from_terminal=info.si_code == SI_KERNEL)

        try:
            yield pause
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, held)

    def wait(self, process: subprocess.Popen) -> int:
        """Wait for ``process``, passing signals on meanwhile; its return code."""
        with self.waiting() as pause:
            while process.poll() is None:
                pause(0.5)  # SIGCHLD ends it at once; the timeout is for one taken by another thread
        return process.returncode


__all__ = ["MODES", "PRIVILEGE_FIX", "check_can_colour", "check_cpus_available", "check_library_starts", "check_node",
           "check_preloadable", "check_startable", "coloured_environment", "command_inputs",
           "cost_note", "exit_status", "library_mode", "parse_cpus", "pymalloc_warning", "start", "CommandRun", "SignalRelay"]
