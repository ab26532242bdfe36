"""Frame numbers of a process's pages from /proc/PID/pagemap (Linux Documentation/admin-guide/mm/
pagemap.rst): one 64-bit entry per virtual page; bit 63 present, bit 62 swapped, bits 0-54 the
page frame number. Without CAP_SYS_ADMIN the kernel still reports present pages but with PFN 0,
which would silently give every page colour 0: `check_frame_access` detects it up front."""

from __future__ import annotations

import errno
import mmap
import os
from dataclasses import dataclass

from memtint.linux.errors import LinuxError, PrivilegeError

PAGE_BYTES = os.sysconf("SC_PAGE_SIZE")
PFN_MASK = (1 << 55) - 1
PRESENT = 1 << 63
SWAPPED = 1 << 62
# Entries read per system call: 64 KiB of pagemap covers 32 MiB of address space.
CHUNK_PAGES = 8192

#: What reading frame numbers needs, as `inspect` can act on it.
FRAME_PRIVILEGE = (
    "frame numbers need root or CAP_SYS_ADMIN (unprivileged reads of /proc/PID/pagemap return frame "
    "number 0): run as root (sudo), or grant the capability (setcap cap_sys_admin+ep on the Python "
    "interpreter)"
)
#: The same for colouring, which has a way around it.
PRIVILEGE_FIX = (FRAME_PRIVILEGE + "; or colour without them in libmemtint's hugepage mode (memtint run --mode "
                 "hugepage)")


@dataclass
class PageFrames:
    """Present pages of one virtual range: addresses and frame numbers, plus the swapped count."""

    vaddrs: list[int]
    pfns: list[int]
    swapped: int


def read_frames(pid: int | str, start: int, end: int, fd: int | None = None) -> PageFrames:
    """Frames of the present pages in [start, end) of process `pid` (`fd`: an open pagemap)."""
    numpy = _numpy()

    own = fd is None
    if own:
        fd = open_pagemap(pid)
    try:
        vaddrs: list[int] = []
        pfns: list[int] = []
        swapped = 0
        first = start // PAGE_BYTES
        last = (end + PAGE_BYTES - 1) // PAGE_BYTES
        page = first
        while page < last:
            n = min(CHUNK_PAGES, last - page)
            try:
                data = os.pread(fd, n * 8, page * 8)
            except OSError as error:
                # A range the process unmapped meanwhile reads as an error on some kernels.
                if error.errno in (errno.EINVAL, errno.EFAULT):
                    break
                raise
            if not data:
                break
            entries = numpy.frombuffer(data, dtype="<u8")
            present = numpy.nonzero(entries >> 63)[0]
            vaddrs.extend(((present + page) * PAGE_BYTES).tolist())
            pfns.extend((entries[present] & PFN_MASK).tolist())
            swapped += int(numpy.count_nonzero((entries >> 62) == 1))
            page += n
        return PageFrames(vaddrs, pfns, swapped)
    finally:
        if own:
            os.close(fd)


def _numpy():
    """numpy, imported here rather than at the top (every memtint command imports this module),
    with SIGINT, SIGTERM and SIGHUP blocked meanwhile: its BLAS starts threads as it loads, which
    inherit the block and so never take one of them. `run` reads who sent a signal to its
    program in the main thread (launch.SignalRelay); one taken by another thread reaches Python
    without its sender, and a terminal's Ctrl-C would be passed on as a second one."""
    import signal
    import sys

    if "numpy" in sys.modules:
        return sys.modules["numpy"]
    held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM, signal.SIGHUP})
    try:
        import numpy
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)
    return numpy


def open_pagemap(pid: int | str) -> int:
    """An open /proc/PID/pagemap; a clear error when the process is gone or not ours to read."""
    path = f"/proc/{pid}/pagemap"
    try:
        return os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        raise LinuxError(f"no process with PID {pid}") from None
    except PermissionError:
        raise PrivilegeError(f"cannot read {path}: the process is another user's, whose page map only root "
                             "reads (sudo)") from None


def check_frame_access(fix: str = PRIVILEGE_FIX) -> None:
    """Raise PrivilegeError (saying ``fix``) unless this process can read real frame numbers: it
    touches one page of its own and reads its PFN back (non-zero when privileged)."""
    buf = mmap.mmap(-1, PAGE_BYTES)
    try:
        buf[0] = 1
        address = _address_of(buf)
        frames = read_frames("self", address, address + PAGE_BYTES)
    finally:
        buf.close()
    if not frames.pfns:
        raise LinuxError("could not fault in a test page to probe /proc/self/pagemap")
    if frames.pfns[0] == 0:
        raise PrivilegeError(fix)


def _address_of(buf: mmap.mmap) -> int:
    import ctypes

    return ctypes.addressof(ctypes.c_char.from_buffer(buf))


def frame_access_error() -> str | None:
    """The privilege problem as text, or None when frame numbers are readable."""
    try:
        check_frame_access()
    except PrivilegeError as error:
        return str(error)
    return None
