"""How memtint stops on SIGINT and SIGTERM: within the second, with status 130 / 143, killing
the child processes it started (pool workers; a traced program under Valgrind, registered
here) and removing the temporary files of outputs not yet complete (`temporary`). A command that keeps its completed work (a sweep) asks for `Stopped` to be raised in
the main thread instead, cleans up and then ends the same way; a second signal ends at once."""

from __future__ import annotations

import contextlib
import glob
import os
import signal
import subprocess
import sys
import threading
from typing import Any, Callable, Iterable, Iterator, NoReturn


class Stopped(BaseException):
    """SIGINT or SIGTERM, raised in the main thread where a command can clean up first."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


_installed = False
_raise = False
_stopping = False

_children: list[subprocess.Popen] = []
#: Functions listing the files that exist only until an output is complete.
_temporaries: list[Callable[[], Iterable[str]]] = []


def register(process: subprocess.Popen) -> None:
    _children.append(process)


def unregister(process: subprocess.Popen) -> None:
    if process in _children:
        _children.remove(process)


def kill_children() -> None:
    """Kill every registered child and every worker process (multiprocessing) still alive."""
    import multiprocessing

    for process in list(_children):
        if process.poll() is None:
            process.kill()
    for child in multiprocessing.active_children():
        child.kill()


@contextlib.contextmanager
def temporary_files(files: Callable[[], Iterable[str]]) -> Iterator[None]:
    """Within this block, a stop removes the files ``files()`` names then (a capture's thread
    traces, found by their own rule rather than a glob that could take another capture's), and
    the directories among them that are empty."""
    _temporaries.append(files)
    try:
        yield
    finally:
        _temporaries.remove(files)


@contextlib.contextmanager
def temporary(path: str, *, any_suffix: str | None = None) -> Iterator[None]:
    """Within this block, a stop removes the file ``path`` (with ``any_suffix``, every file named
    ``path`` + anything + ``any_suffix``: a writer that picks its own name, as the engine's
    ``.NAME.PID-N.part``), so that an output written through a temporary file leaves nothing
    behind when memtint is stopped."""
    pattern = glob.escape(path) + (f"*{glob.escape(any_suffix)}" if any_suffix is not None else "")
    with temporary_files(lambda: glob.glob(pattern)):
        yield


def remove_temporaries() -> None:
    """Remove the registered files, and the registered directories that are empty (one with a
    file in it is not the stop's to remove)."""
    for files in list(_temporaries):
        for path in files():
            try:
                if os.path.isdir(path) and not os.path.islink(path):
                    os.rmdir(path)
                else:
                    os.unlink(path)
            except OSError:
                pass


def exit_now(signum: int) -> NoReturn:
    """End memtint: children killed and temporary files removed, then the process, without
    waiting for simulations running in threads (they cannot be interrupted)."""
    kill_children()
    remove_temporaries()
    name = "interrupted" if signum == signal.SIGINT else "terminated"
    try:
        sys.stderr.write(f"memtint: {name}\n")
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    os._exit(128 + signum)


#: Depth of `deferred` blocks in the main thread, and a stop that came within one.
_deferred = 0
_pending: int | None = None


@contextlib.contextmanager
def deferred() -> Iterator[None]:
    """Within this block (in the main thread, where handlers run) a stop waits for its end: for a
    few system calls that must finish together, as creating a probe file and removing it (a
    handler runs as soon as the call that created the file returns, before the next line)."""
    global _deferred, _pending
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _deferred += 1
    try:
        yield
    finally:
        _deferred -= 1
        if not _deferred and _pending is not None:
            signum, _pending = _pending, None
            _on_signal(signum, None)


def _on_signal(signum: int, frame: Any) -> None:
    global _stopping, _pending
    if _deferred:
        _pending = signum
        return
    if _stopping or not _raise:
        exit_now(signum)
    _stopping = True
    raise Stopped(signum)


def install() -> None:
    """memtint's handlers for SIGINT and SIGTERM (from the main thread; the CLI calls it)."""
    global _installed
    # A stop kills the pool's workers: multiprocessing's resource tracker (a child started with
    # these options) then unlinks their semaphores, and need not print a warning of it.
    if "ignore:resource_tracker:UserWarning" not in sys.warnoptions:
        sys.warnoptions.append("ignore:resource_tracker:UserWarning")
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, _on_signal)
        _installed = True


def reinstall() -> None:
    """Put memtint's handlers back after a library replaced them (``ray.init`` does)."""
    if _installed:
        install()


class raising:
    """Within this block a signal raises `Stopped` (the caller stores what completed)."""

    def __enter__(self) -> "raising":
        global _raise
        _raise = True
        return self

    def __exit__(self, *exc: Any) -> None:
        global _raise
        _raise = False
