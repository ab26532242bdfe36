"""Where libmemtint.so (the LD_PRELOAD colouring allocator, native/libmemtint) is: the
package's `_native/` directory after `make build`, or MEMTINT_LIB."""

from __future__ import annotations

import os

from memtint.linux.errors import LibraryMissingError

PACKAGED = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "_native", "libmemtint.so")


def exports_libmemtint(path: str) -> bool:
    """Whether the file at `path` holds libmemtint's functions (memtint_set_colors): a library
    named anything (MEMTINT_LIB) is libmemtint by what it exports."""
    try:
        with open(path, "rb") as f:
            return b"\0memtint_set_colors\0" in f.read()
    except OSError:
        return False


def library_path() -> str:
    """The absolute path of libmemtint.so; an error saying how to get it when it is missing."""
    override = os.environ.get("MEMTINT_LIB")
    if override:
        if os.path.isdir(override):
            raise LibraryMissingError(f"MEMTINT_LIB={override}: is a directory; give the library file (libmemtint.so)")
        if not os.path.isfile(override):
            raise LibraryMissingError(f"MEMTINT_LIB={override}: no such file (unset it to use the built library)")
        # ld.so ignores a preload that is not a shared object: the program would run uncoloured.
        from memtint.linux.elf import read_elf

        elf = read_elf(override)
        if elf is None or not elf.dynamic:
            raise LibraryMissingError(f"MEMTINT_LIB={override}: not a shared library (ld.so would ignore it and the "
                                      "program would run uncoloured); give libmemtint.so")
        # Another shared library (libm, an old build) preloads fine and colours nothing.
        if not exports_libmemtint(override):
            raise LibraryMissingError(f"MEMTINT_LIB={override}: a shared library without libmemtint's functions "
                                      "(memtint_set_colors): the program would run uncoloured; give libmemtint.so")
        return os.path.abspath(override)
    if not os.path.isfile(PACKAGED):
        raise LibraryMissingError(
            f"libmemtint is not built ({PACKAGED} is missing): run make build, or set MEMTINT_LIB to the library"
        )
    return PACKAGED
