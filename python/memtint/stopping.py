"""What a signal ends with memtint: child processes it started (a traced program under
Valgrind) are registered here, so an interrupt kills them rather than leaving them behind."""

from __future__ import annotations

import subprocess

_children: list[subprocess.Popen] = []


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
