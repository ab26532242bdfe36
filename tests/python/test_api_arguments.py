"""Every function docs/api.md documents, called with one argument of the wrong kind at a time (a
string where a list goes, a float where a whole number goes, None, a string where a function or a
flag goes): each must be refused with the project's own error naming the argument, before any
work, never a bare TypeError, KeyError or AttributeError from inside, nor taken silently. The
wrong values are drawn from each parameter's annotation, so a new parameter is covered when it is
added."""

from __future__ import annotations

import inspect
import os
import sys
from pathlib import Path
from typing import Any, Callable

import pytest

from memtint import api, linux
from memtint.linux.errors import LinuxError
from memtint.probe.search import ProbeError

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "docs"))
import gen_api  # noqa: E402

#: The project's errors: what a user may catch. Every one is a MemtintError, so that one ``except``
#: catches them all (test_every_project_error_is_a_memtint_error).
PROJECT_ERRORS = (api.MemtintError,)

DRAM_TRACE = "0x40 R\n0x80 W\n"  # Ramulator's DRAM trace
CPU_TRACE = "3 64\n5 128 192\n"  # Ramulator's CPU trace


def _run_sim_spec() -> dict[str, Any]:
    return api.build_sim_spec("i7-860", ["light"], instructions=1000)


def _result() -> dict[str, Any]:
    return api.run_sim("i7-860", ["light"], instructions=1000)


def _sweep_spec() -> dict[str, Any]:
    return {"name": "t", "machines": ["i7-860"], "policies": ["buddy"], "instructions": 1000, "warmup": 0,
            "mixes": [{"programs": ["light", "light"]}]}


#: A cheap valid call of each documented function (arguments by name; callables build fresh
#: values, and "TMP" becomes a path in the test's directory). Functions left out: they take no
#: arguments (presets, tool_lib_dir, library_path), their valid call captures a real program for
#: minutes or writes into the checkout (capture_workload, commit_traces), or their one argument is
#: a whole specification the engine checks key by key (run_rt: tests/python/test_rt.py).
VALID: dict[str, dict[str, Any]] = {
    "memtint.run_dram": {"machine": "ddr4-2400", "workload": lambda: api.generate("random", 100)},
    "memtint.generate": {"kind": "random", "requests": 100, "seed": 1},
    "memtint.trace": {"path": "TMP/dram.trace", "format": "ramulator"},
    "memtint.run_sim": {"machine": "i7-860", "programs": ["light"], "instructions": 1000},
    "memtint.api.build_sim_spec": {"machine": "i7-860", "programs": ["light"], "instructions": 1000},
    "memtint.api.run_sim_spec": {"spec": _run_sim_spec},
    "memtint.compare": {"machine": "i7-860", "mix": ["light", "light"], "policies": ["buddy", "bpm"],
                        "instructions": 1000, "warmup": 0, "use_cache": False},
    "memtint.api.mix_metrics": {"programs": [{"ipc_alone": 1.0, "ipc_shared": 0.5}]},
    "memtint.api.cpu_trace_stats": {"workload": "light", "instructions": 1000, "seed": 1},
    "memtint.api.convert_trace": {"input": "TMP/cpu.trace", "output": "TMP/out.mtt", "to": "mtt"},
    "memtint.api.mix_programs": {"name": "intensive-4"},
    "memtint.trace_stats": {"workload": "light", "instructions": 1000, "reuse": False, "seed": 1},
    "memtint.capture.capture_trace": {"command": ["true"], "output": "TMP/cap", "limit": 1000},
    "memtint.capture.trace_files": {"prefix": "TMP/cap"},
    "memtint.workloads.load_recipes": {},
    "memtint.sweep": {"spec": _sweep_spec, "out": "TMP/sweep", "jobs": 1, "progress": False},
    "memtint.sweep.run_sweep": {"spec": _sweep_spec, "out": "TMP/sweep", "jobs": 1, "progress": False},
    "memtint.load_results": {"directory": "TMP/sweep"},
    "memtint.to_frame": {"result": _result},
    "memtint.linux.inspect_process": {"pid": os.getpid(), "machine": "i7-860"},
    "memtint.linux.colour_layout": {"machine": "i7-860", "space": "bank"},
    "memtint.linux.policy_partition": {"machine": "i7-860", "policy": "bpm", "processes": 2},
    "memtint.probe.simulate": {"machine": "i7-860", "seed": 1},
    "memtint.linux.run_coloured": {"argv": ["true"], "colours": "0-7", "machine": "i7-860"},
    "memtint.linux.run_mix": {"commands": [["true"], ["true"]], "policy": "bpm", "machine": "i7-860"},
}


def _can_run(name: str) -> str | None:
    """Why ``name``'s valid call cannot run here (None: it can)."""
    from memtint.capture import tool_lib_dir
    from memtint.linux.native import library_path

    try:
        if name == "memtint.capture.capture_trace":
            tool_lib_dir()
        if name in ("memtint.linux.run_coloured", "memtint.linux.run_mix", "memtint.linux.inspect_process"):
            if os.geteuid() != 0:
                return "reading frame numbers needs root (CI runs as root)"
            library_path()
    except PROJECT_ERRORS as error:
        return str(error)
    return None

#: Functions that build an engine input rather than run it: what they build is run, and the
#: engine's error must name the argument (as its key).
CONSUMERS: dict[str, Callable[[Any], Any]] = {
    "memtint.trace": lambda workload: api.run_dram("ddr4-2400", workload),
    "memtint.generate": lambda workload: api.run_dram("ddr4-2400", workload),
    "memtint.api.build_sim_spec": api.run_sim_spec,
}

#: Parameters that take anything by design (a subprocess's standard streams), or whose other
#: kinds are meaningful (a probe setting's name is checked by Settings).
ANY_KIND = {"stdin", "stdout", "stderr"}


def _wrong_values(annotation: str, optional: bool) -> list[Any]:
    """Values surely of the wrong kind for a parameter annotated ``annotation``."""
    a = annotation.replace(" ", "")
    values: list[Any] = [] if optional or "None" in a else [None]
    if a.startswith(("Callable", "Callable[")) or "Callable[" in a:
        return values + ["yes", 3]
    if a.startswith(("list[", "Sequence[")) or a.startswith("dict[str,Any]|list["):
        return values + ["abc", 3, {"a": 1}]
    if a.startswith("dict[") and "str" not in a.split("|", 1)[-1]:
        return values + [[("a", 1)], "x", 3]
    if a in ("int", "int|None"):
        return values + [1.5, "3", True]
    if a in ("float", "float|None"):
        return values + ["1", [1.0]]
    if a in ("bool", "bool|None"):
        return values + ["no", 1]
    if a.startswith("tuple["):
        return values + ["x", [1], 3]
    if a.startswith(("str", "SweepSpec")) or "PathLike" in a:
        return values + [3, ["x"]]
    return values + [object()]


def _cases() -> list[tuple[str, str, Any]]:
    cases = []
    for _, items in gen_api.SECTIONS:
        for name, function in items:
            if name not in VALID:
                continue
            for p in inspect.signature(function).parameters.values():
                if p.kind in (p.VAR_KEYWORD, p.VAR_POSITIONAL) or p.name in ANY_KIND:
                    continue
                annotation = p.annotation if isinstance(p.annotation, str) else getattr(p.annotation, "__name__", "")
                optional = p.default is None
                for value in _wrong_values(annotation, optional):
                    cases.append((name, p.name, value))
    return cases


def _functions() -> dict[str, Callable[..., Any]]:
    return {name: f for _, items in gen_api.SECTIONS for name, f in items}


def _arguments(name: str, tmp_path: Path) -> dict[str, Any]:
    (tmp_path / "dram.trace").write_text(DRAM_TRACE)
    (tmp_path / "cpu.trace").write_text(CPU_TRACE)
    out = {}
    for key, value in VALID[name].items():
        value = value() if callable(value) else value
        if isinstance(value, str) and value.startswith("TMP/"):
            value = str(tmp_path / value.removeprefix("TMP/"))
        out[key] = value
    return out


def test_every_documented_function_with_arguments_has_a_valid_call_or_a_reason():
    left_out = {"memtint.presets", "memtint.capture.tool_lib_dir", "memtint.linux.library_path",
                "memtint.workloads.capture_workload", "memtint.workloads.commit_traces", "memtint.run_rt"}
    assert set(_functions()) == set(VALID) | left_out


@pytest.mark.parametrize("name,valid", [(n, v) for n, v in VALID.items()], ids=list(VALID))
def test_the_valid_calls_run(name, valid, tmp_path, monkeypatch):
    monkeypatch.setenv("MEMTINT_CACHE_DIR", str(tmp_path / "cache"))
    if name == "memtint.load_results":
        _functions()["memtint.sweep"](**_arguments("memtint.sweep", tmp_path))
    if (why := _can_run(name)):
        pytest.skip(why)
    CONSUMERS.get(name, lambda built: built)(_functions()[name](**_arguments(name, tmp_path)))


@pytest.mark.parametrize("name,parameter,value", _cases(),
                         ids=[f"{n}-{p}-{type(v).__name__}:{v!r}"[:80] if not type(v) is object else f"{n}-{p}-object"
                              for n, p, v in _cases()])
def test_an_argument_of_the_wrong_kind_is_refused_by_name(name, parameter, value, tmp_path, monkeypatch):
    monkeypatch.setenv("MEMTINT_CACHE_DIR", str(tmp_path / "cache"))
    if (why := _can_run(name)):
        pytest.skip(why)
    arguments = _arguments(name, tmp_path)
    arguments[parameter] = value
    try:
        CONSUMERS.get(name, lambda built: built)(_functions()[name](**arguments))
    except PROJECT_ERRORS as error:
        assert parameter in str(error) or repr(value)[:20] in str(error), (
            f"{name}({parameter}={value!r}): the error does not name the argument: {error}")
    except Exception as error:  # noqa: BLE001 - what the test is about
        pytest.fail(f"{name}({parameter}={value!r}): {type(error).__name__} from inside: {error}")
    else:
        pytest.fail(f"{name}({parameter}={value!r}) was taken")


def test_every_project_error_is_a_memtint_error():
    """A notebook's ``except memtint.MemtintError`` catches the Linux commands' and the probe's
    errors too: a bad argument to run_coloured raised an error it did not catch."""
    import memtint
    from memtint.linux.run import run_coloured

    assert issubclass(LinuxError, memtint.MemtintError) and issubclass(ProbeError, memtint.MemtintError)
    with pytest.raises(memtint.MemtintError, match="argv"):
        run_coloured("true", machine="i7-860", colours=[0])
