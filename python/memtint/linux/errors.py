"""Errors of the Linux commands (`memtint run`, `run-mix`, `inspect`): one class per cause a
user can act on, each message saying what to do. The CLI prints them as one line and exits 2.
They are MemtintErrors, so one ``except memtint.MemtintError`` catches every error the project
raises for bad input or an unusable host."""

from __future__ import annotations

from memtint._engine import MemtintError


class LinuxError(MemtintError):
    """A problem with the host, a process or the arguments of a Linux command."""


class PrivilegeError(LinuxError):
    """Frame numbers are not readable: /proc/PID/pagemap shows zero PFNs without CAP_SYS_ADMIN."""


class LibraryMissingError(LinuxError):
    """libmemtint.so is not built or not where MEMTINT_LIB says."""


def unreadable(pid: int | str, what: str, error: OSError) -> LinuxError:
    """Why /proc/PID/`what` cannot be read, in words a user can act on."""
    import errno
    import os

    if isinstance(error, FileNotFoundError):
        return LinuxError(f"no process with PID {pid}")
    # A zombie's and a kernel thread's memory files both fail with ESRCH: tell them apart.
    if is_zombie(pid):
        return zombie(pid)
    if is_kernel_thread(pid):
        return LinuxError(f"PID {pid} is a kernel thread: it has no user memory to inspect")
    if error.errno == errno.ESRCH:
        return LinuxError(f"PID {pid} exited while it was being inspected")
    if os.geteuid() == 0:
        return LinuxError(f"cannot read /proc/{pid}/{what} even as root: the process is outside this container's "
                          "user namespace, or ptrace restrictions (kernel.yama.ptrace_scope, LSMs) protect it")
    return LinuxError(f"cannot read /proc/{pid}/{what}: the process belongs to another user; run as root")


def zombie(pid: int | str) -> LinuxError:
    return LinuxError(f"PID {pid} is a zombie (exited, not yet reaped by its parent): it has no memory to inspect")


def is_zombie(pid: int | str) -> bool:
    """State Z in /proc/PID/status: exited, its memory gone, waiting for its parent's wait()."""
    try:
        with open(f"/proc/{pid}/status", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("State:"):
                    return line.split()[1:2] == ["Z"]
    except OSError:
        pass
    return False


def is_kernel_thread(pid: int | str) -> bool:
    """PF_KTHREAD in the process's flags (field 9 of /proc/PID/stat)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as f:
            stat = f.read()
        flags = int(stat.rsplit(")", 1)[1].split()[6])
        return bool(flags & 0x00200000)
    except (OSError, ValueError, IndexError):
        return False
