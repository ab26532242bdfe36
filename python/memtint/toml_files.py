"""Reading a user's TOML file: errors that name the file and the line, never a traceback.

Bytes that are not UTF-8 (TOML files are UTF-8) are reported with their line and value; syntax
errors with tomllib's own place; an unreadable path with its reason."""

from __future__ import annotations

import os
from typing import Any

from memtint.api import MemtintError

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

TOMLDecodeError = tomllib.TOMLDecodeError


class TomlFileError(MemtintError):
    """A TOML file that cannot be read or parsed; the message names the file (and line)."""


def read_toml(path: str | os.PathLike[str], what: str = "TOML file") -> tuple[dict[str, Any], str]:
    """The table of the TOML file at ``path`` and its text (for finding a key's line)."""
    name = os.fspath(path)
    try:
        with open(name, "rb") as f:
            raw = f.read()
    except FileNotFoundError:
        raise TomlFileError(f"{name}: no such {what}") from None
    except IsADirectoryError:
        raise TomlFileError(f"{name}: is a directory, not a {what}") from None
    except OSError as error:
        raise TomlFileError(f"{name}: {error.strerror or error}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line = raw[:error.start].count(b"\n") + 1
        raise TomlFileError(f"{name}:{line}: not UTF-8 text (byte 0x{raw[error.start]:02x}); TOML files are UTF-8") \
            from None
    if text.startswith("\ufeff"):  # tomllib's "Invalid statement (at line 1, column 1)" said nothing of it
        raise TomlFileError(f"{name}:1: starts with a byte-order mark (EF BB BF), which TOML does not allow; save it "
                            "as UTF-8 without BOM")
    try:
        return tomllib.loads(text), text
    except tomllib.TOMLDecodeError as error:
        raise TomlFileError(f"{name}{_place(str(error), text)}") from None


def _place(message: str, text: str) -> str:
    """tomllib's ``MESSAGE (at line N, column C)`` as ``:N: MESSAGE (column C)``, as every other
    error gives a file's line, and a key given twice (``Cannot overwrite a value``) named."""
    import re

    m = re.fullmatch(r"(.*) \(at line (\d+), column (\d+)\)", message, re.S)
    if not m:
        return f": {message}"
    what, line, column = m.group(1), int(m.group(2)), m.group(3)
    lines = text.splitlines()
    if what == "Cannot overwrite a value" and 0 < line <= len(lines) and "=" in lines[line - 1]:
        key = lines[line - 1].split("=", 1)[0].strip()
        what = f"{key}: given twice (or a value already set), {what[0].lower()}{what[1:]}"
    return f":{line}: {what} (column {column})"
