"""The Ray backend: a sweep's tasks shipped to Ray workers (``memtint sweep --ray auto|ADDRESS``).

The sweep code is the same as on the local process pool (runner.py): the worker functions of
:mod:`memtint.sweep.runs` are wrapped in ``ray.remote`` and their plain-data items become task
arguments. At most ``2 * slots`` tasks are in flight (``slots``: the cluster's CPUs, looked at again
every few seconds as nodes join or leave), and finished tasks are collected with ``ray.wait`` in
completion order. As it starts, the backend has each node with CPUs answer a probe: a node that
cannot import memtint, or has another version of it, stops it before any task.

Ray is an optional dependency (``pip install 'memtint[ray]'``); this module imports it only when
a backend is created. memtint itself must be installed on every node of a cluster (same version:
the configuration hash includes it).
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import re
import socket
import sys
from typing import Any, Callable, Iterable, Iterator

from memtint.api import MemtintError
from memtint.sweep.backends import WorkerError

__all__ = ["RayBackend", "RayNotInstalled", "import_ray", "ray_prints_on_stderr", "task_error_text", "worker_identity"]

INSTALL_HINT = "Ray is not installed: pip install 'memtint[ray]'"
#: Cancelling tasks: rounds of cancel-and-wait, and each round's wait in seconds.
CANCEL_ROUNDS = 4
CANCEL_WAIT = 0.25
#: Seconds the start waits for each node's answer to the probe (a node still starting a worker
#: after that is left to the tasks' own checks).
PROBE_SECONDS = 60.0
#: Seconds between two looks at the cluster's CPUs (nodes join and leave while a sweep runs).
RESIZE_EVERY = 5.0


class RayNotInstalled(MemtintError):
    """``--ray`` was asked for but the ``ray`` package cannot be imported."""


def import_ray() -> Any:
    """The ``ray`` module, or :class:`RayNotInstalled` saying how to install it."""
    try:
        import ray
    except ImportError:
        raise RayNotInstalled(INSTALL_HINT) from None
    return ray


@contextlib.contextmanager
def ray_prints_on_stderr(ray: str | None) -> Iterator[None]:
    """For a command whose stdout is its result (the sweep's table, the reproductions' table),
    while it uses Ray (``ray``: its ``--ray`` value; None changes nothing): what Ray's driver
    prints goes to stderr, without colour codes unless stderr is a terminal.

    Whatever ``log_to_driver`` says, the driver prints the raylet's error messages (``(raylet) A
    worker died or was killed ...``, ``(raylet) Task execute_run failed. There are 3 retries
    remaining ...``) on ``sys.stdout``, coloured even into a pipe (``RAY_COLOR_PREFIX=0`` leaves
    the colour of its ``[repeated 2x across cluster]``); no Ray option moves them. They tell of a
    worker the machine killed (out of memory, say), so they are kept, on stderr. The command prints
    nothing on stdout until it is done with Ray (its backend closed, which stops Ray's printing
    thread).
    """
    if ray is None:
        yield
        return
    with contextlib.redirect_stdout(_RayPrints(sys.stderr)):
        yield


#: An ANSI SGR sequence (colour, bold, reset): what Ray colours its prefixes with.
_SGR = re.compile(r"\x1b\[[0-9;]*m")


class _RayPrints(io.TextIOBase):
    """Text written to ``target`` (stderr), without SGR sequences unless ``target`` is a terminal."""

    def __init__(self, target: Any) -> None:
        self._target = target
        try:
            self._plain = not target.isatty()
        except (AttributeError, ValueError):  # no isatty, or closed
            self._plain = True

    def write(self, text: str) -> int:
        self._target.write(_SGR.sub("", text) if self._plain else text)
        return len(text)

    def flush(self) -> None:
        self._target.flush()

    def isatty(self) -> bool:
        return not self._plain

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self._target, "encoding", None) or "utf-8"


def worker_identity() -> dict[str, str]:
    """Worker side: what the start's probe compares with the driver (memtint's version and the host)."""
    from memtint.sweep.runs import memtint_version

    return {"memtint": memtint_version(), "host": socket.gethostname()}


def task_error_text(error: BaseException) -> str:
    """A failed Ray task's error in one line: the task's own exception, or what Ray says of the
    worker, without Ray's traceback of where it failed."""
    cause = getattr(error, "cause", None) or error
    text = str(cause).strip()
    lines = [line for line in text.splitlines() if line.strip()]
    if "failed to import on the worker" in text:  # unpickling the task's function: memtint missing there
        return (f"the Ray worker cannot import memtint's task ({lines[-1].strip()}): every node needs memtint "
                f"installed, the same version as here ({_memtint_version()})")
    if any(line.startswith("Traceback (most recent call last)") for line in lines):
        text = f"{lines[0].strip()} ... {lines[-1].strip()}"
    return f"{type(cause).__name__}: {text}"


def _memtint_version() -> str:
    from memtint.sweep.runs import memtint_version

    return memtint_version()


def _root_cause(error: BaseException) -> str:
    """The last line of the innermost exception behind ``error`` (why Ray could not connect), or ""."""
    inner, seen = error, set()
    while (inner.__cause__ or inner.__context__) is not None and id(inner) not in seen:
        seen.add(id(inner))
        inner = inner.__cause__ or inner.__context__
    lines = [line.strip() for line in str(inner).splitlines() if line.strip()]
    return lines[-1] if inner is not error and lines and lines[-1] not in str(error) else ""


#: An HTTP/2 client's connection preface and an empty SETTINGS frame (RFC 9113, 3.4): a Ray
#: cluster's GCS and a Ray Client server speak gRPC, and answer it with a SETTINGS frame.
_HTTP2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])


def _check_reachable(address: str, timeout: float = 10.0, what: str = "") -> None:
    """Fail fast on a cluster address nothing listens at, or where something other than Ray
    answers (the dashboard's port): ``ray.init`` would retry either for minutes, deaf to Ctrl-C."""
    where = f"{address} ({what})" if what else address
    scheme, sep, _ = address.partition("://")
    if sep and scheme != "ray":
        raise MemtintError(f"cannot reach the Ray cluster at {where}: {scheme}:// is not a cluster address (the "
                           "dashboard's address is for `ray job submit`); give the cluster's address, head:6379 from "
                           "one of its nodes or ray://head:10001 from outside")
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        return  # not host:port: let Ray interpret it
    try:
        connection = socket.create_connection((host.strip("[]"), int(port)), timeout=timeout)
    except OSError as error:
        raise MemtintError(f"cannot reach the Ray cluster at {where}: {error.strerror or error}") from None
    if os.environ.get("RAY_USE_TLS", "0").lower() not in ("0", "false", ""):
        connection.close()
        return  # TLS first: the plain preface would not be answered
    with connection:
        reply = b""
        try:
            connection.sendall(_HTTP2_PREFACE)
            while len(reply) < 9:
                chunk = connection.recv(9 - len(reply))
                if not chunk:
                    break
                reply += chunk
        except OSError:
            pass
    if len(reply) < 9 or reply[3] != 4:  # the frame header's type byte: SETTINGS
        raise MemtintError(f"cannot reach the Ray cluster at {where}: something answers there, but not as a Ray "
                           "cluster does (the dashboard's port, 8265, or a Ray Client port without ray://?); "
                           "give head:6379 (the cluster's port) or ray://head:10001")


class RayBackend:
    """Tasks on a Ray cluster.

    ``address``: ``"auto"`` (or None) calls ``ray.init()``, which connects to the cluster named by
    ``$RAY_ADDRESS`` when it is set (else to a Ray started on this machine with ``ray start``) and
    starts a local Ray otherwise; any other value is a cluster address for
    ``ray.init(address=...)`` (e.g. ``ray://head:10001`` or ``head:6379``), checked to accept
    connections first. When Ray is
    already initialised in this process (e.g. by the caller), that session is used as it is.
    :meth:`close` calls ``ray.shutdown()`` only if this backend called ``ray.init()``: that stops
    a local Ray it started, and only disconnects from a cluster (which keeps running).
    ``init_options`` are passed on to ``ray.init`` (by default ``log_to_driver=False``, and
    ``logging_level=WARNING``: Ray's warnings and errors, not its INFO lines). ``max_in_flight``
    bounds the submitted, unfinished tasks (default ``2 * slots``, following the cluster's CPUs).
    Starting raises :class:`MemtintError` when a node cannot run memtint's tasks (memtint missing
    there, or another version).
    """

    name = "ray"

    def __init__(self, address: str | None = "auto", *, max_in_flight: int | None = None,
                 init_options: dict[str, Any] | None = None) -> None:
        ray = import_ray()
        self._ray = ray
        self._started = False
        if not ray.is_initialized():
            options = dict(init_options or {})
            options.setdefault("log_to_driver", False)  # worker output would garble the progress bar
            # The driver's "ray" logger: Ray's warnings and errors, not its INFO lines ("Started a
            # local Ray instance.", the dashboard's address) around memtint's own.
            options.setdefault("logging_level", logging.WARNING)
            if address not in (None, "auto"):
                _check_reachable(address)
            elif os.environ.get("RAY_ADDRESS") not in (None, "", "auto", "local"):
                # ray.init() would connect to $RAY_ADDRESS and retry for minutes, deaf to signals.
                _check_reachable(os.environ["RAY_ADDRESS"], what="$RAY_ADDRESS")
            try:
                if address in (None, "auto"):
                    ray.init(**options)  # honours $RAY_ADDRESS, else starts a local Ray
                else:
                    ray.init(address=address, **options)
            except Exception as error:  # ConnectionError, RuntimeError, ValueError...
                where = address if address not in (None, "auto") else os.environ.get("RAY_ADDRESS", "local Ray")
                # Ray's outer error only says it failed (a cluster with token authentication: why, inside).
                cause = _root_cause(error)
                raise MemtintError(f"cannot start or reach Ray ({where}): {error}" + (f": {cause}" if cause else "")) from None
            self._started = True
            # ray.init installs its own SIGINT/SIGTERM handlers; memtint's come back.
            from memtint import stopping

            stopping.reinstall()
        self._fixed_in_flight = max_in_flight
        self._resized = 0.0
        self._resize(force=True)
        self._remote: dict[Callable[[Any], Any], Any] = {}
        self._in_flight: dict[Any, Any] = {}  # ObjectRef -> item, of the map being iterated
        try:
            self._probe()
        except BaseException:
            self.close()
            raise
        if not self._cpus:
            import sys

            sys.stderr.write("memtint: the Ray cluster has no CPUs now: each task needs one, so they wait for a node "
                             "with CPUs to join\n")

    def _resize(self, force: bool = False) -> None:
        """Follow the cluster's CPUs (an autoscaler adds nodes while the sweep runs): ``slots``
        and, unless given, ``max_in_flight`` (twice the CPUs)."""
        import time

        now = time.monotonic()
        if not force and now - self._resized < RESIZE_EVERY:
            return
        self._resized = now
        try:
            self._cpus = int(self._ray.cluster_resources().get("CPU", 0))
        except Exception:
            if not force:
                return
            self._cpus = 0
        self.slots = max(1, self._cpus)
        self.max_in_flight = max(1, self._fixed_in_flight or 2 * self.slots)

    def _probe(self) -> None:
        """Before any task: each node with CPUs imports memtint and has this version of it, else
        :class:`MemtintError` naming the nodes (a node without memtint failed every task with a
        traceback; one with another version would store its results under this version's hashes)."""
        import time

        ray = self._ray
        mine = _memtint_version()
        probe = ray.remote(num_cpus=0)(worker_identity)
        nodes: list[dict[str, Any]] = []
        try:
            from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

            nodes = [n for n in ray.nodes() if n.get("Alive") and (n.get("Resources") or {}).get("CPU")]
            refs = {probe.options(scheduling_strategy=NodeAffinitySchedulingStrategy(n["NodeID"], soft=False)).remote():
                    n.get("NodeManagerAddress") or n["NodeID"] for n in nodes}
        except (ImportError, AttributeError, KeyError, TypeError):
            refs = {}
        if not refs:  # no node with CPUs yet: any worker
            refs = {probe.remote(): "a worker"}
        waiting, answered = list(refs), []
        deadline = time.monotonic() + PROBE_SECONDS
        while waiting and time.monotonic() < deadline:  # short waits: a signal's handler runs between them
            done, waiting = ray.wait(waiting, num_returns=len(waiting), timeout=0.5)
            answered += done
        for ref in waiting:
            try:
                ray.cancel(ref, force=True)
            except Exception:
                pass
        problems = []
        for ref in answered:
            try:
                got = ray.get(ref)
            except Exception as error:
                problems.append(f"{refs[ref]}: {task_error_text(error)}")
                continue
            if got.get("memtint") != mine:
                problems.append(f"{refs[ref]} ({got.get('host')}): memtint {got.get('memtint')}, not the sweep's {mine} "
                                "(the configuration hashes include the version)")
        if problems:
            raise MemtintError("Ray node(s) cannot run memtint's tasks: " + "; ".join(problems))

    def _remote_of(self, fn: Callable[[Any], Any]) -> Any:
        remote = self._remote.get(fn)
        if remote is None:
            # One CPU per task: a comparison runs its simulations one after another (workers=1).
            remote = self._remote[fn] = self._ray.remote(num_cpus=1)(fn)
        return remote

    def map_unordered(self, fn: Callable[[Any], Any], items: Iterable[Any]) -> Iterator[tuple[Any, Any]]:
        ray = self._ray
        remote = self._remote_of(fn)
        pending: dict[Any, Any] = {}  # ObjectRef -> item
        self._in_flight = pending
        source = iter(items)

        def fill() -> None:
            while len(pending) < self.max_in_flight:
                try:
                    item = next(source)
                except StopIteration:
                    return
                pending[remote.remote(item)] = item

        try:
            fill()
            while pending:
                # With a timeout, so a signal's Python handler runs within the second (a wait
                # without one blocks in Ray's C++ until a task ends).
                done, _ = ray.wait(list(pending), num_returns=1, timeout=0.5)
                for ref in done:
                    item = pending.pop(ref)
                    try:
                        result = ray.get(ref)
                    except Exception as error:  # a dead worker or node, an unpicklable result...
                        result = WorkerError(task_error_text(error))
                    yield item, result
                self._resize()
                fill()
        finally:
            self._cancel(pending)

    def _cancel(self, pending: dict[Any, Any]) -> None:
        """Interrupted (or the caller stopped early): leave no task of ours running on the cluster.
        A cancel that reaches a worker between receiving a task and starting it can be lost (Ray
        issues #24359, #52703), so a task not ended a moment later is cancelled again, for at most
        CANCEL_ROUNDS x CANCEL_WAIT seconds (a signal's handling stays within the second)."""
        refs = list(pending)
        pending.clear()
        for _ in range(CANCEL_ROUNDS if refs else 0):
            for ref in refs:
                try:
                    self._ray.cancel(ref, force=True)
                except Exception:
                    pass
            try:
                _, refs = self._ray.wait(refs, num_returns=len(refs), timeout=CANCEL_WAIT)
            except Exception:
                return
            if not refs:
                return

    def close(self, kill: bool = False) -> None:
        # Cancelling is already forceful for Ray tasks; `kill` is the local backend's.
        self._cancel(self._in_flight)
        if self._started:
            self._started = False
            self._ray.shutdown()

    def __enter__(self) -> "RayBackend":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
