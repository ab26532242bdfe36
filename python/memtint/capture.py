"""Capture CPU traces of real programs: runs an unmodified program under memtint-trace, memtint's
Valgrind tool (native/valgrind/), which filters the program's data accesses through a private
L1/L2 per thread inside the traced process and writes each L2 miss as a Ramulator-style record
(bubbles, line, dirty writeback) to one ``.mtt`` file per thread. Issue 7; docs/tracing.md.

Nothing is built here: ``make build`` builds the tool (``native/valgrind/build/lib``), and this
module only finds it, runs it, and turns its log and summary into results or clear errors."""

from __future__ import annotations

import glob
import json
import os
import re
import shutil
import subprocess
import threading
import time
from typing import Any, Callable, Sequence

from memtint.api import MemtintError
from memtint import stopping
from memtint.outputs import write_text

TOOL_NAME = "memtint-trace"
TOOL_FILE = "memtint-trace-amd64-linux"
# The tool's own exit statuses (native/valgrind/mt_main.c).
TOOL_BAD_OPTION = 2
TOOL_OUTPUT_ERROR = 125
_REPO_TOOL_LIB = os.path.join(os.path.dirname(__file__), "..", "..", "native", "valgrind", "build", "lib")
_PROGRESS = re.compile(r"memtint-trace: progress: (\d+) instructions")
_TOOL_ERROR = re.compile(r"memtint-trace: error: (.*)")


def tool_lib_dir() -> str:
    """The ``VALGRIND_LIB`` directory holding the built tool: ``$MEMTINT_VALGRIND_LIB``, else the
    checkout's ``native/valgrind/build/lib``."""
    given = os.environ.get("MEMTINT_VALGRIND_LIB")
    lib = given or os.path.normpath(_REPO_TOOL_LIB)
    if given and not os.path.isfile(os.path.join(lib, TOOL_FILE)):  # the user's setting, not the build, is wrong
        what = "does not exist" if not os.path.exists(lib) else f"holds no {TOOL_FILE}"
        raise MemtintError(f"MEMTINT_VALGRIND_LIB={given}: {what}; give the directory holding the built tool "
                           f"(make build puts it in {os.path.normpath(_REPO_TOOL_LIB)}), or unset it")
    if not os.path.isfile(os.path.join(lib, TOOL_FILE)):
        raise MemtintError(
            f"the memtint-trace Valgrind tool is not built (no {TOOL_FILE} in {lib}): run 'make build' "
            "(or 'make -C native/valgrind'), or set MEMTINT_VALGRIND_LIB to the directory holding it"
        )
    return lib


def find_valgrind() -> str:
    """The `valgrind` launcher on PATH, or an error saying how to install it."""
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        raise MemtintError("valgrind is not installed (or not on PATH): install it with 'apt-get install valgrind'")
    return valgrind


def _find_program(program: str) -> str:
    if os.sep in program:
        if not os.path.exists(program):
            raise MemtintError(f"{program}: program not found")
        if os.path.isdir(program) or not os.access(program, os.X_OK):
            raise MemtintError(f"{program}: not an executable program")
        return program
    found = shutil.which(program)
    if found is None:
        raise MemtintError(f"{program}: program not found on PATH")
    return found


def _check_geometry(name: str, size: int, ways: int, line: int) -> None:
    if line < 64 or line & (line - 1):
        raise MemtintError(f"line size {line}: must be a power of two of at least 64 bytes")
    if not 1 <= ways <= 64:
        raise MemtintError(f"{name} associativity {ways}: must be between 1 and 64")
    if size <= 0 or size % (ways * line):
        raise MemtintError(f"{name} size {size}: must be a multiple of associativity x line size ({ways * line})")
    sets = size // (ways * line)
    if sets & (sets - 1):
        raise MemtintError(f"{name} size {size}: its {sets} sets (size / (ways x line)) must be a power of two")


def _check_arguments(command: Any, output: Any, warmup: Any, limit: Any, l1_size: Any, l1_ways: Any, l2_size: Any,
                     l2_ways: Any, line_size: Any, progress: Any, cwd: Any) -> tuple[Any, ...]:
    """The arguments as the capture takes them, each refused by name when of the wrong kind: a
    string command was split into characters, a float limit reached valgrind as "100000.0"."""
    from memtint.api import function_argument, names_argument, plain, whole_number

    command = plain(names_argument("command", command, "the program and its arguments"))
    if not command:
        raise MemtintError("command: no program to trace (an empty list); give the program and its arguments, "
                           "e.g. ['sort', 'FILE']")
    if not all(isinstance(a, str) for a in command):
        raise MemtintError(f"command: expected the program and its arguments as strings, got {command!r}")
    if not isinstance(output, (str, os.PathLike)) or not os.fspath(output):
        raise MemtintError(f"output: expected the traces' path prefix (a str or path), got {output!r}")
    function_argument("progress", progress, "(instructions, seconds)")
    if cwd is not None and not isinstance(cwd, (str, os.PathLike)):
        raise MemtintError(f"cwd: expected the directory to run the program in (a str or path), got {cwd!r}")
    counts = [whole_number(key, value) for key, value in (("warmup", warmup), ("limit", limit))]
    sizes = [whole_number(key, value) for key, value in (("l1_size", l1_size), ("l1_ways", l1_ways),
                                                          ("l2_size", l2_size), ("l2_ways", l2_ways),
                                                          ("line_size", line_size))]
    return (command, output, *counts, *sizes)


def trace_files(prefix: str | os.PathLike[str]) -> list[str]:
    """The per-thread traces ``PREFIX.t<N>.mtt`` of a capture, in thread order."""
    if not isinstance(prefix, (str, os.PathLike)):
        raise MemtintError(f"prefix: expected the traces' path prefix (a str or path), got {prefix!r}")
    pattern = re.compile(re.escape(os.path.basename(os.fspath(prefix))) + r"\.t(\d+)\.mtt$")
    found = []
    for path in glob.glob(glob.escape(os.fspath(prefix)) + ".t*.mtt"):
        m = pattern.search(os.path.basename(path))
        if m:
            found.append((int(m.group(1)), path))
    return [path for _, path in sorted(found)]


def _is_script(program: str) -> bool:
    """The program is a ``#!`` script (its interpreter runs it)."""
    try:
        with open(program, "rb") as f:
            return f.read(2) == b"#!"
    except OSError:
        return False


def _remove_traces(prefix: str) -> None:
    for path in trace_files(prefix):
        os.remove(path)


def capture_trace(
    command: Sequence[str],
    output: str | os.PathLike[str],
    *,
    warmup: int = 0,
    limit: int = 0,
    at_limit: str = "exit",
    l1_size: int = 32 * 1024,
    l1_ways: int = 8,
    l2_size: int = 1024 * 1024,
    l2_ways: int = 16,
    line_size: int = 64,
    progress: Callable[[int, float], None] | None = None,
    stdin: Any = None,
    stdout: Any = None,
    stderr: Any = None,
    cwd: str | os.PathLike[str] | None = None,
) -> dict[str, Any]:
    """Run ``command`` under memtint-trace and write ``OUTPUT.t<N>.mtt`` (thread N, 1 = main, in
    creation order), ``OUTPUT.summary.json`` and ``OUTPUT.valgrind.log``.

    ``warmup`` instructions (all threads) fill the caches without emitting records; then ``limit``
    instructions (all threads; 0 = to the end) are traced, after which the program is ended
    (``at_limit="exit"``) or runs on untraced (``"continue"``). ``progress(instructions, seconds)``
    is called about twice a second. Returns the summary: the tool's counts per thread plus
    ``program_exit_status`` (negative: killed by that signal) and ``program_failed``, ``seconds``
    and ``instructions_per_second``. A program that fails keeps its traces (flagged, not raised);
    a missing program, valgrind or tool, an unwritable output, a full disk or a trace that does not
    read back raise MemtintError. ``untraced_children``: the pids of children the program forked
    without exec, which run untraced (their work is not in the traces).
    """
    command, output, warmup, limit, l1_size, l1_ways, l2_size, l2_ways, line_size = _check_arguments(
        command, output, warmup, limit, l1_size, l1_ways, l2_size, l2_ways, line_size, progress, cwd)
    if at_limit not in ("exit", "continue"):
        raise MemtintError(f"at_limit '{at_limit}': expected 'exit' or 'continue'")
    _check_geometry("L1", l1_size, l1_ways, line_size)
    _check_geometry("L2", l2_size, l2_ways, line_size)
    if l2_size < l1_size:
        raise MemtintError(f"L2 size {l2_size} is smaller than the L1 ({l1_size}); the L2 is inclusive")
    valgrind = find_valgrind()
    lib = tool_lib_dir()
    program = _find_program(command[0])
    prefix = os.path.abspath(os.fspath(output))
    out_dir = os.path.dirname(prefix)
    if not os.path.isdir(out_dir):
        raise MemtintError(f"{out_dir}: the output directory does not exist")
    if not os.access(out_dir, os.W_OK | os.X_OK):
        raise MemtintError(f"{out_dir}: the output directory is not writable")
    _remove_traces(prefix)  # a previous capture's threads must not mix with this one's
    summary_path, log_path = prefix + ".summary.json", prefix + ".valgrind.log"
    for stale in (summary_path, log_path):
        if os.path.exists(stale):
            os.remove(stale)

    args = [
        valgrind, f"--tool={TOOL_NAME}", f"--log-file={log_path}",
        f"--out={prefix}", f"--warmup={warmup}", f"--limit={limit}", f"--at-limit={at_limit}",
        f"--l1-size={l1_size}", f"--l1-assoc={l1_ways}", f"--l2-size={l2_size}", f"--l2-assoc={l2_ways}",
        f"--line-size={line_size}", "--", program, *command[1:],
    ]
    env = dict(os.environ, VALGRIND_LIB=lib)
    start = time.monotonic()
    # A stop (SIGINT, SIGTERM) removes the thread traces being written: a trace is whole or absent.
    with stopping.temporary_files(lambda: trace_files(prefix)):
        try:
            proc = subprocess.Popen(args, env=env, stdin=stdin, stdout=stdout, stderr=stderr, cwd=cwd)
        except OSError as error:
            raise MemtintError(f"cannot run {valgrind}: {error.strerror or error}") from None
        stopping.register(proc)
        done = threading.Event()

        def report() -> None:
            while not done.wait(0.5):
                if progress is not None:
                    progress(_last_progress(log_path), time.monotonic() - start)

        reporter = threading.Thread(target=report, daemon=True)
        reporter.start()
        try:
            status = proc.wait()
        except KeyboardInterrupt:
            proc.kill()
            proc.wait()
            _remove_traces(prefix)
            raise
        finally:
            done.set()
            reporter.join()
            stopping.unregister(proc)
    seconds = time.monotonic() - start
    log = _read(log_path)
    tool_error = _TOOL_ERROR.search(log)
    if tool_error or status == TOOL_OUTPUT_ERROR and not os.path.exists(summary_path):
        reason = tool_error.group(1) if tool_error else f"valgrind exited with status {status}; see {log_path}"
        hint = " (free some space or choose another output directory)" if "no space" in reason or "quota" in reason else ""
        _remove_traces(prefix)  # unusable: no reader takes an unfinished trace
        raise MemtintError(f"capture failed: {reason}{hint}; the partial traces were removed")
    if not os.path.exists(summary_path):
        _remove_traces(prefix)  # a header without records: no reader takes it
        if _is_script(program):  # its interpreter exec'd another program, which Valgrind does not follow
            raise MemtintError(f"{command[0]} is a script (#!): Valgrind traced its interpreter, which exec'd another "
                               "program before the tool could write its summary (children and exec are not traced, "
                               "docs/tracing.md); trace the real program instead")
        lines = [line.split("== ", 1)[-1] for line in log.splitlines() if line.strip()]
        detail = "; ".join(lines[-3:]) if lines else f"see {log_path}"
        raise MemtintError(f"valgrind failed (status {status}) before the tool wrote its summary: {detail}")
    with open(summary_path, encoding="utf-8") as f:
        summary = json.load(f)
    _check_traces_read_back(summary, prefix, log, summary_path)
    summary.update(
        # children forked without exec: the tool stops tracing in them (their work is not in the traces)
        untraced_children=[int(pid) for pid in re.findall(r"memtint-trace: untraced child: (\d+)", log)],
        command=list(command),
        program=program,
        program_exit_status=status,
        program_failed=status != 0,
        seconds=round(seconds, 3),
        instructions_per_second=summary["executed_instructions"] / seconds if seconds > 0 else 0.0,
        files=[t["file"] for t in summary["threads"]],
        log=log_path,
    )
    write_text("-o", summary_path, json.dumps(summary, indent=2) + "\n")
    return summary


def _check_traces_read_back(summary: dict[str, Any], prefix: str, log: str, summary_path: str) -> None:
    """Every thread's file decodes to the records the tool counted, or the capture fails with
    the traces removed: a check that the traces hold what the tool wrote (a child forked without
    exec, which writes nothing now, once wrote its records and header into its parent's)."""
    from memtint import api

    for thread in summary["threads"]:
        path = thread["file"]
        try:
            if thread["records"] == 0:
                problem = None if os.path.getsize(path) == 32 else f"{path}: data after a header of 0 records"
            else:
                held = api.cpu_trace_stats(path)["records"]
                problem = None if held == thread["records"] else f"{path}: {held} records, the tool wrote {thread['records']}"
        except (OSError, MemtintError) as error:
            problem = str(error)
        if problem is None:
            continue
        _remove_traces(prefix)
        os.remove(summary_path)  # it describes the removed traces
        pids = sorted(set(re.findall(r"^==(\d+)==", log, re.M)))
        forked = f"; the log shows {len(pids)} processes (pids {', '.join(pids)})" if len(pids) > 1 else ""
        raise MemtintError(f"capture failed: a trace does not read back: {problem}{forked}; the traces were removed")


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except FileNotFoundError:
        return ""


def _last_progress(log_path: str) -> int:
    found = _PROGRESS.findall(_read(log_path)[-4096:])
    return int(found[-1]) if found else 0
