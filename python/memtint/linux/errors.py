"""Errors of the Linux commands (`memtint run`, `run-mix`, `inspect`): one class per cause a
user can act on, each message saying what to do. The CLI prints them as one line and exits 2."""

from __future__ import annotations


class LinuxError(Exception):
    """A problem with the host, a process or the arguments of a Linux command."""


class PrivilegeError(LinuxError):
    """Frame numbers are not readable: /proc/PID/pagemap shows zero PFNs without CAP_SYS_ADMIN."""


class LibraryMissingError(LinuxError):
    """libmemtint.so is not built or not where MEMTINT_LIB says."""
