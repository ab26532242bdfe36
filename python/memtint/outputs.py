"""Outputs that never destroy an input, and write errors that name their file.

Every command that writes a file goes through this module:

- :func:`check_outputs` runs before any work. It refuses an output that is the same file as one
  of the command's inputs (by device and inode, so a hard link or a symlink is caught, not only
  the same name), an output inside a directory the command reads as a whole (a result store),
  two outputs that are one file, a directory, a missing or unwritable directory, and a place
  where no file can be created (``/proc/x``): each refused with the option and the path named,
  so nothing runs for minutes only to fail at the end. :func:`referenced_files` finds the
  inputs: the arguments and every file they name, followed through TOML files.
- :func:`write_json` writes strict JSON (no NaN: a figure without a value is null).
- :func:`write_text` writes a regular file through a temporary file in the same directory and
  renames it into place only when the whole text is written, so a failed write (a full disk, a
  file-size limit) leaves the old file as it was. Anything that is not a regular file (a
  character device such as ``/dev/null``, a FIFO, a terminal) is written into directly, never
  renamed over; a symlink is followed to its target. Write errors name the option and the file.
"""

from __future__ import annotations

import contextlib
import functools
import json
import math
import os
import sys
import stat
import tempfile
from typing import Any, Iterator, Iterable, Mapping

from memtint import stopping
from memtint.api import MemtintError, absolute_path


class OutputError(MemtintError):
    """An output that cannot be written, or would overwrite an input."""


def _identity(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return st.st_dev, st.st_ino


def _is_special(path: str) -> bool:
    """An existing path that is not a regular file or directory (a device, FIFO or socket)."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def _write_target(path: str) -> str:
    """Where an output at ``path`` is written: a symlink's target (the file it names is
    replaced), but a device, FIFO or socket through its link as it is (``/dev/stdout`` into a
    pipe resolves to a name in /proc that cannot be opened)."""
    return path if _is_special(path) or not os.path.islink(path) else os.path.realpath(path)


def _probe_creatable(option: str, path: str) -> None:
    """Create and remove the file, or open the existing one for writing without changing it, so
    a place that takes no file (``/proc/x``, a read-only mount) is refused before any work."""
    existed = os.path.lexists(path)
    if existed and _is_special(path):
        # Not opened: closing a FIFO would give its waiting reader end-of-file before the real
        # write, and opening some devices has effects (a tape rewinds on close). The terminal is
        # the exception: opening it changes nothing, and without one it cannot be opened at all.
        if not os.access(path, os.W_OK):
            raise OutputError(f"{option} {path}: cannot be written: permission denied")
        if os.path.realpath(path) == "/dev/tty":
            try:
                os.close(os.open(path, os.O_WRONLY | os.O_NOCTTY | os.O_CLOEXEC))
            except OSError as error:
                raise OutputError(f"{option} {path}: cannot be written: {error.strerror or error} (no terminal: "
                                  "give a file, or '-' for stdout)") from None
        return
    flags = os.O_WRONLY | os.O_CLOEXEC | (0 if existed else os.O_CREAT | os.O_EXCL)
    with stopping.deferred():  # a stop between the create and the unlink would leave the probe file
        try:
            fd = os.open(path, flags, 0o644)
        except OSError as error:
            raise OutputError(f"{option} {path}: cannot be written: {error.strerror or error}") from None
        os.close(fd)
        if not existed:
            try:
                os.unlink(path)
            except OSError:
                pass


def argument_paths(args: Iterable[str]) -> list[str]:
    """Every piece of a program's arguments that may name a file it reads: each argument, the
    value of ``--opt=FILE`` or ``key=FILE``, a short option's glued value (``-fFILE``) and the
    words of a shell string (``sh -c 'cat FILE'``). An output must be none of them; pieces that
    name no file are dropped by the checks that use them."""
    import shlex

    found: list[str] = []
    for arg in args:
        pieces = [arg]
        if "=" in arg:
            pieces.append(arg.split("=", 1)[1])
        if len(arg) > 2 and arg[0] == "-" and arg[1] != "-":
            pieces.append(arg[2:])
        if any(c.isspace() for c in arg):
            try:
                words = shlex.split(arg)
            except ValueError:  # an unbalanced quote: split on blanks
                words = arg.split()
            pieces.extend(w for word in words for w in (word, word.split("=", 1)[-1]))
        found.extend(p for p in pieces if p)
    return list(dict.fromkeys(found))


#: Tables of an input file that name what the command writes, not what it reads (a run file's
#: ``export_dram``): a second run of the file writes its export again.
OUTPUT_TABLES = frozenset({"export_dram"})


class InputError(MemtintError):
    """An input memtint cannot read as it must: a pipe, socket or device where a file belongs."""


def referenced_files(*items: object, base: str | None = None) -> list[str]:
    """The files a command reads behind its arguments: each item that names an existing file
    and, inside a TOML file (a machine, a run, a rules file) or a specification (a dict or
    list), every string that names one, relative to the file's directory (``base`` for a
    specification) or to the working directory, followed into the TOML files it finds. A
    machine file's device and mapping files, a run's traces (a ``phases:`` program's too) and its
    ``[os.hvr-online] rules`` are found alike, so an output is checked against all of them, not a list kept by hand."""
    return _walk(items, base, [])


def _walk(items: tuple, base: str | None, specials: list[str]) -> list[str]:
    """:func:`referenced_files`, also collecting into ``specials`` the names among them that exist
    but are not regular files or directories (a FIFO, a process substitution's pipe, a device)."""
    found: list[str] = []
    seen: set[str] = set()

    def visit(item: object, here: str | None) -> None:
        if isinstance(item, dict):
            for k, v in item.items():
                if k not in OUTPUT_TABLES:
                    visit(v, here)
        elif isinstance(item, (list, tuple)):
            for v in item:
                visit(v, here)
        elif isinstance(item, (str, os.PathLike)):
            text = os.fspath(item)
            if not text or len(text) > 4096 or "\0" in text:
                return
            if text.startswith("phases:"):  # a program in phases reads each phase's trace
                from memtint.api import phase_parts

                for workload, _ in phase_parts(text):
                    visit(workload, here)
                return
            for candidate in dict.fromkeys([os.path.join(here, text) if here else text, text]):
                try:
                    is_file = os.path.isfile(candidate)
                except (OSError, ValueError):
                    is_file = False
                real = os.path.realpath(candidate) if is_file else ""
                if not is_file and _is_special(candidate) and candidate not in specials:
                    specials.append(candidate)
                if not is_file or real in seen:
                    continue
                seen.add(real)
                found.append(candidate)
                if candidate.endswith(".toml"):
                    visit(_toml_strings(candidate), os.path.dirname(absolute_path(candidate)))

    for item in items:
        visit(item, base)
    return found


def file_version(path: str) -> tuple | None:
    """What identifies a file's content for a memo: its real path, inode, size and change time."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return os.path.realpath(path), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


def _toml_strings(path: str) -> object:
    version = file_version(path)
    return _parsed_toml(version) if version else None


@functools.lru_cache(maxsize=256)
def _parsed_toml(version: tuple) -> object:
    """A TOML file's table, once per version of the file (sweeps key thousands of runs by it)."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]
    try:
        with open(version[0], "rb") as f:
            return tomllib.load(f)
    except (OSError, ValueError):
        return None  # the command reports a broken file with its place


def _file_through_kernel_link(path: str) -> str | None:
    """The regular file ``path`` reaches through /dev or /proc (``/dev/stdout``, ``/dev/fd/1``,
    ``/proc/self/fd/1`` of a redirected stdout), else None: a terminal or pipe there is a stream,
    but renaming a finished output over the resolved path would replace the file."""
    literal = os.path.abspath(path)
    if not literal.startswith(("/dev/", "/proc/")):
        return None
    try:
        real = os.path.realpath(path)
        # A file that lives under /dev (a tmpfs such as /dev/shm) is an ordinary output.
        return real if os.path.isfile(path) and not real.startswith(("/dev/", "/proc/")) else None
    except (OSError, ValueError):
        return None


def _kernel_interface(path: str) -> str | None:
    """/proc or /sys when ``path`` lies in one: their files read as regular files but hold what
    the kernel says (a process's maps, a setting); an output written there is at best an error.
    A pipe, socket or device reached through /proc (``/dev/stdout`` into a pipe is
    ``/proc/self/fd/1``) is a stream, written into as any FIFO or device is."""
    if _is_special(path):
        return None
    real = os.path.realpath(path)
    for root in ("/proc", "/sys"):
        if real == root or real.startswith(root + os.sep):
            return root
    return None


def check_outputs(outputs: Mapping[str, str | None], inputs: Iterable[str | os.PathLike[str] | None] = (),
                  stores: Iterable[str | os.PathLike[str] | None] = (), inputs_are_files: bool = True) -> None:
    """Refuse, before any work, outputs that cannot be written or that are one of the inputs.

    ``outputs`` maps an option name (``--json``) to its path (``None`` for none; ``-`` is stdout
    for ``--json`` and refused for the others, which would write a file of that name); ``inputs`` are the paths the command reads (names that are not files, such as
    built-in profiles, are ignored); ``stores`` are directories it reads as a whole (a sweep's
    result store), into which no output may go: a file written there becomes part of the input.
    With ``inputs_are_files`` (every command but those that run a user's program, which may read a
    pipe as it likes), an input that is a pipe, socket or device is refused: memtint reads a trace
    more than once (its format, its content's digest for the caches, then its records), and a pipe
    gives its content once, so a run would fail on a seek or wait for ever."""
    for option, path in outputs.items():
        if path == "":  # a shell's unset variable: nothing would be written, and nothing said
            raise OutputError(f"{option}: the file name is empty; give a file name")
        if path == "-" and option != "--json":  # written as a file of that name, not to stdout
            raise OutputError(f"{option} -: is a file, and '-' (stdout) is taken only by --json; give a file name")
    given = {option: path for option, path in outputs.items() if path and path != "-"}
    input_ids: dict[tuple[int, int], str] = {}
    inputs = [p for p in inputs if p is not None]
    # And what they read in turn: a TOML file's files, a phases: program's traces (one walk finds
    # both those and the special files among them).
    specials: list[str] = []
    referenced = _walk(tuple(inputs), None, specials)
    if inputs_are_files and specials:
        raise InputError(f"{specials[0]}: is not a regular file (a pipe, socket or device); memtint reads its inputs "
                         "more than once (a trace's format, its content for the caches, then its records), and a pipe "
                         "gives them once: write it to a file and give that")
    for p in [*inputs, *referenced]:
        p = os.fspath(p)
        ident = _identity(p)
        if ident is not None and not _is_special(p):
            input_ids.setdefault(ident, p)
    store_dirs = [os.fspath(d) for d in stores if d is not None and os.path.isdir(d)]
    seen: dict[object, tuple[str, str]] = {}
    for option, path in given.items():
        if os.path.isdir(path):
            raise OutputError(f"{option} {path}: is a directory; give a file name")
        link = _file_through_kernel_link(path)
        if link:
            raise OutputError(f"{option} {path}: names the file {link} through the kernel's file links (a "
                              "redirected stdout); an output is written beside its file and renamed into place, which "
                              "would replace that file and lose what it holds. Give the file's own name, or '-' where "
                              "the option takes stdout")
        kernel = _kernel_interface(path)
        if kernel:
            raise OutputError(f"{option} {path}: is in {kernel}, the kernel's interface, not a file memtint writes; "
                              "give a file name elsewhere")
        ident = _identity(path)
        if ident is not None and ident in input_ids:
            same = input_ids[ident]
            also = "" if os.path.abspath(same) == os.path.abspath(path) else f" ({same}, the same file by device and inode)"
            raise OutputError(f"{option} {path}: is an input of this command{also}; writing it would destroy the input. "
                              "Give another output file")
        # Where the name is, and where the file is when the name is a symlink (written through it).
        places = {os.path.realpath(os.path.dirname(os.path.abspath(path))), os.path.dirname(os.path.realpath(path))}
        for store in store_dirs:
            root = os.path.realpath(store)
            if any(w == root or w.startswith(root.rstrip(os.sep) + os.sep) for w in places):
                raise OutputError(f"{option} {path}: is inside {store}, which this command reads as a whole; writing "
                                  "there would change or destroy the input. Give a file outside it")
        # Two outputs into one file: the second would silently replace the first.
        key: object = ident if ident is not None and not _is_special(path) else os.path.realpath(path)
        if key in seen and not _is_special(path):
            other_option, other = seen[key]
            raise OutputError(f"{option} {path} and {other_option} {other} are the same file; give each output its own")
        seen[key] = (option, path)
        directory = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(directory):
            raise OutputError(f"{option} {path}: directory {directory} does not exist")
        _probe_creatable(option, path)


def check_output_dir(option: str, path: str, inputs: Iterable[str | os.PathLike[str] | None] = (),
                     files: Iterable[str] = ()) -> None:
    """A directory a command will create or fill (``reproduce --out``, ``report --out``): refused
    before any work when it cannot be made there, is a file, or holds one of the ``inputs``: is
    an input directory (a result store) or directly holds an input file, where the command's
    files would go. A subdirectory of an input directory (``RESULTS/report``) is not refused.
    ``files``: the names of the files the command writes in it (``index.html``); one that exists
    there is checked as :func:`check_outputs` checks a file (a directory in its place, an input
    through a link), so a report is not refused after the runs it reports on."""
    if path == "":  # would be the working directory
        raise OutputError(f"{option}: the directory name is empty; give a directory name")
    if path == "-":  # a directory of that name would be made, not stdout
        raise OutputError(f"{option} -: names a directory, and '-' (stdout) is taken only by --json; give a directory "
                          "name")
    if os.path.exists(path) and not os.path.isdir(path):
        raise OutputError(f"{option} {path}: exists and is not a directory")
    real = os.path.realpath(path)
    for item in inputs:
        if item is None:
            continue
        item = os.fspath(item)
        holder = item if os.path.isdir(item) else os.path.dirname(os.path.abspath(item))
        if os.path.exists(item) and os.path.realpath(holder) == real:
            what = "is" if os.path.isdir(item) else f"holds {item},"
            raise OutputError(f"{option} {path}: {what} an input of this command; files written there would mix "
                              "with it or replace it. Give another directory")
    probe = os.path.abspath(path)
    while not os.path.exists(probe):
        parent = os.path.dirname(probe)
        if parent == probe:
            break
        probe = parent
    if not os.path.isdir(probe):
        raise OutputError(f"{option} {path}: {probe} is not a directory")
    with stopping.deferred():  # a stop between the create and the unlink would leave the probe file
        try:
            fd, name = tempfile.mkstemp(prefix=".memtint-probe-", dir=probe)
        except OSError as error:
            raise OutputError(f"{option} {path}: cannot create files under {probe}: {error.strerror or error}") from None
        os.close(fd)
        os.unlink(name)
    inputs = [i for i in inputs if i is not None]
    for name in files:
        inside = os.path.join(path, name)
        if not os.path.lexists(inside):
            continue
        if os.path.isdir(inside):
            raise OutputError(f"{option} {path}: {inside} is a directory, where this command writes its {name}; "
                              "remove it or give another directory")
        check_outputs({option: inside}, inputs)


@contextlib.contextmanager
def _temporary_beside(option: str, path: str, target: str, suffix: str) -> Iterator[tuple[int, str]]:
    """A new file beside ``target`` (its descriptor and name), for the output ``path`` written
    whole and renamed into place (:func:`_replace`): removed by a stop from the moment it exists
    (created and registered with no stop between) and when the block fails."""
    tmp = None
    try:
        with contextlib.ExitStack() as registered:
            with stopping.deferred():
                try:
                    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(target)}.", suffix=suffix,
                                               dir=os.path.dirname(os.path.abspath(target)))
                except OSError as error:
                    raise OutputError(f"{option} {path}: cannot write: {error.strerror or error}") from None
                registered.enter_context(stopping.temporary(tmp))
            yield fd, tmp
    except BaseException:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
        raise


def _replace(tmp: str, target: str) -> None:
    """Put the finished ``tmp`` in ``target``'s place, with the mode the file had (a new one's
    from the umask)."""
    try:
        os.chmod(tmp, os.stat(target).st_mode & 0o7777)
    except FileNotFoundError:
        os.chmod(tmp, 0o666 & ~_umask())
    os.replace(tmp, target)


def write_text(option: str, path: str, text: str) -> None:
    """Write ``text`` to ``path`` (UTF-8); errors name the option and the file.

    A regular file (or a new one) is written beside and renamed into place on success, so a
    failure leaves what was there; a symlink is followed and its target replaced; a device or
    FIFO is written into directly."""
    data = text.encode("utf-8")
    target = _write_target(path)
    try:
        if _is_special(target):
            with open(target, "wb") as out:
                out.write(data)
            return
        with _temporary_beside(option, path, target, ".tmp") as (fd, tmp):
            with os.fdopen(fd, "wb") as out:
                out.write(data)
            _replace(tmp, target)
    except OSError as error:
        raise OutputError(f"{option} {path}: cannot write: {error.strerror or error}") from None


@contextlib.contextmanager
def produced_file(option: str, path: str, suffix: str = ".tmp") -> Iterator[str]:
    """A path for another writer (the engine) to fill, with :func:`write_text`'s rule: for a
    regular file, a temporary file beside it, renamed into place when the block succeeds and
    removed when it fails; a device or FIFO as it is; a symlink's target. ``suffix`` ends the
    temporary's name (a writer that picks its format by the name's ending needs that ending)."""
    target = _write_target(path)
    if _is_special(target):
        yield target
        return
    with _temporary_beside(option, path, target, suffix) as (fd, tmp):
        os.close(fd)
        yield tmp
        _replace(tmp, target)


def save_figure(fig: Any, path: str, option: str = "--out", **options: Any) -> None:
    """``fig.savefig`` with :func:`write_text`'s rule: drawn beside ``path`` and renamed into
    place, so an interrupted or failed write leaves the earlier plot whole; errors name the file."""
    try:
        with produced_file(option, path, suffix=os.path.splitext(path)[1] or ".png") as tmp:
            fig.savefig(tmp, **options)
    except OSError as error:
        raise OutputError(f"{option} {path}: cannot write: {error.strerror or error}") from None


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def json_safe(value: Any) -> Any:
    """``value`` with every NaN or infinity as null: JSON has no such numbers (Python would write
    ``NaN``, which strict readers refuse); a figure that has none is absent, not a number."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    return value


def write_json(option: str, path: str | None, value: Any) -> bool:
    """Write ``value`` as JSON (valid JSON: no NaN) to a file, by :func:`write_text`'s rule, or
    to stdout for ``-``; True if it went to stdout."""
    if not path:
        return False
    text = json.dumps(json_safe(value), indent=2, allow_nan=False) + "\n"
    if path == "-":
        sys.stdout.write(text)
        return True
    write_text(option, path, text)
    return False
