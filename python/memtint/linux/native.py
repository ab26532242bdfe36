"""Where libmemtint.so (the LD_PRELOAD colouring allocator, native/libmemtint) is: the
package's `_native/` directory after `make build`, or MEMTINT_LIB."""

from __future__ import annotations

import os

from memtint.linux.errors import LibraryMissingError

PACKAGED = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "_native", "libmemtint.so")


def library_path() -> str:
    """The absolute path of libmemtint.so; an error saying how to get it when it is missing."""
    override = os.environ.get("MEMTINT_LIB")
    if override:
        if not os.path.isfile(override):
            raise LibraryMissingError(f"MEMTINT_LIB={override}: no such file (unset it to use the built library)")
        return os.path.abspath(override)
    if not os.path.isfile(PACKAGED):
        raise LibraryMissingError(
            f"libmemtint is not built ({PACKAGED} is missing): run make build, or set MEMTINT_LIB to the library"
        )
    return PACKAGED
