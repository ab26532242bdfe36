"""Examples in docs/ that quote a command's output match what the command writes today."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

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


def _architecture_code() -> list[str]:
    """The backticked spans and code blocks of docs/ARCHITECTURE.md."""
    text = (REPO / "docs" / "ARCHITECTURE.md").read_text()
    return re.findall(r"`([^`\n]+)`", re.sub(r"```.*?```", "", text, flags=re.S)) + \
        re.findall(r"```\n(.*?)```", text, re.S)


def test_every_python_name_the_architecture_page_gives_as_module_dot_name_exists():
    # `report.dram_summary` named a function of tables.py after a module that never had it.
    modules: dict[str, list[Path]] = {}
    for path in (REPO / "python" / "memtint").rglob("*.py"):
        modules.setdefault(path.parent.name if path.stem == "__init__" else path.stem, []).append(path)
    suffixes = {"py", "rs", "md", "toml", "json", "sh", "c", "h", "gz", "profdata"}
    missing, seen = [], 0
    for span in _architecture_code():
        for module, name in re.findall(r"\b([a-z_]+)\.([A-Za-z_]\w*)\b", span):
            if module not in modules or name in suffixes:
                continue
            seen += 1
            defined = re.compile(rf"^\s*(?:async\s+)?(?:def|class)\s+{name}\b|^{name}\s*[:=]|^from .* import .*\b{name}\b",
                                 re.M)
            submodule = any(any(p.parent.glob(f"{name}.*")) or (p.parent / name).is_dir() for p in modules[module])
            if not submodule and not any(defined.search(path.read_text()) for path in modules[module]):
                missing.append(f"{module}.{name}")
    assert seen >= 10 and missing == []


def test_the_architecture_pages_layers_are_the_ones_the_layer_test_enforces():
    text = (REPO / "docs" / "ARCHITECTURE.md").read_text()
    table = text[text.index("| layer | modules |"):].split("\n\n")[0].splitlines()[2:]
    src = REPO / "crates" / "memtint-engine" / "src"
    top = {p.stem for p in src.glob("*.rs")} | {p.name for p in src.iterdir() if p.is_dir()}
    documented = {row.split("|")[1].strip(): [m for m in re.findall(r"`([a-z_]+)(?:\.rs|/)`", row.split("|")[2]) if m in top]
                  for row in table}
    layers_rs = (REPO / "crates" / "memtint-engine" / "tests" / "engine" / "layers.rs").read_text()
    enforced = {layer: re.findall(r'"(\w+)"', modules)
                for layer, modules in re.findall(r'\("([\w ]+)", &\[([^\]]*)\]\)', layers_rs)}
    assert list(documented) == list(enforced) and len(enforced) >= 5
    assert {k: sorted(v) for k, v in documented.items()} == {k: sorted(v) for k, v in enforced.items()}


def test_every_dependency_has_its_row_in_the_readmes_table():
    # libc (the benchmarks) and ray (`memtint[ray]`) were fetched with no row saying why.
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib

    def names(table: dict) -> set[str]:
        return {n for n, spec in table.items() if not (isinstance(spec, dict) and "path" in spec)}

    wanted = set()
    for manifest in [REPO / "Cargo.toml", *sorted(REPO.glob("crates/*/Cargo.toml")), REPO / "bench" / "Cargo.toml"]:
        cargo = tomllib.loads(manifest.read_text())
        for section in ("dependencies", "dev-dependencies"):
            wanted |= names(cargo.get(section, {}))
        wanted |= names(cargo.get("workspace", {}).get("dependencies", {}))
    project = tomllib.loads((REPO / "pyproject.toml").read_text())
    specs = project["project"]["dependencies"] + [d for ds in project["project"]["optional-dependencies"].values() for d in ds]
    specs += project["build-system"]["requires"]
    wanted |= {re.match(r"[A-Za-z0-9_.-]+", spec).group(0) for spec in specs}
    readme = (REPO / "README.md").read_text()
    table = readme[readme.index("## Dependencies and why"):].split("\n## ")[0]
    listed = {word.lower() for row in re.findall(r"^\| ([^|]+) \|", table, re.M) for word in re.findall(r"[\w-]+", row)}
    assert len(wanted) >= 15 and sorted(wanted - listed) == []


def test_the_readmes_figures_for_the_committed_reports_are_the_reports_own():
    # The README kept an earlier run's CPU and wall seconds after the reports were regenerated.
    index = (REPO / "docs" / "reproductions" / "README.md").read_text()
    found = re.search(r"(\d+) simulations(?:, (\d+) of them reused[^)]*\))? in (\d+) s wall on 2 worker "
                      r"process\(es\) \((\d+) CPU seconds", index)
    runs, reused, wall, cpu = found.groups()
    readme = " ".join((REPO / "README.md").read_text().split())
    sentence = re.search(r"The committed reports [^.]*\.", readme).group(0)
    assert f"{int(cpu):,} CPU seconds" in sentence and f"{int(wall):,} s" in sentence, sentence
    assert (f"{int(reused):,} of the runs from the run cache" if reused else "none from the run cache") in sentence
    # A regeneration of some papers (the others marked as an earlier run's reports) counts only
    # its own runs; the README's count is the whole reproduction's.
    if "(an earlier run's report)" not in index:
        assert f"How long it takes: {int(runs):,} simulations" in readme


def test_the_architecture_page_names_every_python_module_and_engine_test_module():
    # numa_probe.py (`memtint numa-probe`), the Linux tools' arguments/colour_spec/errors and
    # eleven engine test modules were on no page a newcomer reads first.
    named = {word for span in _architecture_code() for word in re.findall(r"[\w.]+", span)}
    modules = [p for p in (REPO / "python" / "memtint").rglob("*.py") if p.stem != "__init__"]
    tests = sorted((REPO / "crates" / "memtint-engine" / "tests" / "engine").glob("*.rs"))
    files = modules + tests
    # A Python module may go by its name (`pagemap`); a test module by its file, since `dynamic`
    # or `numa` is a word the page uses anyway.
    unnamed = [str(p.relative_to(REPO)) for p in files if p.name not in named and (p in tests or p.stem not in named)]
    assert len(files) > 80 and unnamed == []


def _documented_names(doc: Path) -> set[str]:
    """Every name a document writes as code: in a `span` or a fenced block (TOML keys included)."""
    text = doc.read_text()
    spans = re.findall(r"```.*?```", text, re.S)
    spans += re.findall(r"`([^`\n]+)`", re.sub(r"```.*?```", "", text, flags=re.S))
    return {name for span in spans for name in re.findall(r"[A-Za-z_][\w-]*", span)}


#: Which section's tables a kind of component's parameters live in.
PARAM_SECTIONS = {"scheduler_info": "controller", "row_policy_info": "controller", "refresh_info": "controller",
                  "placement_policy_info": "os", "migration_policy_info": "os", "dynamic_policy_info": "os",
                  "resctrl_info": "os"}


def _value_after(row: str, name: str) -> str | None:
    """The value a table row gives parameter ``name``: the words after `name` up to a
    parenthesis, a comma, a semicolon, "and" or the cell's end, without quotes and digit groups."""
    found = re.search(rf"`{re.escape(name)}` (.*?)(?: \(| and |[,;:|]|$)", row)
    if not found:
        return None
    return re.sub(r"(?<=\d) (?=\d{3}\b)", "", found.group(1).replace("`", "").replace('"', "").strip())


def _same_value(documented: str, default: Any) -> bool:
    if isinstance(default, bool):
        return documented == str(default).lower()
    if isinstance(default, (int, float)):
        try:
            return abs(float(documented) - default) <= 1e-3 * abs(default)
        except ValueError:
            return False
    if default is None:
        return documented == "none"
    return documented == (json.dumps(default) if isinstance(default, list) else str(default))


def test_every_registered_components_parameter_is_in_stats_md_with_its_default():
    """Each parameter of each registered scheduler, row policy, refresh manager, placement,
    migration and dynamic policy and resctrl scheme (`memtint presets --json`) is in the row of its
    table in docs/stats.md (`[controller.tcm]`, `[os.damon]`), with the default the engine has."""
    from memtint import api

    rows = [line for line in (REPO / "docs" / "stats.md").read_text().splitlines() if line.lstrip().startswith("| `[")]
    catalogue = api.presets()
    wrong, seen = [], 0
    for kind, section in PARAM_SECTIONS.items():
        for component in catalogue[kind]:
            table = f"`[{section}.{component['name']}]`"
            row = next((r for r in rows if table in r.split("|")[1]), None)
            for name, default in component["params"].items():
                seen += 1
                value = None if row is None else _value_after(row, name)
                if row is None:
                    wrong.append(f"{table}: no row")
                elif value is None:
                    wrong.append(f"{table} {name}: not in its row")
                elif not _same_value(value, default):
                    wrong.append(f"{table} {name}: documented {value!r}, default {default!r}")
    assert seen >= 60 and wrong == []


def _keys(value: Any, path: str = "") -> dict[str, str]:
    """Every object key of a JSON value with the first path it was found at, leaving out the
    keys that are data (channel indices, command names, component tables by name)."""
    found: dict[str, str] = {}
    if isinstance(value, dict):
        for key, inner in value.items():
            if re.fullmatch(r"\d+|[A-Z][A-Za-z0-9_]*", key) or path.endswith((".params.controller", ".params.os")):
                continue
            found.setdefault(key, f"{path}.{key}")
            for k, p in _keys(inner, f"{path}.{key}").items():
                found.setdefault(k, p)
    elif isinstance(value, list):
        for inner in value:
            for k, p in _keys(inner, f"{path}[]").items():
                found.setdefault(k, p)
    return found


@pytest.mark.engine
def test_every_key_of_the_statistics_and_of_the_configuration_they_echo_is_in_the_docs(memtint, tmp_path):
    """Every key `memtint dram --json` and `memtint sim --json` write, the machine and OS tables
    they echo in `config` included, is named in docs/stats.md (a sampled run's `sampling`
    sections in docs/sampling.md, which stats.md refers them to)."""
    stats_names = _documented_names(REPO / "docs" / "stats.md")
    sampling_names = _documented_names(REPO / "docs" / "sampling.md")
    run = tmp_path / "run.toml"
    run.write_text('machine = "tcm-24c"\nprograms = ["stream", "random"]\ninstructions = 20_000\ncheck = true\n'
                   "[os]\npolicy = \"bpm\"\ndynamic = \"dynamic-bpm\"\noverflow = \"swap\"\nmemory_mb = 1\n"
                   "[os.hot_pages]\nenabled = true\n[overrides.cache.prefetcher]\nkind = \"stream\"\n")
    tiers = tmp_path / "tiers.toml"
    tiers.write_text('machine = "tiering-2to1"\ninstructions = 20_000\n[[processes]]\nthreads = ["light", "light"]\n'
                     '[os]\npolicy = "local"\nmigration = "colloid"\n')
    sampled = tmp_path / "sampled.toml"
    sampled.write_text('machine = "i7-860"\nprograms = ["stream", "random"]\ninstructions = 200_000\n')
    outputs = {}
    for name, args in {"dram": ("dram", "--machine", "ddr4-2400", "--generate", "mix", "--requests", "2000",
                                "--sources", "2", "--scheduler", "tcm", "--check"),
                       "sim": ("sim", run), "tiers": ("sim", tiers),
                       "sampled": ("sim", sampled, "--sample-unit", "2000", "--sample-warming", "2000",
                                   "--sample-period", "10000")}.items():
        out = tmp_path / f"{name}.json"
        code, _, err = memtint(*args, "--json", out)
        assert code == 0, err
        outputs[name] = json.loads(out.read_text())
    missing = []
    for name, stats in outputs.items():
        sampling = [stats.pop("sampling", None)] + [core.pop("sampling", None) for core in stats.get("cores", [])]
        missing += [f"{name}: {path}" for key, path in _keys(stats).items() if key not in stats_names]
        missing += [f"{name}: sampling {path}" for key, path in _keys(sampling).items()
                    if key not in sampling_names and not path.startswith("[].schedule")]
    assert outputs["sampled"]["cores"] and missing == []


def test_probe_md_noise_table_is_the_committed_study():
    import collections

    runs = json.loads((REPO / "docs/probe/noise.json").read_text())
    kinds = {"jitter (sd, ns)": "jitter_ns", "rounds hit by an interrupt": "spike_rate", "co-runner (GB/s)": "corunner_gbps"}
    rows = re.findall(r"^\| (jitter \(sd, ns\)|rounds hit by an interrupt|co-runner \(GB/s\)) \| ([\d.]+) \| (\d+)/(\d+) \| "
                      r"(\d+) \| (\d+) \| ([\d,]+) \|$", (REPO / "docs/probe.md").read_text(), re.M)
    groups = collections.defaultdict(list)
    for r in runs:
        groups[(r["kind"], float(r["level"]))].append(r)
    assert len(rows) == len(groups)
    for label, level, exact, n, refused, wrong, mean in rows:
        group = groups[(kinds[label], float(level))]
        outcomes = collections.Counter(r["outcome"] for r in group)
        assert (int(exact), int(n), int(refused), int(wrong)) == (
            outcomes["exact"], len(group), outcomes["refused"], len(group) - outcomes["exact"] - outcomes["refused"]), (label, level)
        assert int(mean.replace(",", "")) == round(sum(r["measurements"] for r in group) / len(group)), (label, level)
