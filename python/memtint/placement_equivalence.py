"""Policies that are one policy on a machine. Two placement policies can place every page alike
on a given machine (``bpm`` and ``bank-only`` on the i7-860 with four programs: BPM's even split
of the 32 bank colours gives each program the eight colours of one b21-b22 value, which is
HVR's bank-only). Results under them are then one result, and `memtint presets --same-placement`
and the reproduction reports say so instead of counting it twice.

The test is measured: every policy runs the same probe on the machine (one ``random`` profile
per core, :data:`PROBE_INSTRUCTIONS` instructions, the same seed) and policies whose whole
statistics agree bit for bit are grouped. The probe touches thousands of pages on every core,
so two policies that placed any of them on another bank or channel would differ in their row
outcomes, banks and channels used.
"""

from __future__ import annotations

import functools
import json
from typing import Any, Callable

from memtint import api
from memtint.api import MemtintError

#: Instructions per core of the probe (touches several thousand pages per core).
PROBE_INSTRUCTIONS = 30_000
PROBE_PROGRAM = "random"


#: What a run reports about the policy's settings or the host, not about what happened.
_SETTINGS = {"colours", "colours_text", "policy", "config", "wall_seconds", "warnings"}


def _measured(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _measured(v) for k, v in value.items() if k not in _SETTINGS and not k.endswith("_per_second")}
    if isinstance(value, list):
        return [_measured(v) for v in value]
    return value


def _fingerprint(result: dict[str, Any]) -> str:
    return json.dumps(_measured(result), sort_keys=True, default=str)


@functools.lru_cache(maxsize=None)
def probe(machine: str, policy: str, processes: int, os_options: str = "{}") -> str | None:
    """The probe's fingerprint under ``policy`` on ``machine`` with the ``[os]`` options in
    ``os_options`` (JSON, so that lists can be options and the cache key), or None when the
    policy cannot run there (it needs profiles or a machine variant)."""
    spec = api.build_sim_spec(machine, [PROBE_PROGRAM] * processes, instructions=PROBE_INSTRUCTIONS, policy=policy,
                              seed=1, os_options=json.loads(os_options) or None)
    try:
        return _fingerprint(api.run_sim_spec(spec))
    except MemtintError:
        return None


def probe_many(requests: list[tuple[str, str, int, str]], jobs: int = 1,
               on_probe: Callable[[int], None] | None = None) -> list[str | None]:
    """:func:`probe` of each ``(machine, policy, processes, os_options)``, in order, ``jobs`` at a
    time (threads: the engine releases the GIL while it simulates). ``on_probe`` is called with
    each request's index once it is probed."""
    from concurrent.futures import ThreadPoolExecutor, as_completed

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = {pool.submit(probe, *request): index for index, request in enumerate(requests)}
        for future in as_completed(futures):  # callbacks in this thread, as each ends
            future.result()
            if on_probe:
                on_probe(futures[future])
        return [future.result() for future in futures]


def groups(machine: str, policies: list[str] | None = None, processes: int | None = None,
           options: dict[str, dict[str, Any]] | None = None,
           on_probe: Callable[[str], None] | None = None, jobs: int = 1) -> list[list[str]]:
    """The policies of ``policies`` (default: every registered one that runs without profiles)
    that place pages identically on ``machine`` with ``processes`` programs (default: one per
    core), as groups of two or more, in the order given. ``options`` maps a label to its
    policy's ``[os]`` options (with its ``policy`` key), e.g. ``{"bpm-strided": {"policy": "bpm",
    "colour_split": "strided"}}``. ``on_probe`` is called with each label once it is probed;
    ``jobs`` probes run at a time."""
    catalogue = api.presets()
    if processes is None:
        processes = next(m for m in catalogue["machines"] if m["name"] == machine)["cores"]
    if policies is None:
        policies = [p["name"] for p in catalogue["placement_policy_info"] if not p["needs_profiles"]]
    options = options or {}
    seen: dict[str, list[str]] = {}
    for label, fp in zip(policies, probe_many([probe_request(machine, label, processes, options) for label in policies],
                                              jobs, on_probe=on_probe and (lambda i: on_probe(policies[i])))):
        if fp is not None:
            seen.setdefault(fp, []).append(label)
    return [g for g in seen.values() if len(g) > 1]


def probe_request(machine: str, label: str, processes: int,
                  options: dict[str, dict[str, Any]]) -> tuple[str, str, int, str]:
    """:func:`probe`'s arguments for ``label``, whose policy and ``[os]`` options ``options`` may give."""
    opts = dict(options.get(label, {}))
    policy = opts.pop("policy", label)
    return machine, policy, processes, json.dumps(opts, sort_keys=True)
