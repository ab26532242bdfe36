"""The Ray backend: a sweep's tasks shipped to Ray workers (``memtint sweep --ray auto|ADDRESS``).

The sweep code is the same as on the local process pool (runner.py): the worker functions of
:mod:`memtint.sweep.runs` are wrapped in ``ray.remote`` and their plain-data items become task
arguments. At most ``2 * slots`` tasks are in flight (``slots``: the cluster's CPUs when the backend
starts), and finished tasks are collected with ``ray.wait`` in completion order.

Ray is an optional dependency (``pip install 'memtint[ray]'``); this module imports it only when
a backend is created. memtint itself must be installed on every node of a cluster (same version:
the configuration hash includes it).
"""

from __future__ import annotations

import os
import socket
from typing import Any, Callable, Iterable, Iterator

from memtint.api import MemtintError
from memtint.sweep.backends import WorkerError

__all__ = ["RayBackend", "RayNotInstalled", "import_ray"]

INSTALL_HINT = "Ray is not installed: pip install 'memtint[ray]'"
#: Cancelling tasks: rounds of cancel-and-wait, and each round's wait in seconds.
CANCEL_ROUNDS = 4
CANCEL_WAIT = 0.25


class RayNotInstalled(MemtintError):
    """``--ray`` was asked for but the ``ray`` package cannot be imported."""


def import_ray() -> Any:
    """The ``ray`` module, or :class:`RayNotInstalled` saying how to install it."""
    try:
        import ray
    except ImportError:
        raise RayNotInstalled(INSTALL_HINT) from None
    return ray


def _check_reachable(address: str, timeout: float = 10.0, what: str = "") -> None:
    """Fail fast on a cluster address nothing listens at (``ray.init`` would retry for minutes)."""
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        return  # not host:port: let Ray interpret it
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout).close()
    except OSError as error:
        where = f"{address} ({what})" if what else address
        raise MemtintError(f"cannot reach the Ray cluster at {where}: {error.strerror or error}") from None


class RayBackend:
    """Tasks on a Ray cluster.

    ``address``: ``"auto"`` (or None) calls ``ray.init()``, which connects to the cluster named by
    ``$RAY_ADDRESS`` when it is set (else to a Ray started on this machine with ``ray start``) and
    starts a local Ray otherwise; any other value is a cluster address for
    ``ray.init(address=...)`` (e.g. ``ray://head:10001`` or ``head:6379``), checked to accept
    connections first. When Ray is
    already initialised in this process (e.g. by the caller), that session is used as it is.
    :meth:`close` calls ``ray.shutdown()`` only if this backend called ``ray.init()``: that stops
    a local Ray it started, and only disconnects from a cluster (which keeps running). ``init_options`` are passed on to
    ``ray.init``. ``max_in_flight`` bounds the submitted, unfinished tasks (default ``2 * slots``).
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
                raise MemtintError(f"cannot start or reach Ray ({where}): {error}") from None
            self._started = True
            # ray.init installs its own SIGINT/SIGTERM handlers; memtint's come back.
            from memtint import stopping

            stopping.reinstall()
        self.slots = max(1, int(ray.cluster_resources().get("CPU", 1)))
        self.max_in_flight = max(1, max_in_flight or 2 * self.slots)
        self._remote: dict[Callable[[Any], Any], Any] = {}
        self._in_flight: dict[Any, Any] = {}  # ObjectRef -> item, of the map being iterated

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
                        cause = getattr(error, "cause", None) or error
                        result = WorkerError(f"{type(cause).__name__}: {cause}")
                    yield item, result
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
