"""Reading a user's TOML file: errors that name the file and the line, never a traceback.

Bytes that are not UTF-8 (TOML files are UTF-8) are reported with their line and value; syntax
errors with tomllib's own place; an unreadable path with its reason."""

from __future__ import annotations

import os
import re
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


def key_line(text: str, key: str) -> str:
    """":N" for the line that sets ``key``, a dotted path (``sampling.unit``: ``unit =`` in its
    [sampling] table, or ``sampling.unit =`` above it), else for its [table], else for the first
    line that sets its last part anywhere (a key of an array of tables: ``threads``), else ""."""
    *tables, name = key.split(".")
    header = re.compile(r"^\s*\[+\s*([^\]]+?)\s*\]+")
    table_line = anywhere = ""
    current: list[str] = []
    for n, line in enumerate(text.splitlines(), 1):
        h = header.match(line)
        if h:
            current = [part.strip().strip('"') for part in h.group(1).split(".")]
            if current == tables + [name] and not table_line:
                table_line = f":{n}"
            continue
        for depth in range(len(tables) + 1):
            rest = ".".join(tables[depth:] + [name])
            if current == tables[:depth] and re.match(rf'^\s*"?{re.escape(rest)}"?\s*=', line):
                return f":{n}"
        if not anywhere and re.match(rf'^\s*"?{re.escape(name)}"?\s*=', line):
            anywhere = f":{n}"
    return table_line or anywhere


def array_key_line(text: str, array: str, index: int, key: str) -> str:
    """":N" for the line that sets ``key`` in the ``index``-th [[array]] table, else ""."""
    seen = -1
    for n, line in enumerate(text.splitlines(), 1):
        if re.match(rf"^\s*\[\[\s*{re.escape(array)}\s*\]\]", line):
            seen += 1
        elif re.match(r"^\s*\[", line):
            if seen == index:
                break
        elif seen == index and re.match(rf"^\s*{re.escape(key)}\s*=", line):
            return f":{n}"
    return ""


def array_table_line(text: str, array: str, index: int) -> str:
    """":N" for the ``index``-th [[array]] table's header line, else ""."""
    seen = -1
    for n, line in enumerate(text.splitlines(), 1):
        if re.match(rf"^\s*\[\[\s*{re.escape(array)}\s*\]\]", line):
            seen += 1
            if seen == index:
                return f":{n}"
    return ""


def inline_element_line(text: str, key: str, indices: list[int]) -> str:
    """":N" for the line where element ``indices`` (``[2, 1]``: the second item of the third) of
    the inline array ``key = [...]`` begins, else for the deepest of them found, else "". Strings,
    comments and inline tables are skipped as TOML reads them."""
    start = key_line(text, key)
    if not start or not indices:
        return ""
    first = int(start[1:]) - 1
    body = "".join(text.splitlines(keepends=True)[first:])
    i = body.find("=") + 1
    if i == 0:
        return ""
    line = first + 1
    opened: list[str] = []  # the brackets open around i: "[" an array, "{" an inline table
    counters: list[int] = []  # per open array, its current element's index
    waiting = False  # the next value starts an element of the innermost array
    best = ""
    while i < len(body):
        c = body[i]
        if c == "\n":
            line += 1
        elif c == "#":
            end = body.find("\n", i)
            i = len(body) if end < 0 else end
            continue
        elif not c.isspace():
            if waiting and c != "]":
                waiting = False
                counters[-1] += 1
                depth = len(counters)
                if depth <= len(indices) and counters == indices[:depth] and opened.count("{") == 0:
                    best = f":{line}"
                    if depth == len(indices):
                        return best
            if c in "\"'":
                quote = c * 3 if body.startswith(c * 3, i) else c
                j = i + len(quote)
                while j < len(body) and not body.startswith(quote, j):
                    j += 2 if c == '"' and body[j] == "\\" else 1
                line += body.count("\n", i, j)
                i = j + len(quote)
                continue
            if c in "[{":
                opened.append(c)
                if c == "[":
                    counters.append(-1)
                    waiting = True
            elif c in "]}":
                if not opened:
                    break
                if opened.pop() == "[":
                    counters.pop()
                waiting = False
                if not opened:
                    break
            elif c == "," and opened and opened[-1] == "[":
                waiting = True
            elif not opened:
                break  # the key's value is not an array
        i += 1
    return best


def in_its_file(message: str) -> str:
    """An engine error about a key of a file the engine read itself (a machine's mapping or
    device file), ``invalid configuration: m.mapping.toml: fields.bank: ...``, as
    ``m.mapping.toml:12: fields.bank: ...`` at the line that sets the key (or its table's); the
    message as it is when the file or the line is not found. A file that is not UTF-8 (the engine's
    "F: stream did not contain valid UTF-8") is named with the line and the byte."""
    bad = re.search(r"(?:^|: )([^:]+?): stream did not contain valid UTF-8", message)
    if bad and os.path.isfile(bad.group(1)):
        try:
            read_toml(bad.group(1))
        except TomlFileError as error:
            return message[:bad.start(1)] + str(error) + message[bad.end():]
    m = re.match(r"invalid configuration: (.+?\.toml): ([A-Za-z_][\w-]*(?:\.[A-Za-z_][\w-]*)*)((?:\[\d+\])*): (.*)",
                 message, re.S)
    if not m or not os.path.isfile(m.group(1)):
        return message
    path, key, index, rest = m.groups()
    try:
        with open(path, encoding="utf-8") as f:
            line = key_line(f.read(), key)
    except (OSError, UnicodeDecodeError):
        return message
    return f"{path}{line}: {key}{index}: {rest}" if line else message


def error_line(text: str, message: str) -> str:
    """":N" for the line behind an error that begins with the key it is about (``baseline: ...``,
    ``os.colours: ...``, ``mixes[2].programs[1]: ...``, ``policies[1]: ...``), else ""."""
    m = re.match(r"([A-Za-z_][\w-]*)((?:\[\d+\])*)(?:\.([A-Za-z_][\w.-]*?))?(?:\[\d+\])*: ", message)
    if not m:
        return ""
    top, index, sub = m.groups()
    # "os: ...: invalid configuration: os.colour_split: ...": the engine's own key, its own line;
    # under a table that holds another's keys ("overrides: ...: controller.x: ...") below it.
    inner = re.search(r"invalid configuration: ([A-Za-z_][\w-]*(?:\.[A-Za-z_][\w-]*)+):", message)
    if inner and not index and not sub:
        key = inner.group(1)
        within = key if key.startswith(f"{top}.") else f"{top}.{key}"
        return key_line(text, within) or key_line(text, top)
    if index:
        i = int(index[1:index.index("]")])
        # "mixes[1]: unknown key(s) 'count'": the key's line in that table, not its header
        unknown = re.search(r"unknown (?:key\(s\) '([^']+)'|field `([^`]+)`)", message)
        key = sub.split(".")[0] if sub else unknown and (unknown.group(1) or unknown.group(2)).split("'")[0]
        line = (array_key_line(text, top, i, key) if key else "") or array_table_line(text, top, i)
        # an inline array's element (mixes = [..., ["stream", "nosuch"]]: "mixes[2][1]")
        inline = [int(k) for k in re.findall(r"\[(\d+)\]", index)]
        return line or inline_element_line(text, top, inline) or key_line(text, top)
    # an inline table's key (sampling = { unit = 0 }) has its table's line
    return (key_line(text, f"{top}.{sub}") or key_line(text, top)) if sub else key_line(text, top)
