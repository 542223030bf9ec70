"""The one guard around extension code: every call the engine makes into a policy, placement or predictor.

A plug-in (a policy, placement, failure or runtime predictor that is not torus-sim's own) is code the
engine calls but does not trust. Whatever it does, the run ends with one sentence naming the
extension, the call and the simulated time (a :class:`~torus_sim.core.errors.PolicyError`), and nothing is
written:

* an exception of any kind it raises, ``SystemExit`` (``sys.exit``) and bare ``BaseException``
  included: :meth:`ExtensionCalls.failure`. Only ``KeyboardInterrupt`` passes through: Ctrl-C
  (or a plug-in raising it) stops the run as Ctrl-C does (the command line says so in one line and
  exits 130);
* ``os._exit`` called from its code while the engine runs or while its module is imported: refused by
  :func:`exits_refused` (``os._exit`` cannot be caught; it is replaced by a function that raises
  :class:`ExitCalled` in the thread that runs guarded code, for as long as it does);
* a scheduling pass that runs longer than a wall-clock limit (a ``plan`` or a placement's ``choose``
  that never returns): stopped by :class:`PassWatchdog` with :class:`PassTimeout`;
* a write to a job it was shown, to the wait queue or to the platform while its code runs: refused
  (:func:`guarded_job_class`, :meth:`ExtensionCalls.check_engine_write`);
* a value of the wrong kind where it enters the engine (a NaN prediction, a key that cannot be
  ordered, probabilities outside [0, 1]): :meth:`ExtensionCalls.refuse`.

torus-sim's own extensions are trusted code: their calls are not wrapped (the hot paths stay as they
were), and a run with only built-ins pays nothing for the guard.

References:
    docs/policies/README.md, "What a plug-in may do, and what happens when it misbehaves".
"""

from __future__ import annotations

import math
import signal
import threading
import time
import weakref
from contextlib import contextmanager

from torus_sim.core.errors import PolicyError
from torus_sim.inputs.untrusted import ExtensionFailure, PassTimeout, raised_text

__all__ = [
    "DEFAULT_PLAN_TIMEOUT",
    "WATCHDOG",
    "ExtensionCalls",
    "PassWatchdog",
    "checked_prediction",
    "checked_queue_key",
    "guarded_job_class",
]

DEFAULT_PLAN_TIMEOUT = 600.0
"""Seconds of wall-clock time one scheduling pass may take before the run is stopped (``plan_timeout``).

Generous: the slowest built-in pass measured (conservative backfilling over 4,000 waiting jobs on
RICC-2010-2) takes well under a second on a laptop."""

# -- the pass watchdog ---------------------------------------------------------------------------


def _busy(model) -> bool:
    """Whether the model is in a pass, or (a run with a plug-in) in a call into extension code."""
    passes = getattr(model, "passes", None)
    return (passes is not None and passes.active) or model.calls.active


class _Watch:
    """One model's run under the watchdog."""

    __slots__ = ("fired", "limit", "model", "seen_pass", "since", "thread")

    def __init__(self, model, limit: float, thread: int) -> None:
        self.model = weakref.ref(model)
        self.limit = limit
        self.thread = thread
        self.seen_pass = -1
        self.since = time.monotonic()
        self.fired = False


class PassWatchdog:
    """Stop a scheduling pass that runs longer than a wall-clock limit.

    One daemon thread per process looks, every ``limit / 4`` seconds (at most every second, at least
    every 20 ms), at the models being watched: a model that has stayed in one pass (``model.passes.active``)
    or, in a run with a plug-in, in one call into its code (``model.calls.active``: a ``queue_key`` or a
    ``predict`` outside a pass) for ``limit`` seconds gets :class:`PassTimeout` raised in the thread
    that runs it: by a ``SIGALRM`` sent to the main thread (which also ends a ``time.sleep``), or, in
    another thread, by ``PyThreadState_SetAsyncExc`` (delivered at its next Python instruction: a
    thread blocked in a system call outside the main thread is stopped when the call returns).
    A pass is stopped between ``limit`` and ``limit`` + one look.

    The engine pays two attribute stores per pass (``passes.active``) and a few microseconds per run; the
    thread looks once per second at most (four times per limit), whether runs are watched or not.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._watches: dict[int, _Watch] = {}
        self._thread: threading.Thread | None = None
        self._next = 0

    @contextmanager
    def watching(self, model, limit: float | None):
        """Watch ``model``'s passes while the block runs (nothing when ``limit`` is None or infinite).

        Args:
            model: a :class:`~torus_sim.engine.model.SchedulingModel` (its ``passes.active`` and ``scheduler.passes``).
            limit: wall-clock seconds one pass may take.

        Raises:
            PassTimeout: into the block, when a pass overran.
        """
        if limit is None or not math.isfinite(limit):
            yield
            return
        ident = threading.get_ident()
        main = threading.current_thread() is threading.main_thread() and hasattr(signal, "pthread_kill")
        previous_handler = None
        watch = _Watch(model, float(limit), ident)
        if main:

            def on_alarm(signum, frame):
                target = watch.model()
                if watch.fired and target is not None and _busy(target):
                    raise PassTimeout()

            previous_handler = signal.signal(signal.SIGALRM, on_alarm)
        with self._lock:
            token = self._next
            self._next += 1
            self._watches[token] = watch
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._loop, name="torus-sim pass watchdog", daemon=True)
                self._thread.start()
        try:
            yield
        finally:
            with self._lock:
                self._watches.pop(token, None)
            if main:
                signal.signal(signal.SIGALRM, previous_handler if previous_handler is not None else signal.SIG_DFL)

    def _loop(self) -> None:
        # it never waits on an event the runs would set: a batch experiment's thousands of short runs
        # would each wake it (and make the running thread hand over the GIL); it looks once per tick
        while True:
            with self._lock:
                watches = list(self._watches.values())
            tick = min(1.0, max(0.02, min((watch.limit for watch in watches), default=4.0) / 4))
            time.sleep(tick)
            with self._lock:
                watches = [watch for watch in self._watches.values() if watch in watches]
            now = time.monotonic()
            for watch in watches:
                model = watch.model()
                if model is None or watch.fired:
                    continue
                busy = _busy(model)
                marker = (getattr(getattr(model, "scheduler", None), "passes", 0), model.calls.entries)
                if not busy or marker != watch.seen_pass:
                    watch.seen_pass = marker if busy else -1
                    watch.since = now
                    continue
                if now - watch.since >= watch.limit:
                    watch.fired = True
                    model._pass_overran = watch.limit
                    self._interrupt(watch.thread)

    @staticmethod
    def _interrupt(thread: int) -> None:
        if thread == threading.main_thread().ident and hasattr(signal, "pthread_kill"):
            signal.pthread_kill(thread, signal.SIGALRM)
            return
        import ctypes

        ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread), ctypes.py_object(PassTimeout))


WATCHDOG = PassWatchdog()
"""The process's one watchdog (its thread starts with the first watched run)."""


# -- calls into extension code ----------------------------------------------------------------


class ExtensionCalls:
    """The engine's calls into one run's extensions, each failure one :class:`PolicyError`.

    Args:
        names: the extensions by kind (``"policy"``, ``"runtime predictor"``, ...) -> their names.
        clock: ``() -> seconds``, the simulated time for the message.
        guarded: whether the run has a plug-in (jobs, queue and platform then refuse writes while
            extension code runs).

    Attributes:
        active: True while extension code runs (set by :meth:`call` and by the engine's pass).
        entries: calls made so far (the watchdog's progress marker).
        current: ``(kind, call)`` of the extension code running.
        stopped: ``(kind, call)`` the watchdog stopped outside a pass (for the message), else None.
    """

    __slots__ = ("active", "clock", "current", "entries", "guarded", "names", "stopped")

    def __init__(self, names: dict[str, str], clock, guarded: bool) -> None:
        self.names = names
        self.clock = clock
        self.guarded = guarded
        self.active = False
        self.entries = 0  # calls made (the watchdog tells one long call from many short ones)
        self.current = ("policy", "plan")  # (kind, call) of the extension code running
        self.stopped: tuple[str, str] | None = None  # (kind, call) the watchdog stopped, for the message

    def failure(self, kind: str, call: str, error: BaseException, job: int | None = None) -> PolicyError:
        """The PolicyError for what extension code raised (see :func:`raised_text`).

        Args:
            kind: the extension's kind (a key of ``names``).
            call: the hook (``plan``, ``queue_key``, ``predict``, ...).
            error: what it raised.
            job: the job concerned, or None.
        """
        if isinstance(error, PolicyError):
            return error
        if isinstance(error, ExtensionFailure):
            return PolicyError(self.names.get(error.kind, error.kind), self.clock(), job, error.reason, kind=error.kind)
        return PolicyError(self.names.get(kind, kind), self.clock(), job, f"{call} {raised_text(error)}", kind=kind)

    def refuse(self, kind: str, job: int | None, reason: str) -> PolicyError:
        """The PolicyError for a value of the wrong kind from extension code (``reason`` says what came and what is allowed)."""
        return PolicyError(self.names.get(kind, kind), self.clock(), job, reason, kind=kind)

    def call(self, kind: str, call: str, function, *args, job: int | None = None):
        """``function(*args)``, with every failure of it a PolicyError naming ``kind`` and ``call``.

        Raises:
            PolicyError: the function raised anything but ``KeyboardInterrupt``.
            KeyboardInterrupt: passed on (Ctrl-C).
        """
        was, before = self.active, self.current
        self.active = True
        self.entries += 1
        self.current = (kind, call)
        try:
            return function(*args)
        except PassTimeout:
            self.stopped = self.stopped or (kind, call)
            raise
        except KeyboardInterrupt:
            raise
        except BaseException as error:  # noqa: BLE001 - extension code: SystemExit and bare BaseException too
            raise self.failure(kind, call, error, job) from None
        finally:
            self.active = was
            self.current = before

    def check_engine_write(self, what: str) -> None:
        """Refuse a change of the engine's state made while extension code runs (``what``: ``the wait queue``).

        Raises:
            PolicyError: extension code is running.
        """
        if self.active:
            raise self.refuse(
                "policy",
                None,
                f"changed {what} it was shown; a policy reads the view and acts only through Start, Preempt, Repack and Reserve",
            )


def guarded_job_class(calls: ExtensionCalls) -> type:
    """A subclass of :class:`~torus_sim.core.job.Job` whose instances refuse writes while extension code runs.

    The engine gives a run's jobs this class when the run has a plug-in (``job.__class__ = ...``);
    reads cost what they cost on a plain job, writes from the engine one Python call more.

    Args:
        calls: the run's :class:`ExtensionCalls` (its ``active`` flag).

    Returns:
        The class (one per run, so that runs in threads side by side do not share the flag).
    """
    from torus_sim.core.job import Job

    def __setattr__(self, name, value, _calls=calls, _set=object.__setattr__):  # bound once: the engine's writes pass here
        if _calls.active:
            raise AttributeError(
                f"job {self.job_id}'s {name} is read-only to extensions: a policy reads jobs and acts only through "
                "Start, Preempt, Repack and Reserve"
            )
        _set(self, name, value)

    return type("Job", (Job,), {"__slots__": (), "__setattr__": __setattr__, "__module__": Job.__module__})


# -- values from extensions, checked where they enter the engine ------------------------------------

_NUMBER = "number"


def _key_shape(value):
    """The kind of a queue key for comparison with others: ``number``, ``text``, a tuple of kinds, or a type name.

    Raises:
        ValueError: a NaN anywhere in it (NaN is neither smaller nor larger than anything: no order).
    """
    if isinstance(value, (int, float)) or (hasattr(value, "dtype") and getattr(value, "shape", None) == ()):
        if value != value:  # NaN
            raise ValueError("NaN")
        return _NUMBER
    if isinstance(value, str):
        return "text"
    if isinstance(value, tuple):
        return tuple(_key_shape(item) for item in value)
    return type(value).__name__


def checked_queue_key(key, calls: ExtensionCalls):
    """A policy's ``queue_key`` wrapped so that a key that cannot order the queue is refused where it enters.

    Every key must be comparable with every other: numbers (no NaN), text, or tuples of those of one
    shape for all jobs (``(float, int)`` for every job, not ``"a"`` for some and ``1`` for others).

    Args:
        key: the policy's ``queue_key(job)``.
        calls: the run's guard (for the message; its failures name the policy and ``queue_key``).

    Returns:
        ``job -> key``, raising PolicyError on a failure or a bad key.
    """
    first: list = []

    def checked(job):
        value = calls.call("policy", "queue_key", key, job, job=job.job_id)
        try:
            shape = _key_shape(value)
            value < value  # noqa: B015 - an order must exist (a dict, None or a set has none)
        except (ValueError, TypeError):
            raise calls.refuse(
                "policy", job.job_id, f"queue_key returned {value!r}, which cannot be ordered (NaN, or a type without <)"
            ) from None
        if not first:
            first.append((shape, value, job.job_id))
        elif shape != first[0][0]:
            raise calls.refuse(
                "policy",
                job.job_id,
                f"queue_key returned {value!r} for this job and {first[0][1]!r} for job {first[0][2]}: "
                "every key must be of one kind (numbers, text, or tuples of one shape) to order the queue",
            )
        return value

    return checked


def checked_prediction(predict, calls: ExtensionCalls, job) -> float:
    """A plug-in runtime predictor's prediction for ``job``, refused unless a finite number of seconds >= 0.

    Args:
        predict: the predictor's ``predict(job)``.
        calls: the run's guard.
        job: the arriving job.

    Returns:
        The prediction, seconds (a float).

    Raises:
        PolicyError: the predictor raised, or returned None, text, NaN, an infinity or a negative number.
    """
    value = calls.call("runtime predictor", "predict", predict, job, job=job.job_id)
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        and not (hasattr(value, "dtype") and getattr(value, "shape", None) == () and value.dtype.kind in "iuf")
    ):
        raise calls.refuse(
            "runtime predictor", job.job_id, f"predict returned {value!r}; a prediction is a number of seconds >= 0"
        )
    value = float(value)
    if not (value >= 0 and math.isfinite(value)):
        raise calls.refuse(
            "runtime predictor", job.job_id, f"predict returned {value!r} s; a prediction is a finite number of seconds >= 0"
        )
    return value
