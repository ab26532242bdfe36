"""Examples in docs/ that quote a command's output match what the command writes today."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
#: Host timings: the only figures of a deterministic run that change between runs.
HOST_TIMINGS = re.compile(r"^wall_seconds$|_per_second$")


def _example_after(doc: Path, heading: str) -> tuple[str, dict[str, Any]]:
    """The command named in the paragraph after ``heading`` and the JSON block that follows."""
    text = doc.read_text()
    section = text[text.index(heading):]
    command = re.search(r"`(memtint [^`]+)`", section.replace("\n", " ")).group(1)
    block = section[section.index("```json\n") + 8:]
    return command, json.loads(block[:block.index("```\n")])


def _rounded(value: Any) -> Any:
    if isinstance(value, float):
        return round(value, 4)
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_rounded(v) for v in value]
    return value


def _differences(doc: Any, real: Any, where: str = "") -> list[str]:
    """Where the documented value differs from the real one: every key the example shows must
    exist with its value, every key the output has must be shown, and a list the example cuts
    short is compared on the entries it keeps."""
    if isinstance(doc, dict) and isinstance(real, dict):
        found = [f"{where}.{k}: not in the output" for k in doc.keys() - real.keys()]
        found += [f"{where}.{k}: in the output, not in the example" for k in real.keys() - doc.keys()]
        for k in doc.keys() & real.keys():
            if not HOST_TIMINGS.search(k):
                found += _differences(doc[k], real[k], f"{where}.{k}")
        return found
    if isinstance(doc, list) and isinstance(real, list) and doc:
        return [d for i, v in enumerate(doc) for d in _differences(v, real[i], f"{where}[{i}]")]
    return [] if doc == real else [f"{where}: example {doc!r}, output {real!r}"]


def test_the_dram_statistics_example_is_that_commands_output(memtint, tmp_path):
    command, example = _example_after(REPO / "docs" / "stats.md", "### Example")
    out = tmp_path / "stats.json"
    code, _, err = memtint(*command.split()[1:-1], str(out))
    assert code == 0, err
    assert command.split()[-2:] == ["--json", "OUT"]
    assert _differences(example, _rounded(json.loads(out.read_text()))) == []


def test_the_read_latency_table_separates_thousands_in_every_cell():
    # Fractional cells printed 1703.8 beside whole ones printed 1,415.
    from rich.console import Console

    from memtint.tables import read_latency_table

    stats = {"read_latency": {"mean": 1415.0, "p50": 1285.0, "p90": 1300.5, "p99": 1500.0, "p999": 1703.8,
                              "max": 1927.5}, "read_latency_ns": {}}
    console = Console(width=120, record=True)
    console.print(read_latency_table(stats))
    text = console.export_text()
    assert "1,703.8" in text and "1,927.5" in text and "1,415" in text, text


def test_the_phases_example_runs_as_the_readme_shows_it(memtint):
    code, out, err = memtint("sim", str(REPO / "configs" / "runs" / "phases.toml"))
    assert code == 0, err
    assert "stratified by the program's" in " ".join(out.split())


def _shell_commands(text: str):
    """Each `memtint ...` command of a document's ```sh blocks (continuation lines joined, one
    per segment of `&&`, `;` or a pipe), without its comment or what follows `--`."""
    import shlex

    for block in re.findall(r"```sh\n(.*?)```", text, re.S):
        for line in re.sub(r"\\\n\s*", " ", block).splitlines():
            if " [-" in line:  # a synopsis (`[--jobs N | --ray ...]`), not a command
                continue
            for segment in re.split(r"&&|\|\||;|\|", line):
                found = re.match(r"\s*(?:sudo\s+)?(?:\S*/)?\.venv/bin/memtint\s+(.*)|\s*memtint\s+(.*)", segment)
                if found:
                    args = shlex.split(found.group(1) or found.group(2), comments=True)
                    yield segment.strip(), args[:args.index("--")] if "--" in args else args


def test_every_documented_command_line_is_one_the_command_accepts():
    import contextlib
    import io

    from memtint.cli import build_parser

    refused, seen = [], 0
    for doc in [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]:
        for line, args in _shell_commands(doc.read_text()):
            seen += 1
            args = [{"PID": "1"}.get(a, a) for a in args]  # the placeholder the docs use for a process
            err = io.StringIO()
            try:
                with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
                    build_parser().parse_args(args)
            except SystemExit as stop:
                if stop.code:
                    refused.append(f"{doc.relative_to(REPO)}: {line}: {err.getvalue().strip()}")
            # A file of the repository the command names must exist.
            refused += [f"{doc.relative_to(REPO)}: {line}: no {a}" for a in args
                        if re.match(r"(configs|workloads|bench)/\S+\.\w+$", a) and not (REPO / a).exists()]
    assert seen >= 50 and refused == []


def _c_prototypes(text: str) -> set[str]:
    """`type name(args)` of every memtint_ function declared or quoted in ``text``, spaces
    normalised."""
    found = re.findall(r"\b((?:const\s+)?(?:unsigned\s+)?\w+\s*\*?\s*memtint_\w+\([^()]*\))", text)
    return {re.sub(r"\s*(\*+)\s*", r" \1", re.sub(r"\s+", " ", p)).replace("( ", "(") for p in found}


def test_libmemtint_docs_give_the_headers_prototypes():
    header = (REPO / "native/libmemtint/include/memtint.h").read_text()
    code = re.sub(r"/\*.*?\*/", "", header, flags=re.S)
    declared = _c_prototypes(code)
    doc = (REPO / "docs/libmemtint.md").read_text()
    quoted = _c_prototypes(" ".join(re.findall(r"`([^`]*memtint_\w+\([^`]*)`", doc)))
    assert len(declared) >= 15
    assert declared - quoted == set(), "declared in memtint.h, not given in docs/libmemtint.md"
    assert quoted - declared == set(), "given in docs/libmemtint.md, not as memtint.h declares it"


def test_the_per_thread_c_example_builds_as_shown_and_colours_each_thread(tmp_path):
    import os
    import shlex
    import shutil
    import subprocess

    import pytest

    if not (REPO / "native/build/libmemtint.a").exists() or shutil.which("cc") is None:
        pytest.skip("libmemtint.a is not built (make native) or there is no C compiler")
    doc = (REPO / "docs/libmemtint.md").read_text()
    source = re.search(r"```c\n(/\* tint\.c.*?)```", doc, re.S).group(1)
    (tmp_path / "tint.c").write_text(source)
    compile_line, run_line = re.search(r"\n(cc [^\n]*tint\.c[^\n]*)\n(sudo [^\n]*\./tint)\n", doc).groups()
    args = [str(REPO / a) if a.startswith("native/") else a for a in shlex.split(compile_line)]
    built = subprocess.run(args, cwd=tmp_path, capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    if os.geteuid() != 0:
        pytest.skip("running the example reads frame numbers, which needs root")
    env = dict(os.environ, MEMTINT_QUIET="1")
    env.update(a.split("=", 1) for a in shlex.split(run_line)[1:-1])
    ran = subprocess.run(["./tint"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert ran.returncode == 0 and ran.stderr == "", ran.stderr
    lines = re.findall(r"colours (\d+)-(\d+): block in colour (-?\d+)", ran.stdout)
    assert len(lines) == 2 and all(int(a) <= int(c) <= int(b) for a, b, c in lines), ran.stdout


def test_the_machine_with_nodes_in_numa_md_runs_as_written(memtint, tmp_path):
    doc = (REPO / "docs/numa.md").read_text()
    machine = doc[doc.index("## Writing a machine with nodes"):]
    machine = machine[machine.index("```toml\n") + 8:]
    (tmp_path / "two-tier.toml").write_text(machine[:machine.index("```\n")])
    (tmp_path / "run.toml").write_text('machine = "two-tier.toml"\nprograms = ["stream", "light"]\n'
                                       'instructions = 5000\nwarmup = 0\n[os]\npolicy = "local"\n')
    code, _, err = memtint("sim", str(tmp_path / "run.toml"), "--json", str(tmp_path / "out.json"))
    assert code == 0, err
    nodes = json.loads((tmp_path / "out.json").read_text())["nodes"]
    assert [n["cores"] for n in nodes] == [[0, 1, 2, 3], [4, 5, 6, 7]]
