"""Colouring on real Linux (issue 5, commands part): `memtint inspect`, `memtint run`,
`memtint run-mix` against real processes and the real libmemtint.

Reading frame numbers needs root (CI runs as root); tests that need it skip with that reason
otherwise. libmemtint-based tests need the library built (`make build`). The library's held-aside
frames are checked against its own exit report, taken when nothing has allocated since the
inspection (programs are inspected while blocked writing their output).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from memtint.linux import native
from memtint.linux.colour_spec import format_list, parse_list
from memtint.linux.errors import LinuxError
from memtint.linux.hypervisor import NOTED, detect_hypervisor
from memtint.linux.native import library_path
from memtint.linux.maps import parse_maps

ROOT = os.geteuid() == 0
needs_root = pytest.mark.skipif(not ROOT, reason="reading frame numbers needs root or CAP_SYS_ADMIN (CI runs as root)")
PYTHON = shutil.which("python3") or sys.executable


def _library_built() -> bool:
    try:
        native.library_path()
        return True
    except LinuxError:
        return False


needs_library = pytest.mark.skipif(not _library_built(), reason="libmemtint is not built (make build)")
CLI = [sys.executable, "-m", "memtint.cli"]


def cli(*args: str, env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *map(str, args)], capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "COLUMNS": "200", **(env or {})}, stdin=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def many_mappings():
    """libmemtint maps coloured pages one by one: a 200 MB heap needs more than the default 65530
    mappings (docs/linux.md, system settings). Raised for the module, restored after."""
    path = "/proc/sys/vm/max_map_count"
    if not ROOT:
        yield
        return
    with open(path) as f:
        old = f.read().strip()
    if int(old) >= 262144:
        yield
        return
    try:
        with open(path, "w") as f:
            f.write("1048576")
    except OSError as error:
        pytest.skip(f"vm.max_map_count is {old} and cannot be raised here ({error}); "
                    "run sysctl vm.max_map_count=1048576 first")
    yield
    with open(path, "w") as f:
        f.write(old)


# ---- pure parts -------------------------------------------------------------------------------

def test_colour_lists_parse_and_print_back():
    assert parse_list("0-3,8,10-11") == [0, 1, 2, 3, 8, 10, 11]
    assert format_list([11, 0, 1, 2, 3, 8, 10]) == "0-3,8,10-11"
    for bad in ("", "a", "3-1", "1,,2", "-2"):
        with pytest.raises(LinuxError, match="colour list|empty"):
            parse_list(bad)


def test_maps_classify_heap_stack_file_other_and_the_libmemtint_arena():
    from memtint.linux.maps import mark_allocator_arena

    text = "\n".join([
        "55d0c0000000-55d0c0001000 r-xp 00000000 08:01 1234 /usr/bin/prog",
        "55d0c1000000-55d0c1021000 rw-p 00000000 00:00 0 [heap]",
        "7f0000000000-7f0000100000 rw-p 00000000 00:00 0 ",
        "7f1000000000-7f5000000000 ---p 00000000 00:00 0 ",
        "7f5000000000-7f5000200000 rw-p 00000000 00:00 0 ",
        "7f5000200000-7f9000000000 ---p 00000000 00:00 0 ",
        "7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0 [stack]",
        "7ffd10000000-7ffd10002000 r--p 00000000 00:00 0 [vvar]",
        "7ffd10002000-7ffd10004000 r-xp 00000000 00:00 0 [vdso]",
    ])
    maps = parse_maps(text)
    assert [m.kind for m in maps] == ["file", "heap", "heap", "other", "heap", "other", "stack", "other", "other"]
    arena = mark_allocator_arena(maps)
    assert arena == (0x7F1000000000, 0x7F9000000000)
    # With libmemtint, anonymous memory outside its arena is the program's own: uncoloured "other".
    assert [m.kind for m in maps][1:5] == ["heap", "other", "other", "heap"]
    with pytest.raises(LinuxError, match="line 1"):
        parse_maps("garbage")
    hugetlb = parse_maps("7f6000000000-7f6000200000 rw-p 00000000 00:0f 4242 /anon_hugepage (deleted)\n"
                         "7f6000200000-7f6000400000 rw-s 00000000 00:0f 4243 /anon_hugepage (deleted)")
    assert [m.kind for m in hugetlb] == ["heap", "other"]



@needs_library
def test_libmemtint_is_loaded_when_mapped_not_when_ld_preload_names_it(tmp_path):
    from memtint.linux.maps import libmemtint_mapped

    libc = "7f2000000000-7f2000200000 r-xp 00000000 08:01 11 /usr/lib/x86_64-linux-gnu/libc.so.6"
    lib = library_path()
    # A static program exec'd by a coloured script keeps LD_PRELOAD and maps no library.
    assert not libmemtint_mapped(parse_maps(libc), lib)
    assert libmemtint_mapped(parse_maps(f"{libc}\n7f3000000000-7f3000040000 r-xp 00000000 08:01 12 {lib}"))
    assert libmemtint_mapped(parse_maps("7f3000000000-7f3000040000 r-xp 00000000 08:01 12 /old/libmemtint.so "
                                        "(deleted)"))
    # MEMTINT_LIB may be called anything: what LD_PRELOAD names counts when it is libmemtint.
    renamed = tmp_path / "mt.so"
    shutil.copy(lib, renamed)
    mapped = parse_maps(f"7f3000000000-7f3000040000 r-xp 00000000 08:01 12 {renamed}")
    assert libmemtint_mapped(mapped, f"{renamed}:/x/other.so") and not libmemtint_mapped(mapped)
    other = tmp_path / "other.so"
    other.write_bytes(b"\x7fELF not libmemtint")
    assert not libmemtint_mapped(parse_maps(f"7f3000000000-7f3000040000 r-xp 00000000 08:01 12 {other}"), str(other))

def test_partition_of_bpm_is_the_simulators_and_disjoint():
    from memtint.linux import policy_partition

    p = policy_partition("i7-860", "bpm", 2)
    a, b = (set(x["colours"]) for x in p["processes"])
    assert a and b and not a & b and len(a | b) == 32
    assert not set(p["processes"][0]["banks"]) & set(p["processes"][1]["banks"])
    assert p["layout"]["space"]["masks_hex"] == ["0x2000", "0x4000", "0x8000", "0x200000", "0x400000"]


# ---- errors a user can cause --------------------------------------------------------------------

def test_missing_library_is_a_clear_error():
    r = cli("run", "--colors", "0-3", "--", "true", env={"MEMTINT_LIB": "/nonexistent/libmemtint.so"})
    assert r.returncode == 2 and "MEMTINT_LIB=/nonexistent/libmemtint.so: no such file" in r.stderr
    # A file that is no shared library: ld.so would ignore it and the program run uncoloured.
    r = cli("run", "--colors", "0-3", "--", "true", env={"MEMTINT_LIB": "/etc/passwd"})
    assert r.returncode == 2 and "MEMTINT_LIB=/etc/passwd: not a shared library" in r.stderr, r.stderr
    r = cli("run", "--colors", "0-3", "--", "true", env={"MEMTINT_LIB": "/tmp"})
    assert r.returncode == 2 and "MEMTINT_LIB=/tmp: is a directory" in r.stderr, r.stderr
    # Another shared library preloads fine and colours nothing.
    other = next((p for p in ("/lib/x86_64-linux-gnu/libm.so.6", "/usr/lib/x86_64-linux-gnu/libm.so.6",
                              "/lib64/libm.so.6") if os.path.isfile(p)), None)
    if other:
        r = cli("run", "--colors", "0-3", "--", "true", env={"MEMTINT_LIB": other})
        assert r.returncode == 2 and "a shared library without libmemtint's functions" in r.stderr, r.stderr


@pytest.mark.parametrize("args, message", [
    (["run", "--colors", "0-3,x", "--", "true"], "bad colour list '0-3,x'"),
    (["run", "--colors", "30-40", "--", "true"],
     "colours 32-40 do not exist: the bank colour space of i7-860 has 32 colours (0-31)"),
    (["run", "--colors", "0", "--space", "banks", "--", "true"], "--space banks: unknown colour space"),
    (["run", "--colors", "0", "--space", "channel", "--", "true"], "i7-860-bpm-plus"),
    (["run", "--colors", "0", "--machine", "no-such", "--", "true"], "no-such"),
    # A path is a file: its absence is said, not "unknown mapping" with the preset list.
    (["run", "--colors", "0", "--mapping", "/no/such/mapping", "--", "true"],
     "dram.mapping: /no/such/mapping: No such file or directory"),
    (["run", "--colors", "0"], "no program given"),
    (["inspect", "999999999"], "no process with PID 999999999"),
    (["inspect", "1", "--machine", "no-such"], "no-such"),
    (["run-mix", "--policy", "buddy", "--", "true", ":::", "true"], "does not partition memory"),
    (["run-mix", "--policy", "bmp", "--", "true", ":::", "true"], "unknown placement policy 'bmp'"),
    (["run-mix", "--", "true", ":::"], "empty program"),
    (["run-mix", "--policy", "bpm", "--", "true"], "one program: policy 'bpm' partitions memory between programs"),
    # One program under a policy that does not partition: not told to give two (which it refuses too).
    (["run-mix", "--policy", "random-interleave", "--", "true"], "does not partition memory"),
    # 33 programs, 32 colours: the ways out are run-mix's, not the simulator's os.groups.
    (["run-mix", "--policy", "bpm", "--", *["true", ":::"] * 32, "true"], "run fewer programs or pick a policy"),
    (["run", "--tier-policy", "local", "--", "/tmp"], "/tmp: is a directory, not a program"),
    (["run", "--colors", "0-7", "--verify", "--verify-buffer-mb", "0", "--", "true"], "--verify-buffer-mb 0"),
    # Checked before the program runs (libmemtint could only warn at its exit).
    (["run", "--colors", "0", "--report", "/nonexistent/r.json", "--", "true"], "directory /nonexistent does not exist"),
    (["run", "--colors", "0", "--report", "/tmp", "--", "true"], "is a directory"),
    # A flag of the other way of running is refused, not ignored.
    (["run", "--colors", "0", "--period", "1", "--", "true"], "--period only applies with --tier-policy"),
    (["run", "--tier-policy", "local", "--report", "r.json", "--mode", "hugepage", "--", "true"],
     "--mode, --report apply to colouring"),
    (["run", "--tier-policy", "local", "--period", "5", "--", "true"], "local has no use for it"),
    (["run", "--tier-policy", "bw-local", "--migration-limit", "5", "--", "true"], "(bw-migration) read it"),
    (["run", "--tier-policy", "bw-local", "--period", "nan", "--", "true"], "--period nan: give a number of seconds"),
    # 10^19 s overflowed the clock's wait: an internal error after the program had started.
    (["run", "--tier-policy", "bw-random", "--period", "18446744073709551616", "--", "true"],
     "between 0.001 and 86400 (a day)"),
    (["run", "--tier-policy", "bw-local", "--bandwidths", "0=3,0=4", "--", "true"], "node0 is given twice"),
    (["run", "--space", "vertical", "--colors", "0", "--", "true"], "--space vertical: the general vertical space"),
    (["inspect", "1", "--space", "vertical"], "give vertical:I,J,K (e.g. vertical:1,2,1)"),
    (["run", "--space", "vertical:1,2", "--colors", "0", "--", "true"], "colour space 'vertical:1,2': give vertical:I,J,K"),
    (["run", "--space", "vertical:9,2,1", "--colors", "0", "--", "true"],
     "colour space 'vertical:9,2,1': (i, j, k) = (9, 2, 1) asks for 9 B-bits"),
    # A digit int() refuses was an internal error; (0, 0, 0) was blamed on the mapping.
    (["run", "--space", "vertical:\u00b2,2,1", "--colors", "0", "--", "true"], "give vertical:I,J,K"),
    (["run", "--space", "vertical:99999999999,2,1", "--colors", "0", "--", "true"], "give vertical:I,J,K"),
    (["run", "--space", "vertical:0,0,0", "--colors", "0", "--", "true"],
     "colour space 'vertical:0,0,0': (0, 0, 0) asks for no colour bit"),
    (["numa-probe", "--nodes", ""], "--nodes: the value is empty"),
    (["numa-probe", "--threads", "-1"], "--threads -1: give at least 1"),
    (["numa-probe", "--threads", "0"], "--threads 0: give at least 1"),
    (["numa-probe", "--repeats", "0"], "--repeats 0"),
    (["numa-probe", "--size", "1"], "--size 1: each of the"),
    # Refused before the arrays are bound: beyond it, an allocation error or the OOM killer.
    (["numa-probe", "--size", "100000G"], "--size 100000G: the two arrays need 204800000 MiB"),
    (["refresh-probe", "--plot", "rp.txt"], "--plot rp.txt: give a file name ending in one of .png"),
    (["refresh-probe", "--plot", "rp"], "--plot rp: give a file name ending"),
])
def test_bad_input_is_one_line_and_status_2(args, message):
    r = cli(*args)
    assert r.returncode == 2, r.stderr
    assert message in r.stderr and "Traceback" not in r.stderr, r.stderr


@needs_root
@needs_library
@pytest.mark.parametrize("argv", [
    # The report named inside a shell string, as a --opt=FILE value or glued to a short option.
    ["/bin/sh", "-c", "cat in.txt"], ["/bin/dd", "if=in.txt", "of=/dev/null"], ["/bin/grep", "-fin.txt", "/dev/null"],
])
def test_run_report_over_a_file_named_inside_an_argument_is_refused(tmp_path, argv):
    (tmp_path / "in.txt").write_text("hello\n")
    r = subprocess.run([*CLI, "run", "--colors", "0-7", "--report", "in.txt", "--", *argv], capture_output=True,
                       text=True, cwd=tmp_path, timeout=120, stdin=subprocess.DEVNULL)
    assert r.returncode == 2 and "--report in.txt: is an input of this command" in r.stderr, r.stderr
    assert (tmp_path / "in.txt").read_text() == "hello\n"


@needs_root
@needs_library
def test_a_report_the_program_never_wrote_is_said(tmp_path):
    # dash's exit is _exit: libmemtint's exit handler, which writes the report, never runs.
    stale = tmp_path / "stale.json"
    stale.write_text('{"stale": true}')
    os.utime(stale, (time.time() - 60, time.time() - 60))
    r = cli("run", "--colors", "0-7", "--report", stale, "--", "/bin/sh", "-c", "exit 3")
    assert r.returncode == 3
    assert f"--report {stale} was not written (the file there is older: it is not this run's)" in r.stderr, r.stderr
    r = cli("run", "--colors", "0-7", "--report", tmp_path / "fresh.json", "--", "true")
    assert r.returncode == 0 and "was not written" not in r.stderr and (tmp_path / "fresh.json").exists()


@needs_root
@needs_library
def test_a_setting_libmemtint_refuses_is_said_before_the_program_starts(tmp_path):
    # The library's own exit 2 could not be told from a program that exits with 2.
    marker = tmp_path / "ran"
    r = cli("run", "--colors", "0-7", "--", "/bin/sh", "-c", f"touch {marker}",
            env={**os.environ, "MEMTINT_POOL_LIMIT": "bogus"})
    assert r.returncode == 2 and not marker.exists()
    assert r.stderr.strip().endswith("memtint: error: libmemtint cannot start with these settings: "
                                     "MEMTINT_POOL_LIMIT='bogus': expected a size like 512M or 4G"), r.stderr


@needs_root
@needs_library
@pytest.mark.parametrize("argv, env, refusal", [
    # run --verify's: only its privilege check came before the warnings
    (["run", "--verify", "--space", "llc", "--colors", "0-3", "--", "true"], {}, "does not partition banks"),
    (["run", "--verify", "--verify-buffer-mb", "0", "--colors", "0-3", "--", "true"], {}, "give at least 1 MiB"),
    (["run", "--verify", "--colors", "0-3", "--", "/no/such/program"], {}, "command not found"),
    # run_coloured's own, checked after the CLI had said its warnings
    (["run", "--colors", "0-3", "--", "/no/such/program"], {}, "/no/such/program: command not found"),
    (["run", "--colors", "0-3", "--", "true"], {"MEMTINT_POOL_LIMIT": "bogus"}, "MEMTINT_POOL_LIMIT='bogus'"),
    (["run", "--colors", "0-3", "--", "true"], {"MEMTINT_LIB": "/no/such/lib.so"}, "MEMTINT_LIB=/no/such/lib.so"),
    # run-mix's, checked as its programs started (after one had started, for a missing one)
    (["run-mix", "--policy", "cache-only", "--", "true", ":::", "true", ":::", "true", ":::", "/no/such/program"], {},
     "/no/such/program: command not found"),
    (["run-mix", "--policy", "cache-only", "--", "true", ":::", "true", ":::", "true", ":::", "true"],
     {"MEMTINT_POOL_LIMIT": "bogus"}, "MEMTINT_POOL_LIMIT='bogus'"),
])
def test_every_refusal_of_run_and_run_mix_comes_before_any_warning(argv, env, refusal):
    # colours 0-3 of 32 (2 of 8 for cache-only's four programs) always have a cost warning to say
    r = cli(*argv, env=env)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("memtint: error: ") and refusal in lines[0], r.stderr



def test_the_map_count_warning_names_where_a_heap_of_pages_moved_alone_stops(tmp_path):
    # A page moved alone is two mappings (its own and the hole it leaves in staging): one colour
    # in 32 fails between 150 and 200 MB under 65530 (docs/libmemtint.md), not near 255 MB.
    from memtint.linux.launch import map_count_warning

    limit = tmp_path / "max_map_count"
    limit.write_text("65530\n")
    warning = map_count_warning("auto", str(limit))
    assert "vm.max_map_count is 65530" in warning and "from about 127 MB" in warning
    assert map_count_warning("hugepage", str(limit)) is None
    limit.write_text("262144\n")
    assert map_count_warning("pagemap", str(limit)) is None

@needs_root
@needs_library
def test_run_coloured_gives_its_warnings_to_the_caller_before_the_program_starts():
    from memtint.linux import run_coloured

    said: list[str] = []
    run = run_coloured(["sh", "-c", "echo started >&2"], "0-3", on_warning=said.append,
                       on_start=lambda r: said.append("started"))
    assert run.exit_code == 0 and said[-1] == "started" and said[:-1] == run.warnings
    assert any("4 of 32 colours: each MB of heap takes about 8 MB of frames" in w for w in run.warnings), said


def test_a_cpython_program_without_pythonmalloc_malloc_is_found(tmp_path):
    from memtint.linux.launch import pymalloc_warning

    said = pymalloc_warning(["python3", "-c", "pass"], {"PATH": os.environ["PATH"]})
    assert said and said.startswith("python3 runs CPython") and "PYTHONMALLOC=malloc" in said
    for value in ("malloc", "malloc_debug"):
        assert pymalloc_warning([PYTHON, "-c", "pass"], {"PYTHONMALLOC": value}) is None
    assert pymalloc_warning(["python3.12"], {"PYTHONMALLOC": "pymalloc"})
    # through env, in the environment env gives it
    assert pymalloc_warning(["env", "PYTHONMALLOC=malloc", "python3"], {}) is None
    assert pymalloc_warning(["/usr/bin/env", "-u", "PYTHONMALLOC", "python3"], {"PYTHONMALLOC": "malloc"})
    # a script, by its #! interpreter (env's program included)
    for line in (f"#!{sys.executable}", "#!/usr/bin/env python3", "#!/usr/bin/env -S python3 -u"):
        script = tmp_path / "script"
        script.write_text(f"{line}\nprint(1)\n")
        script.chmod(0o755)
        assert pymalloc_warning([str(script)], {"PATH": os.environ["PATH"]}), line
    script.write_text("#!/bin/sh\necho python3\n")
    for argv in ([str(script)], ["true"], ["sh", "-c", "python3 -c pass"], ["pypy3"]):
        assert pymalloc_warning(argv, {"PATH": os.environ["PATH"]}) is None, argv


def test_cpython_with_e_or_i_is_said_to_ignore_pythonmalloc(tmp_path):
    # -E and -I make CPython ignore PYTHONMALLOC: the warning told them to set it (or, set, said nothing).
    from memtint.linux.launch import pymalloc_warning

    path = {"PATH": os.environ["PATH"]}
    for argv, option in [(["python3", "-E", "-c", "pass"], "-E"), (["python3", "-Es", "x.py"], "-E"),
                         (["python3", "-sE"], "-E"), (["python3", "-IE", "x.py"], "-I"), (["python3", "-b", "-I"], "-I"),
                         (["python3", "-W", "error", "-E"], "-E"), (["env", "python3", "-E", "x.py"], "-E")]:
        for env in ({**path, "PYTHONMALLOC": "malloc"}, path):
            said = pymalloc_warning(argv, env)
            assert said and said.startswith(f"{argv[0]} runs CPython with {option}"), (argv, said)
            assert "which ignores PYTHONMALLOC" in said and "no -X option chooses the allocator" in said, said
            assert f"drop {option}" in said and "small objects stay uncoloured" in said, said
            assert ("(set to malloc here)" in said) == ("PYTHONMALLOC" in env), said
            assert "PYTHONMALLOC=malloc memtint" not in said  # one warning, not the plain hint as well
    assert "-s -P keep the rest of its isolation" in pymalloc_warning(["python3", "-I"], path)
    # E or I as an option's argument, after -c/-m, a script or "--" is the program's, not CPython's
    for argv in (["python3", "-W", "E"], ["python3", "-WE"], ["python3", "-XE"], ["python3", "-cE"],
                 ["python3", "-m", "x", "-E"], ["python3", "x.py", "-E"], ["python3", "--", "-E"],
                 ["python3", "--check-hash-based-pycs", "-E"]):
        assert pymalloc_warning(argv, {"PYTHONMALLOC": "malloc"}) is None, argv
    # a #! line's options, the interpreter's or env -S's
    script = tmp_path / "script"
    for line in (f"#!{sys.executable} -E", f"#!{sys.executable} -sI", "#!/usr/bin/env -S python3 -Es"):
        script.write_text(f"{line}\nprint(1)\n")
        script.chmod(0o755)
        said = pymalloc_warning([str(script)], {**path, "PYTHONMALLOC": "malloc"})
        assert said and " on its #! line, which ignores PYTHONMALLOC (set to malloc here)" in said, (line, said)
        assert " from the #! line" in said, said
    script.write_text(f"#!{sys.executable} -s\nprint(1)\n")
    assert pymalloc_warning([str(script), "-E"], {**path, "PYTHONMALLOC": "malloc"}) is None  # the script's argument


@needs_root
@needs_library
def test_run_of_cpython_warns_that_pymalloc_stays_uncoloured_and_leaves_pythonmalloc_alone():
    from memtint.linux import run_coloured

    printed = [PYTHON, "-c", "import os; print(os.environ.get('PYTHONMALLOC'))"]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONMALLOC"}
    r = subprocess.run([*CLI, "run", "--colors", "0-15", "--", *printed], capture_output=True, text=True, env=env,
                       timeout=120, stdin=subprocess.DEVNULL)
    assert r.returncode == 0 and r.stdout.strip() == "None", r.stderr  # not set behind the user's back
    said = [line for line in r.stderr.splitlines() if "runs CPython" in line]
    assert said == [f"memtint: warning: {PYTHON} runs CPython, whose objects of up to 512 bytes (most of them) come "
                    "from arenas it maps itself (pymalloc), not from malloc: they stay uncoloured; to colour them, give "
                    "it PYTHONMALLOC=malloc (PYTHONMALLOC=malloc memtint ..., or env PYTHONMALLOC=malloc before the "
                    "program)"], r.stderr
    r = cli("run", "--colors", "0-15", "--", *printed, env={"PYTHONMALLOC": "malloc"})
    assert r.returncode == 0 and "runs CPython" not in r.stderr, r.stderr
    r = cli("run-mix", "--policy", "bpm", "--json", "-", "--", *printed, ":::", "true", env={"PYTHONMALLOC": ""})
    assert r.returncode == 0, r.stderr
    assert [w for w in json.loads(r.stdout)["warnings"] if "runs CPython" in w][0].startswith(f"program 0: {PYTHON}")
    # the API's caller is told too
    run = run_coloured(printed, "0-15", on_warning=lambda w: None)
    assert any("runs CPython" in w for w in run.warnings) == (os.environ.get("PYTHONMALLOC") not in
                                                               ("malloc", "malloc_debug")), run.warnings


@needs_root
@needs_library
def test_a_report_a_child_left_is_not_taken_for_the_programs(tmp_path):
    # bash ran a child (its report written, fresh), then was killed: the file held /bin/true's
    # report and nothing was said.
    report = tmp_path / "r.json"
    r = cli("run", "--colors", "0-7", "--report", report, "--", "/bin/bash", "-c", "/bin/true; kill -TERM $$")
    assert r.returncode == 143
    child = json.loads(report.read_text())
    assert child["comm"] == "true" and child["pid"] > 0
    assert (f"--report {report} is the report of PID {child['pid']} (true), a process the program started, not the "
            "program's: the program (PID ") in r.stderr and "killed by signal 15" in r.stderr, r.stderr
    # With %p, the program's own file is the one that counts.
    r = cli("run", "--colors", "0-7", "--report", tmp_path / "p.%p.json", "--", "/bin/bash", "-c",
            "/bin/true; kill -TERM $$")
    assert r.returncode == 143 and "was not written (the reports beside it are of the processes it started: 1)" \
        in r.stderr, r.stderr


@needs_root
@needs_library
def test_run_mix_says_when_a_program_left_no_library_report():
    # A program killed by a signal left no report, and run-mix said nothing: its library_report null, unexplained.
    r = cli("run-mix", "--policy", "bpm", "--json", "-", "--", "sh", "-c", "kill -KILL $$", ":::", "true")
    assert r.returncode == 137, r.stderr
    result = json.loads(r.stdout)
    assert [p["library_report"] is None for p in result["programs"]] == [True, False]
    said = [w for w in result["warnings"] if "left no library report" in w]
    assert len(said) == 1 and said[0].startswith("program 0 (sh): left no library report: the program (PID ") and \
        "killed by signal 9" in said[0] and said[0].endswith("its library_report is null"), said
    assert f"memtint: warning: {said[0]}" in r.stderr


def test_the_general_vertical_space_is_named_with_its_bits():
    # `vertical` needed its (i, j, k), which only colour_layout's argument could give.
    from memtint.api import MemtintError
    from memtint.linux.layout import colour_layout

    named = colour_layout("i7-860", "vertical:1,2,1")
    assert named.masks == colour_layout("i7-860", "vertical", vertical=(1, 2, 1)).masks
    assert named.colours == 16
    # what inspect's report and the commands' lines call it: the bits, not the engine's bare `vertical`
    assert named.space == "vertical:1,2,1" and named.data["space"]["description"].startswith("vertical:1,2,1: 16 ")
    assert colour_layout("i7-860", "vertical", vertical=(1, 0, 0)).space == "vertical:1,0,0"
    with pytest.raises(MemtintError, match="give the bits once"):
        colour_layout("i7-860", "vertical:1,2,1", vertical=(1, 2, 1))


@needs_library
def test_run_mix_takes_the_policy_s_os_options():
    # --policy vertical needs [os.vertical] bits, which no option of run-mix gave.
    r = cli("run-mix", "--policy", "vertical", "--", "true", ":::", "true")
    assert r.returncode != 0 and "os.vertical.bits" in r.stderr, r.stderr
    refusals = {("dram.channels=2",): "--set dram.channels: run-mix takes only [os] options",
                ("os.policy=bpm",): "--set os.policy: the policies come from --policy",
                ("os.groups=[[0, 1]]",): "os.groups: run-mix gives each program its own colour set",
                ("os.nope=1",): "--set os.nope=1: invalid configuration: os.nope: unknown key",
                # The simulator's over-time mechanisms: accepted before, and nothing on Linux did them.
                ("os.dynamic=dynamic-bpm",): "os.dynamic: run-mix applies the policy's colour sets once",
                ("os.migration=damon",): "os.migration: run-mix applies",
                # Keys bpm reads as frames are handed out, and profiles it never reads: the engine
                # says which keys shape bpm's sets.
                ("os.frame_order=ascending",): "os.frame_order: run-mix applies the policy's colour sets once, at "
                                               "the start; only the options that shape bpm's apply (os.exclude_bits, "
                                               "os.colours, os.colour_split); os.frame_order is the simulator's",
                ('os.profiles=[{mpki=1, rbh=0.5, bandwidth=1}, {mpki=1, rbh=0.5, bandwidth=1}]',): "os.profiles: "
                                                                                                   "run-mix applies"}
    for settings, said in refusals.items():
        r = cli("run-mix", "--policy", "bpm", *(a for s in settings for a in ("--set", s)), "--", "true", ":::", "true")
        assert r.returncode == 2 or r.returncode == 1, r.stderr
        assert said in r.stderr and "Traceback" not in r.stderr, r.stderr
    # The partition is the simulator's for the same [os] table.
    from memtint.linux import policy_partition
    for policy, os_table, settings in [("vertical", {"vertical": {"bits": [1, 2, 1]}}, ["os.vertical.bits=[1,2,1]"]),
                                       ("bpm", {"colour_split": "strided"}, ["os.colour_split=strided"])]:
        expected = policy_partition("i7-860", policy, 2, os=os_table)
        if not ROOT:
            continue  # the partition is computed; running it needs frame numbers
        r = cli("run-mix", "--policy", policy, *(a for s in settings for a in ("--set", s)), "--json", "-", "--",
                "true", ":::", "true")
        assert r.returncode == 0, r.stderr
        got = [p["colours"] for p in json.loads(r.stdout)["programs"]]
        assert got == [p["colours"] for p in expected["processes"]], (got, expected)
    assert policy_partition("i7-860", "bpm", 2, os={"colour_split": "strided"})["processes"] != \
        policy_partition("i7-860", "bpm", 2)["processes"]  # the option changes the partition


@needs_root
@needs_library
@pytest.mark.skipif(detect_hypervisor() is None, reason="the warning is about a virtual machine; this is not one")
def test_a_coloured_pipeline_is_told_it_runs_in_a_vm_once():
    said = "libmemtint: warning: running under a hypervisor"
    pipeline = ["--", "sh", "-c", "echo a | cat | cat"]
    for r in (cli("run", "--colors", "0-7", *pipeline), cli("run-mix", "--policy", "bpm", *pipeline, ":::", "true")):
        assert r.returncode == 0, r.stderr
        assert r.stderr.count("memtint: warning: running in a virtual machine") == 1 and said not in r.stderr, r.stderr
    # Started without memtint, the library still says it (in each process: it cannot know the others).
    env = dict(os.environ, LD_PRELOAD=library_path(), MEMTINT_COLOR_MASKS="0x2000", MEMTINT_COLORS="0")
    env.pop(NOTED, None)
    r = subprocess.run(["sh", "-c", "echo a | cat"], env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and said in r.stderr, r.stderr


@needs_root
@needs_library
def test_run_mix_prints_a_command_line_as_it_is(tmp_path):
    # "[/red]" used to be read as a closing markup tag: an internal error after the programs ran.
    r = cli("run-mix", "--policy", "bpm", "--", "/bin/echo", "[/red]", ":::", "/bin/true")
    assert r.returncode == 0, r.stderr
    assert "[/red]" in r.stdout and "internal error" not in r.stderr


@needs_root
@needs_library
def test_run_of_a_missing_program_or_cpu_says_so(tmp_path):
    r = cli("run", "--colors", "0-15", "--", "/no/such/program")
    assert r.returncode == 2 and "/no/such/program: command not found" in r.stderr
    # A script that exists, whose #! interpreter does not: the interpreter is what is missing.
    script = tmp_path / "s.sh"
    script.write_text("#!/no/such/interpreter\n")
    script.chmod(0o755)
    r = cli("run", "--colors", "0-15", "--", str(script))
    assert r.returncode == 2 and "its interpreter /no/such/interpreter (the #! line) does not exist" in r.stderr
    r = cli("run", "--colors", "0-15", "--cpus", "4096", "--", "true")
    assert r.returncode == 2 and "CPU 4096 does not exist: this machine has" in r.stderr, r.stderr


@needs_root
@needs_library
def test_run_exits_with_the_programs_status_on_the_chosen_cpu():
    cpu = max(os.sched_getaffinity(0))
    r = cli("run", "--colors", "0-15", "--cpus", str(cpu), "--", PYTHON, "-c",
            "import os, sys; print(sorted(os.sched_getaffinity(0)), os.environ['MEMTINT_COLORS']); sys.exit(7)")
    assert r.returncode == 7, r.stderr
    assert r.stdout.split() == [f"[{cpu}]", "0-15"]


def test_run_node_is_checked_against_the_nodes_with_memory(tmp_path):
    from memtint.linux.launch import check_node, coloured_environment
    from memtint.linux.layout import colour_layout
    from memtint.linux.numa import NumaSystem
    from memtint.linux.numa_fake import FakeNuma

    # this machine: the first node without memory is refused before anything runs, by name
    have = NumaSystem().memory_nodes()
    absent = min(set(range(64)) - set(have))
    r = cli("run", "--colors", "0-3", "--node", str(absent), "--", "true")
    assert r.returncode == 2 and f"node {absent} does not exist or has no memory" in r.stderr, r.stderr
    assert f"the nodes with memory here are {format_list(have)}" in r.stderr and "Traceback" not in r.stderr
    r = cli("run", "--tier-policy", "weighted-interleave", "--node", "0", "--", "true")
    assert r.returncode == 2 and "--node applies to coloured frames" in r.stderr, r.stderr
    # a fake two-node machine (no second node here): node 1 passes, node 2 is named
    fake = FakeNuma.create(str(tmp_path / "fake"))
    check_node(1, fake)
    check_node(-1, fake)
    with pytest.raises(LinuxError, match="node 2 does not exist or has no memory: the nodes with memory here are 0-1"):
        check_node(2, fake)
    layout = colour_layout("i7-860", "bank")
    env = coloured_environment(layout, [0, 1], node=1, base={"MEMTINT_NODE": "5"})
    assert env["MEMTINT_NODE"] == "1" and env["MEMTINT_COLORS"] == "0-1"
    assert "MEMTINT_NODE" not in coloured_environment(layout, [0], base={"MEMTINT_NODE": "5"})


@needs_root
@needs_library
def test_run_on_node_0_binds_the_coloured_heap_there(tmp_path):
    report = tmp_path / "r.json"
    r = cli("run", "--colors", "0-15", "--node", "0", "--report", report, "--", PYTHON, "-c",
            "import os; d = {i: str(i) for i in range(100000)}; print(os.environ['MEMTINT_NODE'])")
    assert r.returncode == 0 and r.stdout.split() == ["0"], r.stderr
    data = json.loads(report.read_text())
    assert data["node"] == 0 and set(data["pages_delivered_per_node"]) == {"0"}
    assert data["pages_delivered_per_node"]["0"] > 0


def test_hugepage_mode_takes_colour_bits_above_the_hugepage_when_frame_numbers_are_readable(tmp_path, monkeypatch):
    # libmemtint reads each hugepage's base frame for bits >= 21 (shim.c, choose_mode): refused
    # only without the privilege, and for that reason (it was refused always, even as root).
    from memtint.linux import launch
    from memtint.linux.errors import PrivilegeError
    from memtint.linux.layout import colour_layout

    free = tmp_path / "free_hugepages"
    free.write_text("4\n")
    monkeypatch.setattr(launch, "HUGEPAGES_FREE", str(free))
    bank = colour_layout("i7-860", "bank")
    monkeypatch.setattr(launch, "frame_access_error", lambda: None)
    launch.check_can_colour(bank, "hugepage")
    monkeypatch.setattr(launch, "frame_access_error", lambda: "frame numbers need root")
    with pytest.raises(PrivilegeError, match=r"hugepage mode with colour bits b21, b22 .*frame number.*root or "
                       r"CAP_SYS_ADMIN"):
        launch.check_can_colour(bank, "hugepage")
    launch.check_can_colour(colour_layout("i7-860", "cache-only"), "hugepage")  # b16-b18: no frame numbers needed


def test_hugepage_mode_without_free_hugepages_is_refused_before_the_program_runs(tmp_path, monkeypatch):
    # libmemtint stopped the program at its first allocation with status 2, which a program's own
    # exit status 2 cannot be told from.
    from memtint.linux import launch
    from memtint.linux.layout import colour_layout

    layout = colour_layout("i7-860", "cache-only")
    free = tmp_path / "free_hugepages"
    monkeypatch.setattr(launch, "HUGEPAGES_FREE", str(free))
    free.write_text("0\n")
    with pytest.raises(launch.LinuxError, match="no free 2 MB hugepages .*free_hugepages is 0.*--mode pagemap"):
        launch.check_can_colour(layout, "hugepage")
    free.write_text("4\n")
    launch.check_can_colour(layout, "hugepage")
    monkeypatch.setattr(launch, "HUGEPAGES_FREE", str(tmp_path / "none"))  # the kernel does not say: not refused
    launch.check_can_colour(layout, "hugepage")


# ---- privilege (acceptance 5) -------------------------------------------------------------------

@pytest.mark.parametrize("argv, instead", [(["run", "--colors", "0-3", "--", "true"], "--space cache-only"),
                                           (["run-mix", "--", "true", ":::", "true"], "--policy cache-only")])
def test_without_frame_numbers_the_refusal_is_said_alone_and_names_what_works(monkeypatch, capsys, argv, instead):
    # Cost and vm.max_map_count warnings came first, and the error offered hugepage mode, then
    # said only pagemap mode could colour the space.
    from memtint import cli as memtint_cli
    from memtint.linux import launch

    monkeypatch.setattr(launch, "frame_access_error", lambda: "frame numbers need root")
    assert memtint_cli.main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("memtint: error: frame numbers need root or CAP_SYS_ADMIN"), err
    assert f"uses b21, b22: colour within the hugepage with --mode hugepage and {instead}" in err[0]
    assert "only pagemap mode" not in err[0]


@needs_root
@pytest.mark.skipif(shutil.which("setpriv") is None, reason="setpriv (util-linux) is not installed")
def test_unprivileged_commands_say_what_to_do():
    sleeper = subprocess.Popen(["sleep", "30"])
    try:
        as_nobody = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", *CLI]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
        probe = subprocess.run([*as_nobody, "--version"], capture_output=True, text=True, env=env, timeout=60)
        if probe.returncode != 0:
            pytest.skip(f"the user nobody cannot run memtint from this checkout: {probe.stderr.strip()[-200:]}")
        for args in (["inspect", str(os.getpid())], ["run", "--colors", "0-3", "--", "true"],
                     ["run-mix", "--", "true", ":::", "true"]):
            r = subprocess.run([*as_nobody, *args], capture_output=True, text=True, env=env, timeout=60)
            assert r.returncode != 0, (args, r.stdout)
            assert "root or CAP_SYS_ADMIN" in r.stderr, (args, r.stderr)
            # Colouring has a way without frame numbers; inspect has none (it was offered run's).
            assert ("hugepage" in r.stderr) == (args[0] != "inspect"), (args, r.stderr)
            assert "Traceback" not in r.stderr
    finally:
        sleeper.kill()
        sleeper.wait()


# ---- inspect on a plain process -----------------------------------------------------------------

@needs_root
def test_inspect_space_of_a_process_with_its_own_colours_is_said_to_have_no_effect():
    from memtint.linux.launch import coloured_environment
    from memtint.linux.layout import colour_layout

    env = coloured_environment(colour_layout("i7-860", "bank"), [0, 1], base=dict(os.environ))
    child = subprocess.Popen([PYTHON, "-c", "import sys; print('ready', flush=True); sys.stdin.readline()"],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert child.stdout.readline().strip() == "ready"
        with_space = cli("inspect", str(child.pid), "--space", "llc", "--json", "-")
        without = cli("inspect", str(child.pid), "--json", "-")
    finally:
        child.stdin.close()
        child.wait()
    assert with_space.returncode == 0, with_space.stderr
    assert any(w.startswith("--space llc: the process has its own colours") for w in json.loads(with_space.stdout)["warnings"])
    assert not any("--space" in w for w in json.loads(without.stdout)["warnings"])


@needs_root
@needs_library
@pytest.mark.parametrize("how", [CLI, [str(Path(sys.executable).parent / "memtint")]])
def test_inspect_of_memtint_run_inspects_its_program(how):
    # A shell's $! after `memtint run ... &` is the wrapper: it was inspected, quietly, as a
    # process with no colours.
    wrapper = subprocess.Popen([*how, "run", "--colors", "0-3", "--", "sleep", "30"], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 30
        while time.time() < deadline:
            r = cli("inspect", str(wrapper.pid), "--json", "-")
            if r.returncode == 0:
                break
            time.sleep(0.2)  # the program is not started yet
        assert r.returncode == 0, r.stderr
        report = json.loads(r.stdout)
        assert report["pid"] != wrapper.pid and report["command"].startswith("sleep 30")
        assert report["assigned_colours_text"] == "0-3"
        assert f"PID {wrapper.pid} is `memtint run`, not the program it started: this is its program, PID " \
               f"{report['pid']}" in report["warnings"]
    finally:
        wrapper.terminate()
        wrapper.wait(timeout=30)


@needs_root
def test_inspect_of_an_uncoloured_process_adds_up():
    child = subprocess.Popen([PYTHON, "-c", "import sys; b = bytearray(32 << 20); b[::4096] = b'x' * (32 << 8); "
                              "print('ready', flush=True); sys.stdin.readline()"],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "ready"
        r = cli("inspect", str(child.pid), "--json", "-")
        assert r.returncode == 0, r.stderr
        report = json.loads(r.stdout)
    finally:
        child.stdin.close()
        child.wait()
    assert report["heap_pages"] >= 32 << 8  # the 32 MiB bytearray, touched page by page
    assert report["heap_fraction_in_colours"] is None and report["assigned_colours"] is None
    assert sum(report["pages"].values()) == report["resident_pages"]
    for key in ("by_colour", "by_bank", "by_channel", "by_rank", "by_llc_colour"):
        rows = report[key]
        assert sum(row["total"] for row in rows) == report["resident_pages"], key
        for cls in ("heap", "stack", "file", "other"):
            assert sum(row[cls] for row in rows) == report["pages"][cls], (key, cls)
    assert len(report["by_colour"]) <= 32 and len(report["by_llc_colour"]) <= 128
    # On the i7-860 a page spans both channels (bit 6): one row covering channels 0 and 1.
    assert [row["ids"] for row in report["by_channel"]] == [[0, 1]]
    assert report["bits_inside_page"]["channel"] == [6]
    # A scattered 32 MiB lands in (almost) every bank pair.
    assert len(report["by_bank"]) >= 24
    with open("/proc/cpuinfo") as f:
        if " hypervisor" in f.read():  # a guest: the warning must be there
            assert any("virtual machine" in w and "guest-physical" in w for w in report["warnings"])


# ---- unmodified programs under memtint run (acceptance 3) ---------------------------------------

def _program_pid(runner: subprocess.Popen, program: str, timeout: float = 60) -> int:
    """The PID of the program `memtint run` started (its child running ``program``; before it,
    `run` starts `true` once with the library's settings)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{runner.pid}/task/{runner.pid}/children") as f:
                children = f.read().split()
        except OSError:
            children = []
        for child in children:
            try:
                with open(f"/proc/{child}/cmdline", "rb") as f:
                    first = f.read().split(b"\0")[0].decode(errors="replace")
            except OSError:
                continue
            if os.path.basename(first) == os.path.basename(program):
                return int(child)
        if runner.poll() is not None:
            raise AssertionError(f"memtint run exited early: {runner.stderr.read()}")
        time.sleep(0.02)
    raise AssertionError("memtint run started no program")


def _wait_blocked_writing(pid: int, timeout: float = 120) -> None:
    """Wait until the program sits in write(2) on its full stdout pipe (sort: after reading all its
    input; gzip: mid-stream): its data is then resident and it allocates nothing until the test
    reads its output. Any of its threads may be the writer (GNU sort merges on worker threads)."""
    deadline = time.monotonic() + timeout
    seen: set[str] = set()
    while time.monotonic() < deadline:
        try:
            tasks = os.listdir(f"/proc/{pid}/task")
        except OSError:
            raise AssertionError(f"program {pid} exited before blocking on its output") from None
        for task in tasks:
            try:
                with open(f"/proc/{pid}/task/{task}/syscall") as f:
                    fields = f.read().split()
            except OSError:
                continue
            if fields[:2] == ["1", "0x1"]:  # write(1, ...) on x86-64
                return
            if fields:
                seen.add(fields[0])
        time.sleep(0.05)
    raise AssertionError(f"program {pid} never blocked writing its output (its threads were in: {sorted(seen)})")


def _coloured_run_and_inspect(tmp_path, argv: list[str], data: bytes, colours: str = "0-15", env=None):
    """Run `argv` under `memtint run` with `data` on stdin; inspect it while it holds its data;
    return (its output, the inspect report, libmemtint's exit report)."""
    report_path = tmp_path / "libmemtint.json"
    runner = subprocess.Popen([*CLI, "run", "--colors", colours, "--report", str(report_path), "--", *argv],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              env={**os.environ, "MEMTINT_QUIET": "1", **(env or {})})

    def feed() -> None:
        try:
            runner.stdin.write(data)
        except BrokenPipeError:
            pass
        finally:
            runner.stdin.close()

    feeder = threading.Thread(target=feed)
    feeder.start()
    try:
        pid = _program_pid(runner, argv[0])
        _wait_blocked_writing(pid)
        inspected = cli("inspect", str(pid), "--json", "-")
        output = runner.stdout.read()
        runner.wait(timeout=120)
    finally:
        if runner.poll() is None:
            runner.kill()
            runner.stdout.close()
        feeder.join()
    assert inspected.returncode == 0, inspected.stderr
    assert runner.returncode == 0, runner.stderr.read()
    with open(report_path) as f:
        return output, json.loads(inspected.stdout), json.load(f)


def _check_heap_in_colours(report: dict, library: dict, colours: list[int]) -> None:
    """≥ 95 % of the heap pages in the chosen colours. The library's arena holds only pages of
    colours in use; the frames it holds aside live in its staging area, which inspect counts as
    other: the resident out-of-colour "other" pages must account for them."""
    assert report["assigned_colours"] == colours
    assert report["allocator_arena"] is not None
    assert report["heap_pages"] > 0
    assert report["heap_fraction_in_colours"] >= 0.95, (report["pages"], report["pages_in_colours"])
    other_outside = report["pages"]["other"] - report["pages_in_colours"]["other"]
    assert other_outside >= 0.95 * library["pages_held_aside"], (report["pages"], library)


def _plain(argv: list[str], data: bytes, env=None) -> bytes:
    return subprocess.run(argv, input=data, capture_output=True, check=True, env={**os.environ, **(env or {})}).stdout


@needs_root
@needs_library
def test_python_building_200_mb_is_coloured_and_unchanged(tmp_path, many_mappings):
    # CPython's small-object allocator maps its own arenas (uncoloured, counted as "other");
    # PYTHONMALLOC=malloc sends every object through malloc, i.e. through libmemtint.
    program = ("import sys, hashlib\n"
               "data = [bytes([i % 251]) * 4000 + i.to_bytes(4, 'little') for i in range(50_000)]\n"
               "h = hashlib.sha256(b''.join(d[:8] for d in data)).hexdigest()\n"
               "sys.stdout.write(h + '\\n' + 'x' * (1 << 20))\n")
    argv, env = [PYTHON, "-c", program], {"PYTHONMALLOC": "malloc"}
    output, report, library = _coloured_run_and_inspect(tmp_path, argv, b"", env=env)
    assert output == _plain(argv, b"", env)
    assert report["heap_pages"] >= 200e6 / 4096
    _check_heap_in_colours(report, library, list(range(16)))


@needs_root
@needs_library
def test_sort_and_gzip_are_coloured_and_unchanged(tmp_path, many_mappings):
    rng = random.Random(5)
    lines = b"".join(b"%016x %d\n" % (rng.getrandbits(64), i) for i in range(600_000))  # ~14 MB
    # -S 64M: sort holds all its input in one buffer (by default it may spill to temporary files).
    for argv in (["sort", "-S", "64M"], ["gzip", "-c", "-6"]):
        output, report, library = _coloured_run_and_inspect(tmp_path, argv, lines)
        assert output == _plain(argv, lines), argv
        if argv[0] == "sort":
            assert report["heap_pages"] >= len(lines) / 4096  # sort holds all its input
            _check_heap_in_colours(report, library, list(range(16)))
        else:
            # gzip keeps its window and buffers in static arrays (.bss: anonymous memory outside
            # the library's arena, uncoloured, counted as other) and mallocs almost nothing.
            assert report["pages"]["other"] >= 64, report["pages"]
            if report["heap_pages"] == 0:
                assert report["heap_fraction_in_colours"] is None
            else:
                _check_heap_in_colours(report, library, list(range(16)))


# ---- run-mix (acceptance 6) ---------------------------------------------------------------------

HOLDER = ("import os, sys, time\n"
          "data = [bytearray(4096) for _ in range(8000)]\n"
          "for d in data: d[0] = 1\n"
          "open(sys.argv[1] + '.tmp', 'w').write(str(os.getpid())); os.rename(sys.argv[1] + '.tmp', sys.argv[1])\n"
          "while not os.path.exists(sys.argv[2]): time.sleep(0.02)\n")


@needs_root
@needs_library
def test_run_mix_under_bpm_gives_disjoint_banks(tmp_path, many_mappings):
    go = tmp_path / "go"
    pids = [tmp_path / "pid0", tmp_path / "pid1"]
    out = tmp_path / "mix.json"
    mix = subprocess.Popen([*CLI, "run-mix", "--machine", "i7-860", "--policy", "bpm", "--json", str(out), "--",
                            PYTHON, "-c", HOLDER, str(pids[0]), str(go), ":::", PYTHON, "-c", HOLDER, str(pids[1]), str(go)],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           env={**os.environ, "PYTHONMALLOC": "malloc", "MEMTINT_QUIET": "1", "COLUMNS": "200"})
    reports = []
    try:
        deadline = time.monotonic() + 60
        while not all(p.exists() for p in pids):
            assert mix.poll() is None, mix.stderr.read()
            assert time.monotonic() < deadline, "the programs never got ready"
            time.sleep(0.05)
        for p in pids:
            r = cli("inspect", p.read_text(), "--json", "-")
            assert r.returncode == 0, r.stderr
            reports.append(json.loads(r.stdout))
    finally:
        go.touch()
        stdout, stderr = mix.communicate(timeout=60)
    assert mix.returncode == 0, stderr
    result = json.loads(out.read_text())
    assert [p["exit_code"] for p in result["programs"]] == [0, 0]
    assert all(p["wall_seconds"] > 0 for p in result["programs"])
    assert "run-mix: policy bpm" in stdout
    colours = [set(p["colours"]) for p in result["programs"]]
    assert not colours[0] & colours[1]
    banks_used = []
    for report, program in zip(reports, result["programs"]):
        assert report["assigned_colours"] == program["colours"]
        library = program["library_report"]
        _check_heap_in_colours(report, library, program["colours"])
        # Banks of the pages in the program's colours, from the frames through the mapping.
        banks = {b for row in report["by_bank"] if row["in_colours"] for b in row["ids"]}
        assert banks <= set(program["banks"])
        banks_used.append(banks)
    assert banks_used[0] and banks_used[1] and not banks_used[0] & banks_used[1]


def test_inspecting_a_kernel_thread_says_so():
    # It used to report "/proc/2/environ: No such process".
    from memtint.linux.errors import is_kernel_thread

    kthreads = [p for p in os.listdir("/proc") if p.isdigit() and is_kernel_thread(p)]
    if not kthreads:
        pytest.skip("no kernel thread visible in /proc (a PID namespace)")
    r = cli("inspect", kthreads[0])
    assert r.returncode == 2 and f"PID {kthreads[0]} is a kernel thread" in r.stderr, r.stderr


def test_unreadable_proc_files_give_the_cause():
    import errno

    from memtint.linux.errors import unreadable

    assert "no process with PID 7" in str(unreadable(7, "maps", FileNotFoundError()))
    # ESRCH from a process that is neither a kernel thread nor a zombie: it exited meanwhile
    gone = str(unreadable(999999999, "environ", OSError(errno.ESRCH, "No such process")))
    assert "PID 999999999 exited while it was being inspected" in gone
    denied = str(unreadable(os.getpid(), "environ", PermissionError(errno.EACCES, "Permission denied")))
    assert ("even as root" in denied) if os.geteuid() == 0 else ("run as root" in denied)


GROWING = """
import mmap, time
regions = []
while True:
    m = mmap.mmap(-1, 1 << 20)
    m[::4096] = b"x" * 256
    regions.append(m)
    if len(regions) > 400:
        regions.pop(0).close()
"""


@needs_root
def test_inspect_of_a_process_that_keeps_mapping_memory_says_the_figures_move():
    # It used to undercount a growing heap by 50x with "100 % in colours" and no warning.
    from memtint.linux.inspect import inspect_process

    child = subprocess.Popen([sys.executable, "-c", GROWING])
    try:
        time.sleep(1.0)
        moving = inspect_process(child.pid)
        assert moving["inspections"] >= 1
        if not moving["stable"]:
            assert moving["inspections"] == 5 and any("changed its memory map" in w for w in moving["warnings"])
        os.kill(child.pid, signal.SIGSTOP)
        stopped = inspect_process(child.pid)
        assert stopped["stable"] and stopped["inspections"] == 1, stopped["warnings"]
        assert not any("changed its memory map" in w for w in stopped["warnings"])
    finally:
        child.kill()
        child.wait()


@pytest.mark.parametrize("space, message", [
    ("rank", "colour space 'rank': mapping RoBaRaCoCh has a single rank per channel: there are no ranks to partition"),
    ("channel", "colour space 'channel': mapping RoBaRaCoCh has a single channel: there are no channels to partition"),
])
def test_a_space_with_no_colour_bits_on_the_machine_is_refused_by_name(space, message):
    # rank leaked libmemtint's "MEMTINT_COLOR_MASKS='': empty" from its trial start
    r = cli("run", "--machine", "ddr4-2400", "--space", space, "--colors", "0", "--", "true")
    assert r.returncode == 2 and r.stderr.strip().splitlines()[-1] == f"memtint: error: {message}", r.stderr
    assert "MEMTINT_COLOR_MASKS" not in r.stderr
    from memtint.linux.layout import colour_layout

    with pytest.raises(Exception, match=r"\(0, 0, 0\) asks for no colour bit"):
        colour_layout("i7-860", "vertical", vertical=(0, 0, 0))


def test_a_rare_colour_states_its_cost_in_kernel_frames_before_running():
    from memtint.linux.launch import cost_note

    assert "about 32 MB of frames" in cost_note([0], 32, "auto")
    assert cost_note(range(16), 32, "auto") is None
    # A colour bit that selects GiB regions (i7-860-bpm-plus's channel bit b32) costs far more
    # than the fraction says: measured 1.4 GB of frames for a 4 MB heap. A mask with a low bit
    # too alternates finely and is not such a region.
    note = cost_note([1], 2, "auto", [1 << 32])
    assert note and "bit(s) b32" in note and "4 GiB" in note and "hundreds of MB" in note
    assert cost_note([1], 2, "auto", [(1 << 32) | (1 << 6)]) is None


def test_hugepage_mode_states_its_own_cost_in_reserved_hugepages(monkeypatch):
    # It said nothing, though a hugepage of no chosen colour is of no use (8192 pages held for a
    # 4 MB heap, seen with the bank colours' b21/b22) and hugepage mode gives none it uses back
    # while the program runs.
    from memtint.linux import launch
    from memtint.linux.launch import cost_note, library_mode
    from memtint.linux.layout import colour_layout

    cache = colour_layout("i7-860", "cache-only")
    note = cost_note([1], 4, "hugepage", [1 << 21, 1 << 22])
    assert note.startswith("hugepage mode, 1 of 4 colours by bit(s) b21, b22, at or above b21, which are one value "
                           "for a whole 2 MiB hugepage: one of no chosen colour is of no use (given back once the "
                           "search that took it ends, held aside whole when it keeps coming straight back)"), note
    assert "about 4 MB of reserved hugepages" in note and "more when they are not" in note and "malloc" not in note
    # bits inside the hugepage: every hugepage has every colour; any fraction is said, and the
    # longest run of the colours in a hugepage is the largest malloc (colours 2, 3: b17 = 1, 128 KiB)
    note = cost_note([2, 3, 2], 8, "hugepage", cache.masks)
    assert note.startswith("hugepage mode, 2 of 8 colours: every 2 MiB hugepage holds all 8 colours, so each MB of "
                           "heap takes about 4 MB of reserved hugepages"), note
    assert note.endswith("no malloc over 2 MiB can be coloured, nor any over 128 KiB (their longest run in a "
                         "hugepage): libmemtint refuses them with ENOMEM (with --spill it makes them of other colours, "
                         "counted)"), note
    assert "about 32 MB of reserved" in cost_note([0], 32, "hugepage") and "10.7" not in cost_note([0, 1, 2], 32,
                                                                                                   "hugepage")
    assert cost_note(range(8), 8, "hugepage", cache.masks) is None
    # auto is what libmemtint takes: hugepage mode without frame numbers
    monkeypatch.setattr(launch, "frame_access_error", lambda: None)
    assert library_mode("auto") == "pagemap" and library_mode("hugepage") == "hugepage"
    monkeypatch.setattr(launch, "frame_access_error", lambda: "frame numbers need root")
    assert library_mode("auto") == "hugepage" and library_mode("pagemap") == "pagemap"


def test_hugepage_mode_with_colour_bits_inside_and_above_the_hugepage_states_both_and_the_largest_malloc():
    # The i7-860's bank colours are b13-b15 (inside a hugepage) and b21-b22 (above): the note said
    # only b21, b22 separate the colours, and nothing of the mallocs libmemtint then refuses.
    from memtint.linux.launch import cost_note
    from memtint.linux.layout import colour_layout

    bank = colour_layout("i7-860", "bank")
    note = cost_note([0, 1, 2, 3], 32, "hugepage", bank.masks)
    assert note == ("hugepage mode, 4 of 32 colours: bit(s) b13, b14, b15 lie inside a 2 MiB hugepage, so each holds "
                    "a group of 8 colours (such as 0-7), and b21, b22 above it choose which of 4 groups; these colours "
                    "are part of 1 group (4 of its 8 colours), so a hugepage of another group is of no use (given back "
                    "once the search that took it ends, held aside when it keeps coming straight back), and the other "
                    "colours' pieces of each one used stay held aside: each MB of heap takes about 8 MB of reserved "
                    "hugepages (vm.nr_hugepages) if the kernel's free hugepages are spread evenly over b21, b22, and "
                    "more when they are not (MEMTINT_POOL_LIMIT caps what libmemtint holds); and no hugepage is all "
                    "of these colours, so no malloc over 2 MiB can be coloured, nor any over 32 KiB (their longest run "
                    "in a hugepage): libmemtint refuses them with ENOMEM (with --spill it makes them of other colours, "
                    "counted)"), note
    # libmemtint's own limits (hugepage.c, mt_huge_best_run): colours 0, 1, 8, 9 give 16 KiB runs,
    # one colour of each group 8 KiB
    assert "nor any over 16 KiB" in cost_note([0, 1, 8, 9], 32, "hugepage", bank.masks)
    note = cost_note([0, 8, 16, 24], 32, "hugepage", bank.masks)
    assert "part of 4 groups (4 of their 32 colours)" in note and "nor any over 8 KiB" in note, note
    # whole groups: whole hugepages, chained into blocks of any size; only b21, b22 tell them apart
    note = cost_note(range(8, 16), 32, "hugepage", bank.masks)
    assert "these colours are 1 whole group, so a hugepage of another group is of no use" in note, note
    assert "about 4 MB of reserved hugepages" in note and "malloc" not in note and "pieces" not in note, note
    note = cost_note([*range(4), *range(8, 16)], 32, "hugepage", bank.masks)
    assert "part of 2 groups (12 of their 16 colours)" in note and "about 2.7 MB" in note and "malloc" not in note
    # a mask of bits on both sides (b13 ^ b21) puts both colours in every hugepage
    note = cost_note([0], 2, "hugepage", [(1 << 13) | (1 << 21)])
    assert "every 2 MiB hugepage holds all 2 colours" in note and "nor any over 8 KiB" in note, note


@needs_root
@needs_library
def test_run_states_the_hugepage_limits_before_the_program_starts():
    from memtint.linux import launch, run_coloured

    with open(launch.HUGEPAGES_FREE, encoding="ascii") as f:
        if int(f.read()) == 0:
            pytest.skip("no free 2 MB hugepages, which libmemtint's hugepage mode needs to start")
    said: list[str] = []
    run = run_coloured(["true"], "0-3", mode="hugepage", on_warning=said.append,
                       on_start=lambda r: said.append("started"))
    assert said[-1] == "started" and said[:-1] == run.warnings, said
    assert any("bit(s) b13, b14, b15 lie inside a 2 MiB hugepage" in w and "no malloc over 2 MiB can be coloured, nor "
               "any over 32 KiB" in w for w in run.warnings), said


@needs_root
@needs_library
def test_run_in_auto_mode_without_frame_numbers_states_the_hugepage_cost(monkeypatch, tmp_path, capsys):
    # libmemtint takes hugepage mode then; run said the pagemap mode's cost and vm.max_map_count.
    from memtint import cli as memtint_cli
    from memtint.linux import launch

    monkeypatch.setattr(launch, "frame_access_error", lambda: "frame numbers need root")
    free = tmp_path / "free_hugepages"
    free.write_text("4\n")
    monkeypatch.setattr(launch, "HUGEPAGES_FREE", str(free))
    assert memtint_cli.main(["run", "--space", "cache-only", "--colors", "0", "--", "true"]) == 0
    err = capsys.readouterr().err
    assert "memtint: warning: hugepage mode, 1 of 8 colours: every 2 MiB hugepage holds all 8 colours" in err, err
    assert "MB of frames from the kernel" not in err and "vm.max_map_count" not in err


@needs_root
@needs_library
def test_run_mix_states_each_colour_set_s_cost_as_run_does():
    # run-mix said nothing of it: bpm-plus's halves by channel bit b32 cost hundreds of MB of frames per MB.
    r = cli("run-mix", "--machine", "i7-860-bpm-plus", "--policy", "bpm-plus", "--json", "-", "--", "true", ":::",
            "true")
    assert r.returncode == 0, r.stderr
    said = [w for w in json.loads(r.stdout)["warnings"] if "hundreds of MB of frames" in w]
    assert len(said) == 1 and said[0].startswith("programs 0, 1: 32 of 64 colours by bit(s) b32"), said
    assert f"memtint: warning: {said[0]}" in r.stderr
    # cache-only for four: 2 of 8 colours each, about 4 MB of frames per MB; one note for the four
    r = cli("run-mix", "--policy", "cache-only", "--json", "-", "--", "true", ":::", "true", ":::", "true",
            ":::", "true")
    assert r.returncode == 0, r.stderr
    notes = [w for w in json.loads(r.stdout)["warnings"] if "MB of frames" in w]
    assert notes and all(w.startswith("programs 0, 1, 2, 3: ") for w in notes), notes


@needs_root
@needs_library
def test_run_mix_json_to_stdout_is_the_json_alone():
    # The programs shared memtint's standard output: their lines came before the JSON in one stream.
    r = cli("run-mix", "--policy", "bpm", "--json", "-", "--", "/bin/echo", "from-a-program", ":::", "/bin/true")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["kind"] == "run-mix"
    assert "from-a-program" in r.stderr
