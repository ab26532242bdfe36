"""Whether LD_PRELOAD can reach a program: only the dynamic loader honours it, and the kernel runs
the dynamic loader only for an ELF executable with a program interpreter (PT_INTERP). A
statically linked program (static or static-pie) has none, so libmemtint never loads and the
heap stays uncoloured while the program runs normally. A script (#!) is judged by its
interpreter, through `env` to the program env runs."""

from __future__ import annotations

import os
import shutil
import struct
import sys
from dataclasses import dataclass

PT_DYNAMIC = 2
PT_INTERP = 3
PN_XNUM = 0xFFFF
# The kernel follows at most this many #! interpreters (binfmt_script).
SCRIPT_DEPTH = 5


@dataclass
class ElfProgram:
    interpreter: str | None  # PT_INTERP, e.g. /lib64/ld-linux-x86-64.so.2
    dynamic: bool  # has PT_DYNAMIC (a static-pie has one, yet no interpreter)


def read_elf(path: str) -> ElfProgram | None:
    """The program headers that decide preloading; None for a file that is not an ELF executable
    this reader understands (left to the kernel to run or refuse)."""
    try:
        with open(path, "rb") as f:
            head = f.read(64)
            if len(head) < 52 or head[:4] != b"\x7fELF" or head[4] not in (1, 2) or head[5] not in (1, 2):
                return None
            wide = head[4] == 2
            order = "<" if head[5] == 1 else ">"
            if wide:
                if len(head) < 64:
                    return None
                phoff, = struct.unpack_from(order + "Q", head, 32)
                phentsize, phnum = struct.unpack_from(order + "HH", head, 54)
            else:
                phoff, = struct.unpack_from(order + "I", head, 28)
                phentsize, phnum = struct.unpack_from(order + "HH", head, 42)
            if phnum == PN_XNUM or phentsize < (56 if wide else 32) or phnum > 4096:
                return None
            f.seek(phoff)
            table = f.read(phentsize * phnum)
            if len(table) < phentsize * phnum:
                return None
            interpreter = None
            dynamic = False
            for i in range(phnum):
                base = i * phentsize
                p_type, = struct.unpack_from(order + "I", table, base)
                if p_type == PT_DYNAMIC:
                    dynamic = True
                elif p_type == PT_INTERP:
                    if wide:
                        offset, = struct.unpack_from(order + "Q", table, base + 8)
                        size, = struct.unpack_from(order + "Q", table, base + 32)
                    else:
                        offset, = struct.unpack_from(order + "I", table, base + 4)
                        size, = struct.unpack_from(order + "I", table, base + 16)
                    f.seek(offset)
                    interpreter = f.read(min(size, 4096)).split(b"\0", 1)[0].decode(errors="replace")
            return ElfProgram(interpreter, dynamic)
    except (OSError, struct.error):
        return None


def find_program(name: str, path_env: str | None) -> str | None:
    """The file `name` runs, as execvp finds it (a name with a slash is taken as it is)."""
    if "/" in name:
        return name if os.path.isfile(name) else None
    return shutil.which(name, path=path_env if path_env is not None else os.defpath)


def _shebang(path: str) -> list[str] | None:
    try:
        with open(path, "rb") as f:
            line = f.read(256)
    except OSError:
        return None
    if not line.startswith(b"#!"):
        return None
    words = line[2:].split(b"\n", 1)[0].decode(errors="replace").split()
    return words or None


def _after_env(words: list[str], path_env: str | None) -> str | None:
    """The program `env [-S] [-i] [-u NAME] [NAME=VALUE]... PROGRAM` runs (a #! line's words,
    split again as -S does)."""
    rest, _ = env_command(" ".join(words).split(), {})
    return find_program(rest[0], path_env) if rest else None


def env_command(words: list[str], env: dict[str, str]) -> tuple[list[str], dict[str, str]]:
    """What `env [OPTION]... [NAME=VALUE]... COMMAND` runs, and in which environment."""
    env = dict(env)
    i = 0
    while i < len(words):
        word = words[i]
        if word in ("-u", "--unset") and i + 1 < len(words):
            env.pop(words[i + 1], None)
            i += 2
        elif word.startswith("--unset="):
            env.pop(word.split("=", 1)[1], None)
            i += 1
        elif word in ("-i", "--ignore-environment", "-"):
            env = {}
            i += 1
        elif word in ("-C", "--chdir"):
            i += 2
        elif word.startswith("-"):
            i += 1
        elif "=" in word:
            key, _, value = word.partition("=")
            env[key] = value
            i += 1
        else:
            return words[i:], env
    return [], env


def _loaders() -> set[tuple[int, int]]:
    """The dynamic loaders this system uses (run as a program, `ld.so PROG` honours LD_PRELOAD)."""
    found = set()
    for program in (sys.executable, "/bin/sh"):
        elf = read_elf(program)
        if elf and elf.interpreter:
            try:
                st = os.stat(elf.interpreter)
                found.add((st.st_dev, st.st_ino))
            except OSError:
                pass
    return found


def static_program(argv0: str, path_env: str | None) -> str | None:
    """Why LD_PRELOAD cannot load a library into `argv0` (found on `path_env`), or None when it
    can or the program cannot be judged (not found, not ELF: the start itself reports those)."""
    path = find_program(argv0, path_env)
    chain = []
    for _ in range(SCRIPT_DEPTH):
        if path is None:
            return None
        words = _shebang(path)
        if words is None:
            break
        chain.append(path)
        # the kernel takes the interpreter's path as written (no PATH search)
        interpreter = words[0] if os.path.isfile(words[0]) else None
        if interpreter and os.path.basename(interpreter) == "env" and len(words) > 1:
            interpreter = _after_env(words[1:], path_env)
        path = interpreter
    else:
        return None
    if path is None:
        return None
    elf = read_elf(path)
    if elf is None or elf.interpreter is not None:
        return None
    try:
        st = os.stat(path)
        if (st.st_dev, st.st_ino) in _loaders():
            return None
    except OSError:
        return None
    if chain:
        what = f"{argv0} is a script run by {path}, which"
    else:
        what = argv0 if os.path.abspath(argv0) == os.path.abspath(path) else f"{argv0} ({path})"
    kind = "a static-pie executable" if elf.dynamic else "statically linked"
    return (f"{what} is {kind}: its ELF has no program interpreter (PT_INTERP), so no dynamic loader runs "
            "and LD_PRELOAD cannot load libmemtint into it; its heap would not be coloured, in any --mode. "
            "Build it dynamically (without -static), or link it with native/build/libmemtint.a and allocate "
            "with memtint_malloc after memtint_set_colors (docs/libmemtint.md)")
