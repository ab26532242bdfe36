"""`memtint trace` and its Valgrind tool (issue 7's tests 1-5): the in-process cache filter
against a reference model, a known access pattern, format round trips, per-thread capture, and
the error cases. Needs Valgrind and the built tool (`make build`); without them the module is
skipped with the reason (CI has both)."""

from __future__ import annotations

import gzip
import json
import os
import random
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from memtint.api import MemtintError, convert_trace, cpu_trace_stats
from memtint.capture import TOOL_FILE, capture_trace, tool_lib_dir
from conftest import assert_clean_error as assert_one_error_line

HERE = os.path.dirname(__file__)
NATIVE = os.path.join(HERE, "..", "..", "native", "valgrind")
PROGRAMS = os.path.join(HERE, "trace_programs")

try:
    tool_lib_dir()
    HAVE_TOOL = shutil.which("valgrind") is not None
except MemtintError:
    HAVE_TOOL = False
needs_tool = pytest.mark.skipif(not HAVE_TOOL, reason=f"valgrind or the memtint-trace tool ({TOOL_FILE}) is missing: apt-get install valgrind; make build")


# --- the reference model: a direct transcription of the documented behaviour -------------------

class ReferenceHierarchy:
    """L1 + inclusive L2, LRU, write-back, write-allocate (docs/tracing.md), as plain lists."""

    def __init__(self, l1: int, l1_ways: int, l2: int, l2_ways: int, line: int = 64):
        self.line = line
        self.l1 = [[] for _ in range(l1 // (l1_ways * line))]  # each set: [line, dirty], MRU first
        self.l2 = [[] for _ in range(l2 // (l2_ways * line))]
        self.l1_ways, self.l2_ways = l1_ways, l2_ways

    @staticmethod
    def _find(s: list, line: int):
        return next((e for e in s if e[0] == line), None)

    def access(self, addr: int, write: bool):
        """Returns None (no L2 miss) or (line address, writeback address or None)."""
        line = addr // self.line
        s1 = self.l1[line % len(self.l1)]
        e = self._find(s1, line)
        if e:
            s1.remove(e)
            s1.insert(0, e)
            e[1] |= write
            return None
        miss = None
        s2 = self.l2[line % len(self.l2)]
        e2 = self._find(s2, line)
        if e2:
            s2.remove(e2)
            s2.insert(0, e2)
        else:
            writeback = None
            s2.insert(0, [line, False])
            if len(s2) > self.l2_ways:
                victim = s2.pop()
                s1v = self.l1[victim[0] % len(self.l1)]
                copy = self._find(s1v, victim[0])
                if copy:
                    s1v.remove(copy)
                if victim[1] or (copy and copy[1]):
                    writeback = victim[0] * self.line
            miss = (line * self.line, writeback)
        s1.insert(0, [line, write])
        if len(s1) > self.l1_ways:
            victim = s1.pop()
            if victim[1]:
                self._find(self.l2[victim[0] % len(self.l2)], victim[0])[1] = True
        return miss


@pytest.fixture(scope="module")
def cache_driver(tmp_path_factory) -> str:
    out = tmp_path_factory.mktemp("driver") / "cache_driver"
    sources = [os.path.join(NATIVE, f) for f in ("cache_driver.c", "mt_cache.c", "mt_mtt.c")]
    subprocess.run([os.environ.get("CC", "gcc"), "-O2", "-o", str(out), *sources], check=True)
    return str(out)


def _sequences():
    rng = random.Random(7)
    small = (512, 2, 2048, 4)  # 4 L1 sets, 8 L2 sets: evictions and back-invalidations on every path
    yield "random", small, [(rng.random() < 0.3, rng.randrange(64 * 64)) for _ in range(20000)]
    yield "stream", small, [(i % 3 == 0, 64 * i + 8) for i in range(3000)] * 2
    yield "conflicts", small, [(rng.random() < 0.5, 64 * 8 * rng.randrange(12)) for _ in range(5000)]
    yield "default-geometry", (32768, 8, 1 << 20, 16), [
        (rng.random() < 0.25, rng.randrange(1 << 22) if rng.random() < 0.5 else rng.randrange(1 << 16))
        for _ in range(200000)
    ]


@pytest.mark.parametrize("name,geometry,accesses", list(_sequences()), ids=lambda v: v if isinstance(v, str) else "")
def test_cache_filter_misses_and_writebacks_equal_the_reference_model(cache_driver, tmp_path, name, geometry, accesses):
    text = " ".join(map(str, geometry)) + " 64\n" + "".join(f"{'w' if w else 'r'} {a}\n" for w, a in accesses)
    mtt = tmp_path / "driver.mtt"
    got = subprocess.run([cache_driver, "-o", str(mtt)], input=text, capture_output=True, text=True, check=True).stdout
    ref = ReferenceHierarchy(*geometry)
    expected = []
    for i, (w, a) in enumerate(accesses):
        miss = ref.access(a, w)
        if miss:
            expected.append(f"{i} {miss[0]:#x}" + (f" {miss[1]:#x}" if miss[1] is not None else ""))
    assert got.splitlines() == expected
    assert any(len(line.split()) == 3 for line in expected), "the sequence must exercise writebacks"
    # The C encoder's .mtt decodes, through memtint's Rust reader, to the same records.
    convert_trace(mtt, tmp_path / "driver.txt", to="ramulator")
    decoded = [tuple(map(int, line.split())) for line in (tmp_path / "driver.txt").read_text().splitlines()]
    assert [d[1:] for d in decoded] == [tuple(int(x, 16) for x in e.split()[1:]) for e in expected]


# --- captures of real programs ----------------------------------------------------------------

def _build(tmp_path, name: str) -> str:
    out = str(tmp_path / name)
    subprocess.run([os.environ.get("CC", "gcc"), "-O1", "-pthread", "-o", out, os.path.join(PROGRAMS, name + ".c")], check=True)
    return out


def _records(path) -> list[tuple[int, ...]]:
    text = str(path) + ".txt"
    convert_trace(path, text, to="ramulator")
    with open(text) as f:
        return [tuple(map(int, line.split())) for line in f]


@needs_tool
def test_one_pass_over_n_lines_gives_n_misses_and_the_loops_instruction_gaps(tmp_path):
    program, lines = _build(tmp_path, "one_pass"), 40000  # 2.5 MB: larger than the 1 MB L2
    out = tmp_path / "pass"
    with open(tmp_path / "stdout", "w") as stdout:
        summary = capture_trace([program, str(lines)], out, stdout=stdout)
    base = int((tmp_path / "stdout").read_text().split()[0])
    assert summary["program_exit_status"] == 0 and len(summary["files"]) == 1
    records = _records(summary["files"][0])
    in_buffer = [i for i, r in enumerate(records) if base <= r[1] < base + 64 * lines]
    # memset's pass then ours: each line misses once in each, the buffer being 2.5x the L2.
    assert abs(len(in_buffer) - 2 * lines) <= 0.01 * lines
    first = in_buffer[-lines]
    read_pass = records[first:first + lines]
    assert [r[1] for r in read_pass] == [base + 64 * i for i in range(lines)], "one miss per line, in order"
    # 5 instructions per line, one of them the load: 4 bubbles, exactly, after the first.
    assert all(r[0] == 4 for r in read_pass[1:])
    # The L2 (16384 lines) was full of the memset's dirty lines: the pass's first misses evict them.
    writebacks = sum(len(r) == 3 for r in read_pass)
    assert abs(writebacks - 16384) <= 0.01 * 16384

    # Warm-up: skipping exactly the instructions before the pass's first load yields the same pass
    # records, because the warm-up filled the caches just as the full run did.
    skipped = sum(r[0] + 1 for r in records[:first + 1]) - 1
    with open(tmp_path / "warm.out", "w") as stdout:
        warm = capture_trace([program, str(lines)], tmp_path / "warm", warmup=skipped, stdout=stdout)
    warm_base = int((tmp_path / "warm.out").read_text().split()[0])
    # Valgrind's own allocations share the address space, so the buffer may move between runs:
    # compare addresses relative to it.
    relative = lambda rs, b: [(r[0],) + tuple(a - b for a in r[1:]) for r in rs]
    warm_records = relative(_records(warm["files"][0])[:lines], warm_base)
    assert warm_records[0] == (0,) + relative(read_pass, base)[0][1:]
    assert warm_records[1:] == relative(read_pass, base)[1:]
    # Limit: tracing stops after that many instructions and the program is ended.
    with open(tmp_path / "limit.out", "w") as stdout:  # the same output: the same instruction counts
        limited = capture_trace([program, str(lines)], tmp_path / "limit", warmup=skipped, limit=50000, stdout=stdout)
    assert limited["stopped_at_limit"] and limited["program_exit_status"] == 0
    assert 50000 <= limited["traced_instructions"] <= 50005  # checked at the next access
    assert len(_records(limited["files"][0])) == 10000  # 5 instructions a line


@needs_tool
def test_the_same_program_and_options_give_byte_identical_traces(tmp_path):
    """Single-threaded programs are deterministic under Valgrind. (Threads are serialised in an
    order that depends on the kernel's wake-ups, so a multi-threaded program's traces can differ
    in their synchronisation code between runs; docs/tracing.md.)"""
    program = _build(tmp_path, "one_pass")
    files = []
    for run in ("a", "b"):  # output prefixes of equal length: Valgrind's own allocations match too
        (tmp_path / run).mkdir()
        summary = capture_trace([program, "30000"], tmp_path / run / "t", stdout=subprocess.DEVNULL)
        files.append(open(summary["files"][0], "rb").read())
    assert len(files[0]) > 100_000 and files[0] == files[1]


@needs_tool
def test_a_script_that_execs_is_named_and_leaves_no_empty_trace(tmp_path):
    wrap = tmp_path / "wrap.sh"
    wrap.write_text("#!/bin/sh\nexec /bin/true\n")
    wrap.chmod(0o755)
    with pytest.raises(MemtintError, match=r"wrap.sh is a script \(#!\).*trace the real program"):
        capture_trace([str(wrap)], tmp_path / "wr", stdout=subprocess.DEVNULL)
    assert not (tmp_path / "wr.t1.mtt").exists()


@needs_tool
def test_a_warm_up_longer_than_the_program_is_said(tmp_path):
    # The run succeeds, but its trace has no records, which every reader refuses: said at once.
    r = subprocess.run([sys.executable, "-m", "memtint.cli", "trace", "-o", "tw", "--warmup", "1G", "--", "/bin/true"],
                       capture_output=True, text=True, cwd=tmp_path, timeout=120, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    assert "warning: nothing was traced: /bin/true ran" in r.stderr and "--warmup 1,000,000,000" in r.stderr


@needs_tool
def test_at_limit_continue_lets_the_program_finish_untraced(tmp_path):
    program, lines = _build(tmp_path, "one_pass"), 40000
    summary = capture_trace([program, str(lines)], tmp_path / "cont", limit=100_000, at_limit="continue",
                            stdout=subprocess.DEVNULL)
    assert summary["stopped_at_limit"] and summary["program_exit_status"] == 0
    assert 100_000 <= summary["traced_instructions"] <= 100_100
    assert summary["executed_instructions"] > 5 * lines  # the pass ran, untraced
    records = _records(summary["files"][0])
    assert sum(r[0] + 1 for r in records) <= summary["traced_instructions"]


@needs_tool
def test_a_captured_trace_round_trips_between_mtt_and_ramulator_text_and_compare_runs(tmp_path, memtint):
    program = _build(tmp_path, "one_pass")
    summary = capture_trace([program, "30000"], tmp_path / "rt", stdout=subprocess.DEVNULL)
    mtt = summary["files"][0]
    convert_trace(mtt, tmp_path / "a.txt", to="ramulator")
    header = convert_trace(tmp_path / "a.txt", tmp_path / "b.mtt")
    convert_trace(tmp_path / "b.mtt", tmp_path / "b.txt.gz", to="ramulator")
    assert (tmp_path / "a.txt").read_bytes() == gzip.decompress((tmp_path / "b.txt.gz").read_bytes())
    assert header["records"] == summary["threads"][0]["records"]
    assert header["instructions"] == summary["threads"][0]["record_instructions"]
    # memtint's Rust writer and the tool's C writer choose the same slots: identical bytes.
    assert (tmp_path / "b.mtt").read_bytes() == open(mtt, "rb").read()
    code, out, err = memtint("compare", "--machine", "i7-860", "--mix", f"{mtt},light", "--policies", "buddy,bpm",
                             "--instructions", "200000")
    assert code == 0, err
    assert "bpm" in out


@needs_tool
def test_each_thread_gets_its_own_trace_and_their_lines_add_up_to_the_single_threaded_run(tmp_path):
    """'The whole' is the same work done by one thread: the workers' slices are disjoint and each
    is larger than the L2, so with private caches every line misses once when written and once
    when read, whichever thread owns it and however the threads interleave; the per-thread read
    records must sum to the one-thread run's, and each worker's trace must hold its own slice's
    lines and no other's."""
    program, threads, lines = _build(tmp_path, "slices"), 3, 20000
    with open(tmp_path / "mt.out", "w") as stdout:
        mt = capture_trace([program, str(threads), str(lines)], tmp_path / "mt", stdout=stdout)
    bases = [int(x) for x in (tmp_path / "mt.out").read_text().split()]
    with open(tmp_path / "st.out", "w") as stdout:
        st = capture_trace([program, "1", str(threads * lines)], tmp_path / "st", stdout=stdout)
    st_base = int((tmp_path / "st.out").read_text().split()[0])
    assert [t["ordinal"] for t in mt["threads"]] == list(range(1, threads + 2))  # main + workers
    assert all(os.path.basename(f) == f"mt.t{i + 1}.mtt" for i, f in enumerate(mt["files"]))
    assert len({t["lwp"] for t in mt["threads"]}) == threads + 1
    worker_lines = []
    for t, base in zip(mt["files"][1:], bases):
        reads = [r[1] for r in _records(t)]
        mine = [a for a in reads if base <= a < base + 64 * lines]
        assert abs(len(mine) - 2 * lines) <= 0.01 * lines, "written then read: two misses per line"
        assert len(set(mine)) == lines
        others = [b for b in bases if b != base]
        assert not any(o <= a < o + 64 * lines for a in reads for o in others), "a slice in another thread's trace"
        worker_lines.append(len(mine))
    st_reads = [r[1] for r in _records(st["files"][1])]
    st_mine = [a for a in st_reads if st_base <= a < st_base + 64 * threads * lines]
    assert abs(sum(worker_lines) - len(st_mine)) <= 0.01 * len(st_mine)
    stats = [cpu_trace_stats(f) for f in mt["files"]]
    assert [s["records"] for s in stats] == [t["records"] for t in mt["threads"]]


@needs_tool
def test_long_captures_report_progress(tmp_path):
    from memtint.workloads import WORKLOADS_DIR

    program = str(tmp_path / "triad")
    subprocess.run([os.environ.get("CC", "gcc"), "-O2", "-pthread", "-o", program,
                    os.path.join(WORKLOADS_DIR, "src", "triad.c")], check=True)
    seen: list[tuple[int, float]] = []
    summary = capture_trace([program, "1000000", "1", "40"], tmp_path / "p", stdout=subprocess.DEVNULL,
                            progress=lambda n, s: seen.append((n, s)))
    assert summary["executed_instructions"] > 100_000_000
    counts = [n for n, _ in seen]
    assert counts == sorted(counts) and max(counts) >= 50_000_000  # the tool reports every 50 M


# --- error cases --------------------------------------------------------------------------------

@needs_tool
def test_a_program_that_fails_keeps_its_traces_and_exits_3(memtint, tmp_path):
    code, out, err = memtint("trace", "-o", str(tmp_path / "f"), "--", "sh", "-c", "exit 7")
    assert code == 3, err
    assert "exited with status 7" in err and "traces are kept" in err
    summary = json.loads((tmp_path / "f.summary.json").read_text())
    assert summary["program_failed"] and summary["program_exit_status"] == 7
    assert os.path.exists(tmp_path / "f.t1.mtt")
    cpu_trace_stats(tmp_path / "f.t1.mtt")  # complete and readable


@needs_tool
def test_a_program_killed_by_a_signal_keeps_its_traces_and_exits_3(memtint, tmp_path):
    code, out, err = memtint("trace", "-o", str(tmp_path / "k"), "--", "sh", "-c", "kill -SEGV $$")
    assert code == 3, err
    assert "killed by signal 11" in err
    summary = json.loads((tmp_path / "k.summary.json").read_text())
    assert summary["program_exit_status"] == -11 and summary["program_failed"]
    cpu_trace_stats(tmp_path / "k.t1.mtt")


@needs_tool
@pytest.mark.parametrize("args,needles", [
    (["--", "no-such-program-xyz"], ["no-such-program-xyz", "not found"]),
    (["--", "/no/such/path"], ["/no/such/path", "not found"]),
    (["-o", "/no/such/dir/t", "--", "true"], ["/no/such/dir", "does not exist"]),
    (["--l1-size", "1000", "--", "true"], ["L1 size 1000"]),
    (["--l2-size", "3M", "--", "true"], ["sets", "power of two"]),
    (["--l1-size", "64K", "--l2-size", "32K", "--", "true"], ["inclusive"]),
    (["--l1-size", "lots", "--", "true"], ["lots"]),
    (["--limit", "-5", "--", "true"], ["-5"]),
    (["--warmup", "2X", "--", "true"], ["2X", "instruction count"]),
    ([], ["no program to trace"]),
])
def test_bad_trace_requests_are_one_clear_error(memtint, args, needles):
    assert_one_error_line(memtint("trace", *args), *needles)


@pytest.mark.parametrize("command,kwargs,needle", [
    # A string was split into characters ("/: not an executable program"); a float limit reached
    # valgrind as "100000.0" ("valgrind failed (status 1)"); a float size failed inside with '&'.
    ("/bin/ls /", {}, "command: expected a list of the program and its arguments"),
    ([], {}, "command: no program to trace"),
    (["/bin/true", 3], {}, "command: expected the program and its arguments as strings"),
    (["/bin/true"], {"output": None}, "output: expected the traces' path prefix"),
    (["/bin/true"], {"limit": 1e5}, "limit: expected a whole number, got 100000.0"),
    (["/bin/true"], {"warmup": -1}, "warmup: expected a whole number of at least 0, got -1"),
    (["/bin/true"], {"l1_size": 32768.0}, "l1_size: expected a whole number"),
    (["/bin/true"], {"progress": "x"}, "progress: expected a function"),
])
def test_capture_trace_names_an_argument_of_the_wrong_kind(tmp_path, command, kwargs, needle):
    kwargs.setdefault("output", str(tmp_path / "t"))
    with pytest.raises(MemtintError, match=re.escape(needle)):
        capture_trace(command, **kwargs)
    assert list(tmp_path.iterdir()) == []


@needs_tool
def test_capture_trace_takes_paths_as_the_command(tmp_path):
    summary = capture_trace([Path(shutil.which("true"))], tmp_path / "p")  # was "PosixPath is not iterable"
    assert summary["program_exit_status"] == 0 and os.path.exists(tmp_path / "p.t1.mtt")


def test_missing_valgrind_says_how_to_install_it(tmp_path):
    env = dict(os.environ, PATH=str(tmp_path))
    result = subprocess.run([sys.executable, "-m", "memtint.cli", "trace", "--", "/bin/true"],
                            capture_output=True, text=True, env=env)
    assert_one_error_line((result.returncode, result.stdout, result.stderr), "apt-get install valgrind")


@needs_tool
def test_a_missing_tool_says_how_to_build_it(tmp_path):
    env = dict(os.environ, MEMTINT_VALGRIND_LIB=str(tmp_path))
    result = subprocess.run([sys.executable, "-m", "memtint.cli", "trace", "--", "/bin/true"],
                            capture_output=True, text=True, env=env)
    assert_one_error_line((result.returncode, result.stdout, result.stderr), "make build",
                          f"MEMTINT_VALGRIND_LIB={tmp_path}: holds no")
    # A setting that names nothing is the setting's fault, not a missing build.
    env = dict(os.environ, MEMTINT_VALGRIND_LIB=str(tmp_path / "nonexist"))
    result = subprocess.run([sys.executable, "-m", "memtint.cli", "trace", "--", "/bin/true"],
                            capture_output=True, text=True, env=env)
    assert_one_error_line((result.returncode, result.stdout, result.stderr), "nonexist: does not exist", "or unset it")


@needs_tool
def test_an_unwritable_output_directory_is_refused(memtint, tmp_path):
    """A read-only mount when running as root (modes do not stop root), else a 0500 directory."""
    locked = tmp_path / "locked"
    locked.mkdir()
    mounted = os.geteuid() == 0 and subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "ro,size=64k", "tmpfs", str(locked)], capture_output=True).returncode == 0
    if not mounted:
        locked.chmod(0o500)
    try:
        if os.access(locked, os.W_OK):
            pytest.skip("cannot make a directory unwritable here (root without mount)")
        assert_one_error_line(memtint("trace", "-o", str(locked / "t"), "--", "true"), "cannot be written")
    finally:
        if mounted:
            subprocess.run(["umount", str(locked)], check=True)
        else:
            locked.chmod(0o700)


@needs_tool
def test_a_full_disk_is_a_clear_error(tmp_path):
    """A 1 MB tmpfs fills up while the tool writes: its write error reaches the user as one line."""
    mnt = tmp_path / "small"
    mnt.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mnt)], capture_output=True).returncode:
        pytest.skip("cannot mount a small tmpfs here (needs root)")
    try:
        program = _build(tmp_path, "one_pass")
        env = dict(os.environ)
        result = subprocess.run([sys.executable, "-m", "memtint.cli", "trace", "-o", str(mnt / "t"), "--", program,
                                 "400000"], capture_output=True, text=True, env=env)
        assert_one_error_line((result.returncode, result.stdout, result.stderr), "no space left on device")
        assert not list(mnt.glob("t.t*.mtt")), "the partial trace is removed"
    finally:
        subprocess.run(["umount", str(mnt)], check=True)


# --- the workload suite -------------------------------------------------------------------------

def test_every_recipe_loads_and_the_committed_traces_are_small_and_readable():
    from memtint.workloads import COMMITTED_DIR, load_recipes

    recipes = load_recipes()
    assert len(recipes) >= 6
    committed = sorted(os.listdir(COMMITTED_DIR))
    sizes = [os.path.getsize(os.path.join(COMMITTED_DIR, f)) for f in committed]
    assert max(sizes) <= 8_000_000 and sum(sizes) <= 40_000_000
    for recipe in recipes:
        if recipe.get("commit"):
            mine = [f for f in committed if f.startswith(recipe["name"] + ".t")]
            assert mine, f"{recipe['name']} is marked commit = true but has no trace in workloads/traces"
    for f in committed:
        stats = cpu_trace_stats(os.path.join(COMMITTED_DIR, f))
        assert stats["records"] > 0 and stats["instructions"] > 0


@pytest.mark.parametrize("text,needles", [
    ('command = ["x"]\nwarmpu = 3\n', ["unknown field", "warmpu"]),
    ('command = "x"\n', ["'command'"]),
    ('command = ["x"]\nlimit = -1\n', ["'limit'"]),
    ('command = ["x"]\n[input]\ngenerator = "nope"\nsize = 1\nseed = 1\n', ["generator"]),
    ('command = [\n', ["bad.toml"]),
    # Every field is checked: one the capture ignores, or a wrong type, is not taken in silence.
    ('command = ["x"]\nthreads = 4\n', ["unknown field", "threads"]),
    ('command = ["x"]\ncommit = "yes"\n', ["'commit'", "'yes'"]),
    ('command = ["x"]\nsource = 3\n', ["'source'"]),
    ('command = ["x"]\nwarmup = true\n', ["'warmup'"]),
    ('command = ["x"]\n[input]\ngenerator = "text"\n', ["[input]", "size"]),
    ('command = ["x"]\n[input]\ngenerator = "text"\nsize = "big"\nseed = 1\n', ["[input] size", "'big'"]),
])
def test_bad_recipes_are_clear_errors(tmp_path, text, needles):
    from memtint.workloads import load_recipe

    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(MemtintError) as error:
        load_recipe(str(path))
    for needle in needles:
        assert needle in str(error.value)


def test_the_real_program_mix_runs_from_any_directory(memtint):
    code, out, err = memtint("compare", "--machine", "i7-860", "--mix", "real-intensive-4", "--policies", "buddy,bpm",
                             "--instructions", "300000")
    assert code == 0, err
    assert "bfs.t1.mtt.gz" in out or "bfs" in out


@needs_tool
def test_instruction_and_miss_counts_agree_with_cachegrind(tmp_path):
    """An independent check of the counting and of the filter on a real program: Valgrind's
    cachegrind, given the same L1D and LL geometry, counts the same instructions and nearly the
    same L1D and LL data misses (its LL also holds instruction lines and is not inclusive, hence
    the small tolerance)."""
    from memtint.workloads import GENERATORS

    bzip2 = shutil.which("bzip2")
    if bzip2 is None:
        pytest.skip("bzip2 is not installed")
    text = str(tmp_path / "in.txt")
    GENERATORS["text"](text, 20000, 1)
    out = tmp_path / "cg.out"
    cg = subprocess.run(["valgrind", "--tool=cachegrind", "--D1=32768,8,64", "--LL=1048576,16,64",
                         "--I1=32768,8,64", f"--cachegrind-out-file={out}", bzip2, "-9", "-c", text],
                        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=True)
    events = dict(zip(*(line.split()[1:] for line in out.read_text().splitlines()
                        if line.startswith(("events:", "summary:")))))
    summary = capture_trace([bzip2, "-9", "-c", text], tmp_path / "bz", stdout=subprocess.DEVNULL)
    t = summary["threads"][0]
    assert summary["executed_instructions"] == pytest.approx(int(events["Ir"]), rel=1e-4), cg.stderr
    assert t["l1_misses"] == pytest.approx(int(events["D1mr"]) + int(events["D1mw"]), rel=5e-3)
    assert t["l2_misses"] == pytest.approx(int(events["DLmr"]) + int(events["DLmw"]), rel=1e-2)


SPEC = os.path.join(HERE, "..", "..", "..", "shared", "traces", "spec2006")


@pytest.mark.skipif(not os.path.isdir(SPEC), reason="the SPEC traces (../shared/traces/spec2006) are not here")
def test_the_real_and_spec_mix_runs(memtint):
    code, out, err = memtint("compare", "--machine", "i7-860", "--mix", "real-spec-4", "--policies", "buddy,bpm",
                             "--instructions", "200000")
    assert code == 0, err
    assert "456.hm" in out
