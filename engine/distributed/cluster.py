"""Where the frames are rendered: a Dask client for an existing cluster, or an embedded
``LocalCluster`` on this machine.

``dask_client(client=None, scheduler=None, workers=None)`` yields a connected
``distributed.Client``:

- ``client``: yours, used as it is (and left open);
- ``scheduler``: the address of a running scheduler (``tcp://HOST:8786``, or
  ``tls://...`` with a ``security`` object), which must have at least one worker within
  ``connect_timeout`` seconds;
- ``workers``: N worker processes on this machine, each with ``threads_per_worker``
  threads (default 1), the scheduler and the workers bound to 127.0.0.1 and no
  dashboard. Closed again at the end.

The workers rule: an embedded cluster has at most ``max_local_workers()`` worker
processes, the CPU cores this process may run on (``os.sched_getaffinity``; 2 on a
2-core machine). Each worker renders one frame at a time on one core and holds its own
copy of the scene, so more workers than cores only add memory and start-up time (1000
of them on 2 cores never rendered a frame). A larger N is capped to that number with a
warning on the ``engine`` logger. For more parallelism, use more machines
(``scheduler``).

Ctrl-C: the embedded workers ignore SIGINT (they are started with it ignored, and a
worker that Dask restarts sets it again, see ``dask_setup``), so a Ctrl-C in a terminal,
which reaches the whole process group, stops only this process: it cancels the tasks,
keeps the frames so far and closes the cluster, instead of the workers dying with
tracebacks while the client waits for them. While the embedded cluster starts or closes
(a second or two each) this process ignores SIGINT too, so it is never left half made.

Connecting to ``scheduler``: the address is checked first (scheme, host and port), then
one connection is opened and Dask's handshake awaited within ``connect_timeout`` seconds
(Dask itself waits forever for a peer that accepts but does not answer, and fails with
a 3 EiB allocation on an HTTP port such as the dashboard's 8787). Each failure is one
EngineError line.

Threads: a worker process runs ``threads_per_worker`` tasks at once and each task sets
Numba's thread count for its thread (``RenderJob.numba_threads``, default 1). The
embedded cluster also starts its workers with ``NUMBA_NUM_THREADS`` and the BLAS/OpenMP
thread variables set to that, so N workers use N cores, not N times the machine.

Security: a Dask scheduler runs whatever code any client that reaches it sends. The
embedded cluster listens on 127.0.0.1 only; a scheduler for other machines belongs on a
private network or behind TLS with certificates (docs/distributed.md).
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import signal
import threading

from ..errors import EngineError

__all__ = ["DEFAULT_CONNECT_TIMEOUT", "check_address", "check_timeout", "check_workers",
           "dask_client", "local_cluster", "max_local_workers", "require_dask", "share"]

log = logging.getLogger("engine")

DEFAULT_CONNECT_TIMEOUT = 20.0
# Worker settings for rendering (measured on a 1280x720 bunny frame in a worker, 2
# cores): Dask's statistical profiler samples every thread's stack every 10 ms (74 -> 42
# ms per frame without it), and the nanny's default MALLOC_TRIM_THRESHOLD_=65536 makes
# glibc map and unmap every large buffer each frame (2.1x the CPU time per frame).
WORKER_CONFIG = {"distributed.worker.profile.enabled": False,
                 "distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None}
_THREAD_VARS = ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                "MKL_NUM_THREADS")


def require_dask():
    """Import ``distributed``; EngineError with the install line when it is missing."""
    try:
        import distributed
    except ImportError as exc:
        raise EngineError(f"distributed rendering needs Dask ({exc.name} is not installed): "
                          f"pip install 'frustum[distributed]'") from None
    return distributed


def _count(value, name) -> int:
    if isinstance(value, bool) or int(value) != value or int(value) < 1:
        raise EngineError(f"{name} must be a whole number >= 1, got {value!r}")
    return int(value)


def max_local_workers() -> int:
    """The most worker processes an embedded cluster starts: the CPU cores this process
    may run on (its affinity mask; ``os.cpu_count()`` where there is none)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def capped_workers(workers) -> int:
    """``workers`` as a count, capped to ``max_local_workers()`` with a warning (the
    workers rule in the module docstring). EngineError for a count below 1."""
    workers = _count(workers, "workers")
    cap = max_local_workers()
    if workers > cap:
        log.warning("%d workers are more than the %d CPU cores this process may use; "
                    "starting %d (one worker per core: more only add memory)",
                    workers, cap, cap)
        return cap
    return workers


def dask_setup(worker):
    """Dask preload hook (``preload=["engine.distributed.cluster"]``), run in each
    embedded worker process as it starts, restarts included: ignore SIGINT there (see
    the module docstring), and quiet the note each cancelled task logs."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    # Tasks cancelled by a stopped render are expected: not a warning per task.
    logging.getLogger("distributed.worker.state_machine").setLevel(logging.ERROR)
    logging.getLogger("distributed.worker").addFilter(_peer_gone_filter)


def _peer_gone_filter(record: logging.LogRecord) -> bool:
    """False (drop) for a worker's "failed during get data" error with its traceback:
    a peer worker of the same local cluster closed while a result was fetched from it,
    which happens when an interrupted render shuts the cluster down (Dask then runs the
    task elsewhere, so it is no fault of the render). Every other record passes."""
    return not str(record.msg).startswith("failed during get data")


@contextlib.contextmanager
def _sigint_ignored():
    """SIGINT ignored while worker processes are spawned (they inherit it); the handler
    before is restored after. Only in the main thread."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)


def local_cluster(workers: int, threads_per_worker: int = 1, numba_threads: int | None = 1,
                  memory_limit="auto"):
    """A started ``LocalCluster`` of ``workers`` processes on 127.0.0.1 (random ports,
    no dashboard), each worker's Numba/OpenMP/BLAS pools sized ``numba_threads``.
    ``workers`` is capped to ``max_local_workers()`` with a warning; the workers ignore
    SIGINT (module docstring)."""
    distributed = require_dask()
    workers = capped_workers(workers)
    threads_per_worker = _count(threads_per_worker, "threads per worker")
    n = str(numba_threads or os.cpu_count() or 1)
    env = {name: n for name in _THREAD_VARS}
    quiet_dask_logs()
    import dask

    # No dashboard (dashboard_address=None); the scheduler's small HTTP endpoint (health,
    # metrics) still starts, so bind it to a random port on 127.0.0.1 too. Workers get
    # WORKER_CONFIG (no statistical profiler, glibc's default memory trimming).
    with dask.config.set(WORKER_CONFIG), _sigint_ignored():
        return distributed.LocalCluster(
            n_workers=workers, threads_per_worker=threads_per_worker, processes=True,
            host="127.0.0.1", scheduler_port=0, dashboard_address=None,
            worker_dashboard_address=None, silence_logs=logging.WARNING, env=env,
            memory_limit=memory_limit, preload=[__name__],
            scheduler_kwargs={"dashboard_address": "127.0.0.1:0", "dashboard": False})


def check_worker_config(client):
    """Log a warning naming the settings when workers of a cluster started elsewhere
    run with Dask defaults that slow rendering about 2x (see WORKER_CONFIG)."""
    try:
        found = client.run(_slow_settings)
    except Exception:  # noqa: BLE001 - advice only; never fail a render over it
        return
    slow = sorted({s for settings in found.values() for s in settings})
    if slow:
        log.warning("Dask workers run with %s, which makes rendering up to 2x slower: give "
                    "them distributed.worker.profile.enabled: false and distributed.nanny."
                    "pre-spawn-environ.MALLOC_TRIM_THRESHOLD_: null in a Dask config file "
                    "(docs/distributed.md)", " and ".join(slow))


def _slow_settings() -> list:
    import dask

    slow = []
    if dask.config.get("distributed.worker.profile.enabled", True):
        slow.append("the statistical profiler on")
    if os.environ.get("MALLOC_TRIM_THRESHOLD_"):
        slow.append(f"MALLOC_TRIM_THRESHOLD_={os.environ['MALLOC_TRIM_THRESHOLD_']}")
    return slow


def quiet_dask_logs(level=logging.WARNING):
    """Dask's start/stop chatter (INFO) off; its warnings (a worker lost) still show."""
    for name in ("distributed", "distributed.scheduler", "distributed.nanny",
                 "distributed.worker", "distributed.core", "distributed.client",
                 "distributed.deploy"):
        logger = logging.getLogger(name)
        if logger.getEffectiveLevel() < level:
            logger.setLevel(level)


def check_workers(client, timeout: float = DEFAULT_CONNECT_TIMEOUT) -> int:
    """Wait until the cluster has a worker; return the total worker threads. Raises
    EngineError when none comes within ``timeout`` seconds (tasks would wait forever)."""
    try:
        client.wait_for_workers(1, timeout=timeout)
    except (TimeoutError, OSError) as exc:
        raise EngineError(f"the Dask scheduler {client.scheduler.address} has no workers "
                          f"(waited {timeout:g} s): start some with 'dask worker "
                          f"{client.scheduler.address} --nthreads 1' ({exc})") from None
    return max(1, sum(client.nthreads().values()))


def check_address(address) -> str:
    """A scheduler address (``tcp://HOST:PORT``, ``tls://...``, or ``HOST:PORT``) as a
    string; EngineError naming the problem for one Dask cannot use (checked before any
    connection is tried)."""
    from distributed.comm.addressing import parse_address, parse_host_port
    from distributed.comm.registry import get_backend

    text = str(address).strip()
    try:
        scheme, loc = parse_address(text)
        get_backend(scheme)
        if scheme in ("tcp", "tls", "ws", "wss"):
            host, port = parse_host_port(loc)
            if not host or any(c.isspace() or c in "/?#" for c in host):
                raise ValueError(f"{host!r} is not a host name")
            if not 0 < port < 65536:
                raise ValueError(f"port {port} is outside 1..65535")
    except (ValueError, TypeError) as exc:
        raise EngineError(f"bad Dask scheduler address {text!r}: {exc} (the form is "
                          f"tcp://HOST:PORT)") from None
    if not loc:
        raise EngineError(f"bad Dask scheduler address {text!r}: no host")
    return text


def check_timeout(seconds) -> float:
    """``seconds`` as a float when it is a finite number > 0, else EngineError (Dask
    takes timeouts as text and fails on 'infs')."""
    try:
        value = float(seconds)
    except (TypeError, ValueError):
        value = math.nan
    if not (value > 0 and math.isfinite(value)):
        raise EngineError(f"the connect timeout must be a finite number of seconds > 0, "
                          f"got {seconds!r}")
    return value


_NOT_DASK = ("(is it an HTTP port, such as the dashboard's 8787? a Dask scheduler "
             "listens on 8786 by default)")


def _handshake(address: str, timeout: float, security=None):
    """Open one connection to ``address`` and await Dask's handshake, all within
    ``timeout`` seconds; EngineError (one line) when it fails."""
    import asyncio
    import concurrent.futures

    from distributed.comm import connect

    kwargs = security.get_connection_args("client") if security is not None else {}

    async def probe():
        # connect() retries a refused connection until `timeout` and then raises
        # OSError; the margin lets that happen first, so a refusal is reported as one
        # and only a peer that accepted but never answered meets the outer bound.
        comm = await asyncio.wait_for(connect(address, timeout=timeout, **kwargs),
                                      timeout + 1.0)
        await comm.close()

    # In a thread of its own: the caller may be inside an event loop (Jupyter).
    pool = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="frustum-connect")
    try:
        pool.submit(asyncio.run, probe()).result()
    except (asyncio.TimeoutError, TimeoutError):
        raise EngineError(f"cannot connect to the Dask scheduler {address}: it accepted "
                          f"the connection but sent no Dask handshake within {timeout:g} s "
                          f"{_NOT_DASK}") from None
    except OSError as exc:
        text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise EngineError(f"cannot connect to the Dask scheduler {address}: {text}") from None
    except Exception as exc:  # noqa: BLE001 - garbage read as Dask frames, of any kind
        raise EngineError(f"cannot connect to the Dask scheduler {address}: its answer is "
                          f"not Dask's protocol ({type(exc).__name__}) {_NOT_DASK}") from None
    finally:
        pool.shutdown(wait=False)


@contextlib.contextmanager
def dask_client(client=None, scheduler: str | None = None, workers: int | None = None,
                threads_per_worker: int = 1, numba_threads: int | None = 1,
                connect_timeout: float = DEFAULT_CONNECT_TIMEOUT, security=None):
    """Yield a connected ``distributed.Client`` (see the module docstring); exactly one
    of ``client``, ``scheduler`` and ``workers`` must be given. Clients and clusters it
    made are closed at the end. Raises EngineError for a scheduler it cannot reach or
    that has no workers, and for bad counts."""
    given = [name for name, v in (("client", client), ("scheduler", scheduler),
                                  ("workers", workers)) if v is not None]
    if len(given) != 1:
        raise EngineError(f"give one of client, scheduler and workers, got "
                          f"{', '.join(given) or 'none'}")
    connect_timeout = check_timeout(connect_timeout)
    if client is not None:
        check_workers(client, connect_timeout)
        yield client
        return
    distributed = require_dask()
    if scheduler is not None:
        address = check_address(scheduler)
        quiet_dask_logs()
        _handshake(address, connect_timeout, security)
        try:
            c = distributed.Client(address, timeout=connect_timeout, security=security,
                                   set_as_default=False)
        except Exception as exc:  # noqa: BLE001 - it answered the handshake: one line
            raise EngineError(f"cannot connect to the Dask scheduler {address}: "
                              f"{str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"
                              ) from None
        try:
            check_workers(c, connect_timeout)
            check_worker_config(c)
            yield c
        finally:
            c.close()
        return
    # Starting and closing take a second or two; a Ctrl-C then would leave the cluster
    # half made or half closed (and Dask waiting on it at exit), so it is ignored there.
    with _sigint_ignored():
        cluster = local_cluster(workers, threads_per_worker, numba_threads)
        try:
            c = distributed.Client(cluster, set_as_default=False)
        except BaseException:
            cluster.close()
            raise
    try:
        check_workers(c, connect_timeout)
        yield c
    finally:
        with _sigint_ignored(), _nanny_kills_quiet():
            c.close()
            cluster.close()


@contextlib.contextmanager
def _nanny_kills_quiet():
    """The nannies' "Worker process still alive after 4.0 seconds, killing" warning
    off while our own local cluster closes: a worker still busy with a frame (an
    interrupted render on a loaded machine) is killed then by design, its work
    discarded; any other nanny warning or error still shows."""
    nanny = logging.getLogger("distributed.nanny")
    nanny.addFilter(_not_a_kill_at_close)
    try:
        yield
    finally:
        nanny.removeFilter(_not_a_kill_at_close)


def _not_a_kill_at_close(record: logging.LogRecord) -> bool:
    return not str(record.msg).startswith("Worker process still alive after")


def _value(x):
    return x


def share(client, value, key: str):
    """A future holding ``value`` for many tasks: a task that returns it, so the value
    travels to the scheduler once and on to the workers that need it, and is recomputed
    if every worker holding it dies (``client.scatter`` data would be lost then, and
    every task depending on it cancelled)."""
    return client.submit(_value, value, key=key, pure=False)
