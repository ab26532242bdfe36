"""Where a sweep's tasks run. A backend maps a picklable function over plain-data items and yields
the outcomes in completion order; the sweep code (runner.py) is the same for every backend.

:class:`LocalBackend` is a process pool on this machine. A Ray backend (tasks shipped to Ray
workers, ``--ray ADDRESS``) implements the same :class:`Backend` protocol.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Callable, Iterable, Iterator, Protocol, runtime_checkable

__all__ = ["Backend", "LocalBackend", "WorkerError"]


class WorkerError(Exception):
    """A task whose worker failed outside the task's own error handling (e.g. the process died)."""


@runtime_checkable
class Backend(Protocol):
    """What the runner needs from an execution backend."""

    #: Short name for messages and the manifest ("local", "ray").
    name: str
    #: How many tasks run at once (for messages).
    slots: int

    def map_unordered(self, fn: Callable[[Any], Any], items: Iterable[Any]) -> Iterator[tuple[Any, Any]]:
        """Run ``fn(item)`` for every item; yield ``(item, result)`` as each finishes, in
        completion order. A task that could not run yields ``(item, WorkerError(...))``."""
        ...

    def close(self) -> None:
        """Release the workers (idempotent)."""
        ...


def die_with_parent(parent: int) -> None:
    """Pool worker initializer: end this worker when the process that started it dies, even by
    SIGKILL (which runs no clean-up), so no worker goes on simulating for nobody. Linux: the
    kernel's PR_SET_PDEATHSIG; elsewhere a thread that watches the parent id. A Ctrl-C reaches
    the whole process group: the worker leaves it to the parent, which kills the pool (a worker
    of its own printed a KeyboardInterrupt traceback)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if sys.platform.startswith("linux"):
        import ctypes

        pr_set_pdeathsig = 1
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, int(signal.SIGKILL), 0, 0, 0)
    else:
        import threading
        import time

        def watch() -> None:
            while os.getppid() == parent:
                time.sleep(1.0)
            os._exit(1)

        threading.Thread(target=watch, name="memtint-parent-watch", daemon=True).start()
    if os.getppid() != parent:  # the parent died before the signal was armed
        os._exit(1)


class LocalBackend:
    """A pool of ``jobs`` worker processes on this machine (``spawn``ed: the engine is not
    fork-safe in general, and spawn behaves the same on every platform).

    At most ``2 * jobs`` tasks are in flight at a time, so a sweep of many runs does not pickle
    them all up front and an interrupt leaves little work behind.
    """

    name = "local"

    def __init__(self, jobs: int | None = None) -> None:
        self.slots = max(1, jobs or os.cpu_count() or 1)
        self._pool: ProcessPoolExecutor | None = None

    def _executor(self) -> ProcessPoolExecutor:
        if self._pool is None:
            self._pool = ProcessPoolExecutor(max_workers=self.slots,
                                             mp_context=multiprocessing.get_context("spawn"),
                                             initializer=die_with_parent, initargs=(os.getpid(),))
        return self._pool

    def map_unordered(self, fn: Callable[[Any], Any], items: Iterable[Any]) -> Iterator[tuple[Any, Any]]:
        pending: dict[Future, Any] = {}
        source = iter(items)
        window = 2 * self.slots

        def fill() -> None:
            while len(pending) < window:
                try:
                    item = next(source)
                except StopIteration:
                    return
                try:
                    pending[self._executor().submit(fn, item)] = item
                except BrokenProcessPool:  # a worker died earlier: start a fresh pool
                    self._pool = None
                    pending[self._executor().submit(fn, item)] = item

        fill()
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                item = pending.pop(future)
                try:
                    result = future.result()
                except BrokenProcessPool as error:
                    result = WorkerError(f"{type(error).__name__}: {error} (a worker died: a crash, the OOM killer, "
                                         "or a script starting memtint's workers (memtint.sweep, reproduce) "
                                         "outside 'if __name__ == \"__main__\":', which each worker runs again as "
                                         "it starts)")
                except Exception as error:  # an unpicklable result...
                    result = WorkerError(f"{type(error).__name__}: {error}")
                yield item, result
            fill()

    def close(self, kill: bool = False) -> None:
        """Wait for the workers to finish, or, with ``kill`` (an interrupt), end them at once:
        a simulation in a worker cannot be interrupted and may run for minutes."""
        if self._pool is not None:
            if kill:
                for process in list(getattr(self._pool, "_processes", {}).values()):
                    process.kill()
            self._pool.shutdown(wait=not kill, cancel_futures=True)
            self._pool = None

    def __enter__(self) -> "LocalBackend":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close(kill=exc[0] is not None)
