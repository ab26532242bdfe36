"""The Linux commands (`memtint run`, `run-mix`, `inspect`) against bad or unusual input: reports
into devices, FIFOs and symlinks, outputs that cannot be written, colour and CPU ranges far
beyond the machine, statically linked programs, pages the kernel moved, zombies. Each refusal is
one line, exits 2, happens before any program runs, and leaves every input as it was (content,
file type and inode)."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import threading
import time

import pytest

from test_linux import CLI, PYTHON, ROOT, cli, needs_library, needs_root  # noqa: F401 - shared set-up


def snapshot(path) -> tuple:
    """What an input must keep: its type, inode, device number and content (through a symlink)."""
    st = os.stat(path)
    content = open(path, "rb").read() if stat.S_ISREG(st.st_mode) else None
    return stat.S_IFMT(os.lstat(path).st_mode), stat.S_IFMT(st.st_mode), st.st_ino, st.st_rdev, content


def refused(r: subprocess.CompletedProcess, message: str) -> None:
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert message in r.stderr, r.stderr
    assert "Traceback" not in r.stderr
    errors = [line for line in r.stderr.splitlines() if line.startswith("memtint: error:")]
    assert len(errors) == 1 and errors[0] == r.stderr.strip().splitlines()[-1], r.stderr


# ---- 1. libmemtint's report never replaces a device, a FIFO or a symlink ----------------------

@needs_root
@needs_library
def test_report_into_a_character_device_writes_into_it(tmp_path):
    node = tmp_path / "node"
    try:
        os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # /dev/null's numbers
    except OSError as error:
        pytest.skip(f"mknod failed: {error}")
    before = snapshot(node)
    r = cli("run", "--colors", "0-7", "--report", node, "--", "true")
    assert r.returncode == 0, r.stderr
    assert snapshot(node) == before  # it used to become a regular file holding the report
    assert "MEMTINT_REPORT" not in r.stderr


@needs_root
@needs_library
def test_report_into_a_fifo_goes_to_its_reader(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    before = snapshot(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(open(fifo, "rb").read()))
    reader.start()
    try:
        r = cli("run", "--colors", "0-7", "--report", fifo, "--", "true")
    finally:
        if reader.is_alive():  # release the reader if nothing opened the FIFO
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        reader.join(timeout=10)
    assert r.returncode == 0, r.stderr
    assert snapshot(fifo) == before
    assert json.loads(received[0])["page_size"] == 4096


@needs_root
@needs_library
def test_report_into_a_fifo_without_reader_warns_and_does_not_hang(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    before = snapshot(fifo)
    started = time.monotonic()
    r = cli("run", "--colors", "0-7", "--report", fifo, "--", "true", timeout=60)
    assert r.returncode == 0, r.stderr
    assert time.monotonic() - started < 30
    assert snapshot(fifo) == before
    assert f"MEMTINT_REPORT {fifo} is a FIFO that no process is reading: the report was not written" in r.stderr


@needs_root
@needs_library
def test_report_through_a_symlink_replaces_its_target_not_the_link(tmp_path):
    target = tmp_path / "target.json"
    target.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to("target.json")
    r = cli("run", "--colors", "0-7", "--report", link, "--", "true")
    assert r.returncode == 0, r.stderr
    assert link.is_symlink() and os.readlink(link) == "target.json"
    assert stat.S_ISREG(os.lstat(target).st_mode)
    assert json.loads(target.read_text())["colours"] == "0-7"


@needs_library
def test_report_that_cannot_be_written_or_is_an_input_is_refused_before_the_program_runs(tmp_path):
    marker = tmp_path / "ran"
    program = ["sh", "-c", f"touch {marker}"]
    refused(cli("run", "--colors", "0-7", "--report", "/proc/x", "--", *program),
            "--report /proc/x: is in /proc")
    data = tmp_path / "data.txt"
    data.write_text("keep me\n")
    before = snapshot(data)
    refused(cli("run", "--colors", "0-7", "--report", data, "--", "sh", "-c", f"touch {marker}", data),
            f"--report {data}: is an input of this command")
    assert snapshot(data) == before
    assert not marker.exists()


@needs_library
def test_a_file_a_machine_toml_names_is_an_input_of_run_inspect_and_run_mix(tmp_path):
    # The probe's preset names its mapping file beside it: run --report, inspect --json and
    # run-mix --json onto that file used to write over it (the machine was checked, not its files).
    r = cli("probe", "--simulate", "i7-860", "--no-progress", "--write-preset", tmp_path / "p.toml")
    assert r.returncode == 0, r.stderr
    mapping = tmp_path / "p.mapping.toml"
    before = snapshot(mapping)
    marker = tmp_path / "ran"
    for args, option in ((["run", "--colors", "0-7", "--report", mapping], "--report"),
                         (["run-mix", "--policy", "bpm", "--json", mapping], "--json")):
        refused(cli(*args[:1], "--machine", tmp_path / "p.toml", *args[1:], "--", "sh", "-c", f"touch {marker}",
                    *([":::", "true"] if args[0] == "run-mix" else [])),
                f"{option} {mapping}: is an input of this command")
    refused(cli("inspect", str(os.getpid()), "--machine", tmp_path / "p.toml", "--json", mapping),
            f"--json {mapping}: is an input of this command")
    assert snapshot(mapping) == before and not marker.exists()


# ---- 2. colour and CPU ranges are checked before they are expanded ----------------------------

@pytest.mark.parametrize("args, message", [
    (["run", "--colors", "0-4294967296", "--", "true"],
     "colours 32-4294967296 do not exist: the bank colour space of i7-860 has 32 colours (0-31)"),
    (["run", "--colors", "7,4294967296", "--", "true"],
     "colour 4294967296 does not exist: the bank colour space of i7-860 has 32 colours (0-31)"),
    (["run", "--colors", "0-3", "--cpus", "0-4294967296", "--", "true"], "CPUs "),
    (["run-mix", "--cpus", "0-4294967296", "--", "true", ":::", "true"], "CPUs "),
])
def test_huge_ranges_are_refused_at_once(args, message):
    started = time.monotonic()
    r = cli(*args, timeout=60)  # it used to run until memory ran out
    refused(r, message)
    assert time.monotonic() - started < 30
    if "--cpus" in args:
        assert f"-4294967296 do not exist: this machine has {os.sysconf('SC_NPROCESSORS_CONF')} CPUs" in r.stderr


# ---- 3, 7. outputs checked before any program runs; write errors name the file -----------------

def test_run_mix_json_that_cannot_be_written_is_refused_before_the_programs_run(tmp_path):
    markers = [tmp_path / "ran0", tmp_path / "ran1"]
    r = cli("run-mix", "--json", "/proc/x", "--", "sh", "-c", f"touch {markers[0]}", ":::",
            "sh", "-c", f"touch {markers[1]}")
    refused(r, "--json /proc/x: is in /proc")
    assert not any(m.exists() for m in markers)
    data = tmp_path / "in.txt"
    data.write_text("input\n")
    before = snapshot(data)
    refused(cli("run-mix", "--json", data, "--", "cat", data, ":::", "sh", "-c", f"touch {markers[0]}"),
            f"--json {data}: is an input of this command")
    assert snapshot(data) == before and not markers[0].exists()


@needs_root
def test_inspect_json_write_error_names_the_file():
    before = snapshot("/dev/full")
    sleeper = subprocess.Popen(["sleep", "60"])
    try:
        r = cli("inspect", sleeper.pid, "--json", "/dev/full")
    finally:
        sleeper.kill()
        sleeper.wait()
    refused(r, "--json /dev/full: cannot write: No space left on device")
    assert snapshot("/dev/full") == before


@needs_root
@needs_library
def test_run_mix_json_write_error_names_the_file():
    r = cli("run-mix", "--json", "/dev/full", "--", "true", ":::", "true", env={"MEMTINT_QUIET": "1"})
    refused(r, "--json /dev/full: cannot write: No space left on device")


# ---- 4. statically linked programs ---------------------------------------------------------------

def _static(tmp_path_factory, name: str, source: str):
    """``source`` built statically linked as ``name`` (skipped without a C compiler or libc.a)."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    where = tmp_path_factory.mktemp(name)
    (where / f"{name}.c").write_text(source)
    built = subprocess.run([cc, "-static", "-O1", str(where / f"{name}.c"), "-o", str(where / name)],
                           capture_output=True, text=True)
    if built.returncode != 0:
        pytest.skip(f"static libc is not installed (libc6-dev's libc.a): {built.stderr.strip()[-200:]}")
    return where / name


@pytest.fixture(scope="module")
def static_program(tmp_path_factory):
    """A tiny statically linked C program that leaves a marker when it runs."""
    return _static(tmp_path_factory, "prog", '#include <stdio.h>\n#include <stdlib.h>\n'
                   'int main(int c, char **v) { if (c > 1) fclose(fopen(v[1], "w")); '
                   'free(malloc(1 << 20)); return 0; }\n')


@needs_root
@needs_library
def test_a_statically_linked_program_is_refused_with_what_to_do(static_program, tmp_path):
    marker = tmp_path / "ran"
    before = snapshot(static_program)
    r = cli("run", "--colors", "0-7", "--", static_program, marker)
    refused(r, f"{static_program} is statically linked: its ELF has no program interpreter (PT_INTERP)")
    assert "LD_PRELOAD cannot load libmemtint" in r.stderr and "Build it dynamically" in r.stderr
    assert "libmemtint.a" in r.stderr
    assert not marker.exists() and snapshot(static_program) == before
    # A script is judged by its interpreter.
    script = tmp_path / "script"
    script.write_text(f"#!{static_program}\n")
    script.chmod(0o755)
    refused(cli("run", "--colors", "0-7", "--", script), f"{script} is a script run by {static_program}, which is "
            "statically linked")
    refused(cli("run-mix", "--", "true", ":::", static_program, marker), "is statically linked")
    assert not marker.exists()
    # A dynamically linked script interpreter is fine.
    ok = tmp_path / "ok"
    ok.write_text("#!/bin/sh\nexit 3\n")
    ok.chmod(0o755)
    assert cli("run", "--colors", "0-7", "--", ok, env={"MEMTINT_QUIET": "1"}).returncode == 3


# ---- 5. pages the kernel moved: the run warns, inspect counts them ------------------------------

KSM = "/sys/kernel/mm/ksm/run"
MERGED = """
import ctypes, sys, time
libc = ctypes.CDLL(None, use_errno=True)
libc.malloc.restype = ctypes.c_void_p
libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
pages = 64
base = (libc.malloc((pages + 1) * 4096) + 4095) & ~4095   # coloured by libmemtint
ctypes.memset(base, ord("k"), pages * 4096)               # identical pages: KSM merges them
assert libc.madvise(base, pages * 4096, 12) == 0, ctypes.get_errno()   # MADV_MERGEABLE
deadline = time.time() + 60
while int(open("/proc/self/ksm_merging_pages").read()) < pages - 1 and time.time() < deadline:
    time.sleep(0.05)
print(open("/proc/self/ksm_merging_pages").read().strip())
"""


@needs_root
@needs_library
@pytest.mark.skipif(not os.path.exists(KSM) or not os.path.exists("/proc/self/ksm_merging_pages"),
                    reason="the kernel has no KSM (CONFIG_KSM) to move pages on demand")
def test_pages_the_kernel_moved_are_warned_with_the_count_cause_and_remedy(tmp_path):
    # KSM is the one migration a test can cause at will: it replaces identical pages' frames by
    # one shared frame, as compaction or NUMA balancing give a page a new frame.
    with open(KSM) as f:
        old = f.read().strip()
    report = tmp_path / "report.json"
    try:
        with open(KSM, "w") as f:
            f.write("1")
        r = cli("run", "--colors", "0-15", "--report", report, "--", PYTHON, "-c", MERGED,
                env={"PYTHONMALLOC": "malloc"}, timeout=120)
    finally:
        with open(KSM, "w") as f:
            f.write(old)  # 1 -> 0 stops ksmd and leaves merged pages as they are
    assert r.returncode == 0, r.stderr
    merged = int(r.stdout.split()[-1])
    if merged == 0:
        pytest.skip("ksmd merged no page within 60 s")
    library = json.loads(report.read_text())
    moved = library["pages_found_moved"]
    assert moved >= merged - 1, (moved, merged)
    warning = (f"libmemtint: warning: the kernel moved {moved} heap pages to new frames during the run, "
               f"{library['pages_moved_out_of_colours']} of them out of the colours in use (compaction, NUMA "
               "balancing, DAMON and KSM migrate pages; mlock does not stop them): prevent it with sysctl "
               "vm.compact_unevictable_allowed=0 and kernel.numa_balancing=0, or use hugepage mode")
    assert warning in r.stderr, r.stderr


@needs_root
@needs_library
def test_pages_spilled_outside_the_colours_are_said_by_run_and_run_mix(tmp_path):
    # --spill let a run end with most of its heap outside the colours, status 0 and no word.
    env = {"MEMTINT_POOL_LIMIT": "2M", "PYTHONMALLOC": "malloc"}
    # one process (a pyenv shim is several); past the spill the limit can stop it, as it may
    grow = [sys.executable, "-c", "try:\n    l = [bytes(3000) for _ in range(20000)]\nexcept MemoryError:\n    pass"]
    report = tmp_path / "r.json"
    r = cli("run", "--colors", "0", "--spill", "--report", report, "--", *grow, env=env)  # 16 of the 512 frames
    assert r.returncode == 0, r.stderr
    spilled = json.loads(report.read_text())["pages_spilled"]
    assert spilled > 0
    assert f"libmemtint: warning: {spilled} heap pages came from other colours than the ones asked for" in r.stderr, \
        r.stderr
    r = cli("run-mix", "--policy", "cache-only", "--spill", "--json", tmp_path / "mix.json", "--", *grow, ":::",
            "true", ":::", "true", ":::", "true", env=env)
    assert r.returncode == 0, r.stderr
    spilled = json.loads((tmp_path / "mix.json").read_text())["programs"][0]["library_report"]["pages_spilled"]
    assert spilled > 0
    assert f"libmemtint: warning: {spilled} heap pages came from other colours" in r.stderr, r.stderr  # whole, if not
    r = cli("run", "--colors", "0-31", "--", *grow, env=env)  # all colours: nothing to spill, nothing said
    assert r.returncode == 0 and "came from other colours" not in r.stderr, r.stderr


FORKED = """
import os, sys
block = bytearray(8 << 20)          # through malloc: coloured
pid = os.fork()
if pid == 0:
    block[::4096] = b"w" * (len(block) // 4096)   # copy-on-write: new frames of any colour
    print(os.getpid(), flush=True)
    sys.stdin.readline()
    os._exit(0)
os.waitpid(pid, 0)
"""


@needs_root
@needs_library
def test_inspect_counts_heap_pages_outside_the_colours_and_warns(tmp_path):
    # A forked child's written pages are copied to frames of any colour (docs/libmemtint.md, fork).
    # Even colours fix the space's lowest bit (address bit 13), so any run of 4 frames is half
    # outside: on a fresh machine the kernel hands out long contiguous runs, and colours 0-15 (bit
    # 22 clear) held every copy of 4 MB-aligned runs (0 of 3576 outside, seen on a clean CI host).
    evens = ",".join(str(c) for c in range(0, 32, 2))
    runner = subprocess.Popen([*CLI, "run", "--colors", evens, "--", PYTHON, "-c", FORKED], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env={**os.environ, "PYTHONMALLOC": "malloc", "MEMTINT_QUIET": "1", "COLUMNS": "200"})
    try:
        child = runner.stdout.readline().strip()
        assert child, runner.stderr.read()
        as_json = cli("inspect", child, "--json", "-")
        as_text = cli("inspect", child)
    finally:
        runner.stdin.close()
        runner.wait(timeout=60)
    assert as_json.returncode == 0 and as_text.returncode == 0, as_json.stderr + as_text.stderr
    report = json.loads(as_json.stdout)
    outside = report["heap_pages_outside_colours"]
    assert outside == report["heap_pages"] - report["pages_in_colours"]["heap"]
    assert outside == report["pages_outside_colours"]["heap"]
    # About half the 2048 copies fall outside; how many varies with the frames the kernel picks.
    assert outside > 0, report["pages"]
    assert f"{outside} of the {report['heap_pages']} heap pages are outside the assigned colours {evens}" in \
        as_json.stderr
    assert "compaction, NUMA balancing, DAMON, KSM" in as_json.stderr and "fork()" in as_json.stderr
    assert "outside)" in as_text.stdout


@needs_root
def test_inspect_counts_pages_of_a_process_that_is_assigned_colours_but_not_coloured():
    env = {**os.environ, "MEMTINT_COLOR_MASKS": "0x2000,0x4000,0x8000,0x200000,0x400000", "MEMTINT_COLORS": "0"}
    env.pop("LD_PRELOAD", None)
    child = subprocess.Popen([PYTHON, "-c", "import sys; b = bytearray(16 << 20); b[::4096] = b'x' * 4096; "
                              "print('ready', flush=True); sys.stdin.readline()"],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert child.stdout.readline().strip() == "ready"
        r = cli("inspect", child.pid, "--json", "-")
    finally:
        child.stdin.close()
        child.wait()
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    outside = report["heap_pages_outside_colours"]
    assert outside >= 0.9 * 4096 * 31 / 32, report["pages"]  # colour 0 of 32 holds ~1/32 of them
    assert (f"libmemtint is not loaded (not in /proc/{child.pid}/maps): the process was never coloured" in r.stderr
            and f"nothing colours its pages ({outside} of the {report['heap_pages']} heap pages are outside colours 0)"
            in r.stderr), r.stderr


@pytest.fixture(scope="module")
def static_waiter(tmp_path_factory):
    """A statically linked C program that fills a 16 MB heap, prints its PID and waits for a line.
    The empty asm keeps the heap: a buffer never read is removed with its memset, even at -O1."""
    return _static(tmp_path_factory, "wait", '#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n'
                   '#include <unistd.h>\nint main(void) { char *p = malloc(16 << 20), line[8]; memset(p, 1, 16 << 20); '
                   '__asm__ volatile("" : : "r"(p) : "memory"); '
                   'printf("%d\\n", (int)getpid()); fflush(stdout); return !fgets(line, sizeof line, stdin); }\n')


@needs_root
@needs_library
def test_inspect_of_a_static_program_a_coloured_script_execd_says_it_was_never_coloured(static_waiter):
    # The exec'd program keeps LD_PRELOAD in its environment but the library never loads in it:
    # inspect judged by LD_PRELOAD and blamed compaction, fork or --spill for its pages.
    runner = subprocess.Popen([*CLI, "run", "--colors", "0-3", "--", "/bin/sh", "-c", f"exec {static_waiter}"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env={**os.environ, "MEMTINT_QUIET": "1"})
    try:
        pid = runner.stdout.readline().strip()
        assert pid, runner.stderr.read()
        with open(f"/proc/{pid}/environ", "rb") as f:
            assert b"LD_PRELOAD=" in f.read()  # what inspect went by
        r = cli("inspect", pid, "--json", "-")
    finally:
        runner.stdin.close()
        runner.wait(timeout=60)
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    outside = report["heap_pages_outside_colours"]
    assert report["heap_pages"] >= (16 << 20) // 4096, report["pages"]  # its filled heap is there to judge
    assert outside > report["heap_pages"] // 2, report["pages"]  # colours 0-3 of 32 hold ~1/8 of them
    assert (f"libmemtint is not loaded (not in /proc/{pid}/maps): the process was never coloured (LD_PRELOAD was "
            "removed, as env -u LD_PRELOAD does, or a statically linked program was exec'd") in r.stderr, r.stderr
    assert f"({outside} of the {report['heap_pages']} heap pages are outside colours 0-3)" in r.stderr
    assert "compaction" not in r.stderr and "fork()" not in r.stderr and report["allocator_arena"] is None


@needs_root
@needs_library
def test_a_report_a_program_never_coloured_did_not_write_names_that_cause(tmp_path):
    # env ran with libmemtint and exec'd `true` without it: the run said only that the program
    # skipped its exit handlers, of a program that exited normally, uncoloured.
    r = cli("run", "--colors", "0-3", "--report", tmp_path / "r.json", "--", "env", "-u", "LD_PRELOAD", "true",
            env={"MEMTINT_QUIET": "1"})
    assert r.returncode == 0 and not (tmp_path / "r.json").exists(), r.stderr
    assert (f"--report {tmp_path / 'r.json'} was not written: the program (PID ") in r.stderr, r.stderr
    assert ("exited with status 0 and either ended without running its exit handlers, where libmemtint writes its "
            "report (_exit, a signal; dash scripts end with _exit), or never loaded libmemtint (it removed "
            "LD_PRELOAD, as env -u LD_PRELOAD does, or exec'd a statically linked program), and then its heap was "
            "never coloured") in r.stderr, r.stderr


# ---- 6. zombies -------------------------------------------------------------------------------------

def test_inspecting_a_zombie_says_so():
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with open(f"/proc/{pid}/status") as f:
                if "\nState:\tZ" in f.read():
                    break
            time.sleep(0.01)
        else:
            pytest.fail("the child never became a zombie")
        r = cli("inspect", pid)
    finally:
        os.waitpid(pid, 0)
    refused(r, f"PID {pid} is a zombie (exited, not yet reaped by its parent): it has no memory to inspect")
    assert "kernel thread" not in r.stderr  # what it used to say



@needs_root
@pytest.mark.parametrize("step", ["maps", "pagemap", "frames"])
def test_a_process_that_exits_during_inspection_is_said_to_have_exited(monkeypatch, step):
    # It read "no process with PID N" (a process that was there a moment before) or, when its
    # page map was opened as it exited, "/proc/N/pagemap: No such process".
    import memtint.linux.inspect as inspect

    child = subprocess.Popen(["sleep", "60"])
    try:
        def ending(original):
            def call(*args, **kwargs):
                if child.poll() is None:
                    child.kill()
                    child.wait()
                return original(*args, **kwargs)
            return call

        target = {"maps": "read_maps", "pagemap": "open_pagemap", "frames": "read_frames"}[step]
        monkeypatch.setattr(inspect, target, ending(getattr(inspect, target)))
        with pytest.raises(inspect.LinuxError, match=f"PID {child.pid} exited while it was being inspected"):
            inspect.inspect_process(child.pid)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()


def test_numa_probe_says_when_its_figure_is_not_the_memorys(tmp_path):
    # 16 MiB arrays beside a 32 MiB LLC gave "35.1 GB/s" as the memory's; 64 threads on 2 CPUs
    # ran without a word.
    from memtint.linux.numa_probe import host_llc_bytes, size_warnings

    for index, (size, level) in enumerate((("32K", 1), ("1024K", 2), ("32768K", 3))):
        (tmp_path / f"index{index}").mkdir()
        (tmp_path / f"index{index}" / "size").write_text(size + "\n")
        (tmp_path / f"index{index}" / "level").write_text(f"{level}\n")
    llc = host_llc_bytes(str(tmp_path))
    assert llc == 32 << 20
    assert host_llc_bytes(str(tmp_path / "none")) is None
    small, crowded = size_warnings(16 << 20, 64, 2, llc)
    assert "--size 16 MiB" in small and "32 MiB last-level cache" in small and "--size 128M" in small
    assert "--threads 64" in crowded and "2 CPU(s)" in crowded
    assert size_warnings(128 << 20, 2, 2, llc) == [] and size_warnings(1 << 20, 1, 2, None) == []


def test_an_unknown_colour_space_lists_the_spaces_the_option_takes(memtint, clean_error):
    # The general vertical space is taken only with its bits (vertical:I,J,K), never bare.
    line = clean_error(memtint("inspect", str(os.getpid()), "--machine", "i7-860", "--space", "nosuch"),
                       "--space nosuch: unknown colour space")
    assert "c-vp" in line and "vertical:I,J,K" in line and "vertical," not in line, line


# ---- 6. Signals: a program gets what it would get without memtint, once -----------------------

#: A program that says what each SIGINT did: one is a clean shutdown (status 7), a second within
#: the next second and a half is the forced one (status 9).
TWICE = """
import signal, sys, time
count = 0
def on_int(*_):
    global count
    count += 1
    print("got one" if count == 1 else "got a second", flush=True)
signal.signal(signal.SIGINT, on_int)
print("ready", flush=True)
end = time.monotonic() + 60
while time.monotonic() < end and not count:
    time.sleep(0.02)
time.sleep(1.5)
print("survived" if count == 1 else "forced", flush=True)
sys.exit(7 if count == 1 else 9)
"""


def _on_a_terminal(args: list[str], programs: int) -> tuple[int, str]:
    """Run `memtint ARGS` on a pseudo-terminal, the programs TWICE; once every program is ready,
    type Ctrl-C with memtint stopped (SIGSTOP), so the terminal's SIGINT reaches each program
    before memtint can act on its own copy; then let memtint go on. Its status and the output."""
    import pty
    import select
    import signal

    pid, fd = pty.fork()
    if pid == 0:  # the child: memtint, as a shell starts it on a terminal
        os.execv(sys.executable, [sys.executable, "-m", "memtint.cli", *args])
    out = b""

    def read_until(done, seconds: float) -> None:
        nonlocal out
        deadline = time.monotonic() + seconds
        while not done() and time.monotonic() < deadline:
            if select.select([fd], [], [], 0.1)[0]:
                try:
                    data = os.read(fd, 4096)
                except OSError:
                    return
                if not data:
                    return
                out += data

    try:
        read_until(lambda: out.count(b"ready") >= programs, 60)
        assert out.count(b"ready") == programs, out.decode(errors="replace")
        os.kill(pid, signal.SIGSTOP)
        os.write(fd, b"\x03")
        read_until(lambda: out.count(b"got one") >= programs, 10)
        os.kill(pid, signal.SIGCONT)
        read_until(lambda: False, 4)
    finally:
        try:
            os.kill(pid, signal.SIGCONT)
        except ProcessLookupError:
            pass
        _, status = os.waitpid(pid, 0)
        os.close(fd)
    return os.waitstatus_to_exitcode(status), out.decode(errors="replace").replace("\r", "")


@needs_root
@needs_library
def test_a_ctrl_c_on_the_terminal_reaches_run_s_program_once(tmp_path):
    # The terminal sends SIGINT to the whole foreground group, the program included: memtint
    # passing its own copy on as well gave the program a second Ctrl-C it was never sent.
    script = tmp_path / "twice.py"
    script.write_text(TWICE)
    code, out = _on_a_terminal(["run", "--colors", "0-15", "--", PYTHON, str(script)], 1)
    assert "got one" in out and "got a second" not in out and "survived" in out, out
    assert code == 7, (code, out)


@needs_root
@needs_library
def test_a_ctrl_c_on_the_terminal_reaches_each_run_mix_program_once(tmp_path):
    script = tmp_path / "twice.py"
    script.write_text(TWICE)
    code, out = _on_a_terminal(["run-mix", "--", PYTHON, str(script), ":::", PYTHON, str(script)], 2)
    assert out.count("survived") == 2 and "got a second" not in out, out
    assert code == 7, (code, out)


@needs_root
@needs_library
@pytest.mark.parametrize("signum, status", [("SIGTERM", 143), ("SIGHUP", 129)])
def test_a_signal_sent_to_run_alone_is_passed_on(tmp_path, signum, status):
    # kill PID (or a hangup of memtint alone) reaches only memtint: the program must get it, and
    # its status is the command's; before, a SIGHUP ended memtint and left the program running.
    import signal

    proc = subprocess.Popen([*CLI, "run", "--colors", "0-15", "--", "sleep", "60"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not _children_named(proc.pid, "sleep"):
            time.sleep(0.05)
        sleeper = _children_named(proc.pid, "sleep")
        assert sleeper, proc.stderr.read() if proc.poll() is not None else "sleep did not start"
        proc.send_signal(getattr(signal, signum))
        assert proc.wait(timeout=20) == status, proc.stderr.read()
        assert not os.path.exists(f"/proc/{sleeper[0]}") or _state(sleeper[0]) == "Z"
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def _children_named(pid: int, name: str) -> list[int]:
    from memtint.linux.inspect import process_stats

    found = []
    for child, fields in process_stats():
        if fields[1:2] == [str(pid)]:
            try:
                with open(f"/proc/{child}/comm", encoding="utf-8") as f:
                    if f.read().strip() == name:
                        found.append(child)
            except OSError:
                pass
    return found


def _state(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "gone"


@needs_root
@needs_library
def test_run_mix_stopped_before_its_programs_start_starts_none_and_leaves_no_directory(tmp_path):
    # A stop while run-mix prepares (here: its trial start of the library, made slow) ended
    # memtint at once and left its reports' directory in TMPDIR.
    import signal

    slow = tmp_path / "bin"
    slow.mkdir()
    (slow / "true").write_text("#!/bin/sh\nsleep 3\n")
    (slow / "true").chmod(0o755)
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    marker = tmp_path / "ran"
    env = {**os.environ, "PATH": f"{slow}:{os.environ['PATH']}", "TMPDIR": str(temporary)}
    proc = subprocess.Popen([*CLI, "run-mix", "--", "touch", str(marker), ":::", "touch", str(marker)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env,
                            start_new_session=True)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not _children_named(proc.pid, "true"):
        time.sleep(0.02)
    assert _children_named(proc.pid, "true"), proc.stderr.read() if proc.poll() is not None else "no trial start"
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=20) == 143
    assert "memtint: terminated" in proc.stderr.read()
    time.sleep(3.5)  # the trial's sleep has ended, and nothing was started after the stop
    assert list(temporary.iterdir()) == [] and not marker.exists()


@needs_library
def test_an_inherited_memtint_report_is_not_the_library_s_report(tmp_path):
    # MEMTINT_REPORT in the user's environment reached the library: it wrote over the file named
    # there (here the program's own input) and, empty, ended the program with status 2.
    data = tmp_path / "data.txt"
    data.write_text("3\n1\n2\n")
    before = snapshot(data)
    r = cli("run", "--colors", "0-15", "--", "sort", data, env={"MEMTINT_REPORT": str(data)})
    assert r.returncode == 0 and r.stdout == "1\n2\n3\n", r.stderr
    assert snapshot(data) == before
    r = cli("run", "--colors", "0-15", "--", "sh", "-c", "exit 3", env={"MEMTINT_REPORT": ""})
    assert r.returncode == 3, r.stderr


@needs_root
@needs_library
def test_a_run_mix_program_that_cannot_start_stops_the_others_and_says_why(tmp_path):
    # A script without #! failed exec with ENOEXEC, an OSError run-mix did not catch: the
    # programs started before it ran on alone after memtint had exited, and the message was
    # Python's "Exec format error".
    script = tmp_path / "no-shebang.sh"
    script.write_text("echo hi\n")
    script.chmod(0o755)
    marker = tmp_path / "outlived"
    r = cli("run-mix", "--", PYTHON, "-c", f"import time; time.sleep(3); open({str(marker)!r}, 'w')", ":::", script)
    refused(r, f"{script}: cannot be executed: it is neither a program for this machine nor a script starting "
               f"with a #! line (run a shell script as: sh {script})")
    time.sleep(4)
    assert not marker.exists(), "the first program ran on after run-mix failed"
    refused(cli("run", "--colors", "0-7", "--", script), f"{script}: cannot be executed")
    refused(cli("run", "--colors", "0-7", "--", ""), "the program's name is empty")


def test_kill_tree_kills_a_program_s_children_too(tmp_path):
    # run-mix killed only the program it started when a later one could not start: a script's
    # commands (or a version manager's shim's helpers) ran on, and wrote their library report
    # into the directory memtint had removed, after its error line.
    from memtint.linux.launch import kill_tree

    pids = tmp_path / "pids"
    process = subprocess.Popen(["sh", "-c", f"sleep 60 & sh -c 'sleep 60 & echo $! >> {pids}; wait' & "
                                            f"echo $! >> {pids}; wait"])
    deadline = time.monotonic() + 10
    while (not pids.exists() or len(pids.read_text().split()) < 2) and time.monotonic() < deadline:
        time.sleep(0.02)
    children = [int(p) for p in pids.read_text().split()]
    kill_tree(process)
    assert process.returncode == -9

    def alive(pid: int) -> bool:
        try:
            with open(f"/proc/{pid}/stat") as f:
                return f.read().rsplit(")", 1)[1].split()[0] != "Z"  # a zombie waits for init to reap it
        except OSError:
            return False

    deadline = time.monotonic() + 5
    while any(alive(p) for p in children) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not any(alive(p) for p in children), children


@needs_library
def test_a_report_path_longer_than_the_library_takes_is_refused_before_the_program_runs(tmp_path):
    # libmemtint keeps MEMTINT_REPORT in 512 bytes: a longer (valid) path passed run's checks,
    # then the library refused it before main, and the program never ran (status 2).
    deep = tmp_path / ("d" * 200) / ("e" * 200)
    deep.mkdir(parents=True)
    marker = tmp_path / "ran"
    report = deep / ("r" * 120 + ".json")
    assert len(os.fsencode(str(report))) > 511
    refused(cli("run", "--colors", "0-7", "--report", report, "--", "touch", marker),
            "libmemtint takes a report path of at most 511 bytes")
    assert not marker.exists()


@needs_root
@needs_library
def test_run_mix_does_not_pass_a_child_s_library_report_off_as_the_program_s(tmp_path):
    # Every process of a program writes the program's report path: a shell that ran sort and
    # ended with _exit left sort's report, which run-mix gave as the shell's library_report.
    out = tmp_path / "mix.json"
    r = cli("run-mix", "--json", out, "--", "sh", "-c", "sort /etc/passwd > /dev/null", ":::", "sort", "/etc/passwd")
    assert r.returncode == 0, r.stderr
    result = json.loads(out.read_text())
    shell, alone = result["programs"]
    assert shell["library_report"] is None
    assert any("program 0 (sh): the library report left is PID" in w and "(sort)" in w for w in result["warnings"])
    assert "memtint: warning: program 0 (sh): the library report left is PID" in r.stderr
    assert alone["library_report"]["pid"] == alone["pid"]


@needs_root
@needs_library
@pytest.mark.skipif(shutil.which("strace") is None, reason="needs strace")
def test_a_library_message_is_one_write_so_programs_sharing_stderr_cannot_tear_it(tmp_path):
    # mt_say wrote "libmemtint: ", the text and the newline apart: on run-mix's shared stderr
    # another program's line landed between them.
    env = {"MEMTINT_POOL_LIMIT": "2M", "PYTHONMALLOC": "malloc"}
    grow = [sys.executable, "-c", "try:\n    l = [bytes(3000) for _ in range(20000)]\nexcept MemoryError:\n    pass"]
    trace = tmp_path / "writes"
    r = cli("run", "--colors", "0", "--spill", "--", "strace", "-f", "-qq", "-e", "trace=write", "-s", "2048",
            "-o", trace, *grow, env=env)
    assert r.returncode == 0, r.stderr
    writes = [line for line in trace.read_text().splitlines() if '"libmemtint: ' in line]
    assert writes, trace.read_text()[-2000:]
    spill = [w for w in writes if "heap pages came from other colours" in w]
    assert spill and all(w.split('"', 1)[1].rsplit('"', 1)[0].endswith("\\n") for w in writes), writes
