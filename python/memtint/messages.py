"""A user's text inside a message: every error is one line, so control characters in a name or
path (a TOML string "ra\\ndom", a file name with an escape sequence) are shown escaped, as the
engine's own errors show them (crates/memtint-engine/src/error.rs)."""

from __future__ import annotations

_NAMED = {"\0": "\\0", "\r": "\\r", "\n": "\\n", "\t": "\\t"}


def escaped(text: str) -> str:
    """`text` with its control characters (C0, DEL, C1) escaped; other text unchanged."""
    if text.isprintable():
        return text
    return "".join(_NAMED.get(c, f"\\x{ord(c):02x}") if _control(c) else c for c in text)


def _control(c: str) -> bool:
    o = ord(c)
    return o < 0x20 or 0x7F <= o < 0xA0
