"""The Python API's arguments to the Linux commands (`run_coloured`, `run_mix`), checked by kind
before anything starts: a string where a command goes was run as its first letter, a string
``spill="no"`` was true, and a wrong callback failed only after the program had run."""

from __future__ import annotations

import functools
import os
from typing import Any, Sequence

from memtint.api import flag_argument, function_argument
from memtint.linux.errors import LinuxError


def command(key: str, argv: Any) -> list[str]:
    """One program and its arguments: a non-empty list of strings (paths taken as their text)."""
    if isinstance(argv, (str, bytes)) or not isinstance(argv, (list, tuple)):
        raise LinuxError(f"{key}: expected a list of the program and its arguments, got {argv!r}"
                         + (f" (a string is not a list: [{argv!r}], or {argv.split()!r})" if isinstance(argv, str) else ""))
    argv = [os.fspath(a) if isinstance(a, os.PathLike) else a for a in argv]
    if not argv or not all(isinstance(a, str) for a in argv):
        raise LinuxError(f"{key}: expected the program and its arguments as strings, got {argv!r}")
    return argv


def commands(key: str, value: Any) -> list[list[str]]:
    """Several programs: a list of :func:`command` lists."""
    if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple)):
        raise LinuxError(f"{key}: expected a list of programs, each a list of the program and its arguments "
                         f"([['prog1', 'arg'], ['prog2']]), got {value!r}")
    return [command(f"{key}[{i}]", argv) for i, argv in enumerate(value)]


def whole_numbers(key: str, value: Any) -> list[int]:
    """A list of whole numbers (colours, CPUs) given as a list rather than as text like "0-3,8"."""
    if isinstance(value, (list, tuple, set, frozenset)) and all(
            isinstance(v, int) and not isinstance(v, bool) for v in value):
        return list(value)
    raise LinuxError(f"{key}: expected text such as '0-3,8' or a list of whole numbers, got {value!r}")


# The API's checks, raising the Linux commands' error.
flag = functools.partial(flag_argument, error=LinuxError)
callback = functools.partial(function_argument, error=LinuxError)


def path_or_none(key: str, value: Any, what: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, (str, os.PathLike)):
        raise LinuxError(f"{key}: expected {what} (a str or path), got {value!r}")
    return os.fspath(value)


def cpus(value: str | Sequence[int] | None) -> list[int] | None:
    """``cpus``: None (the CPUs this process may use), text ("0-1,3") or a list of CPU numbers."""
    from memtint.linux.launch import parse_cpus

    if value is None:
        return None
    return parse_cpus(value) if isinstance(value, str) else whole_numbers("cpus", value) or None
