"""The engine: one Mesa model on Mesa's discrete-event simulator, for every platform and policy.

Key components:
    SchedulingModel (model.py): the model: construction, the run and Mesa's step, the record.
    RunJobs (arrivals.py): the run's jobs, made at their arrival and dropped at their completion.
    EventHandlers (handlers.py): what each event does (arrivals, attempt ends, failures, repairs,
        preventive migrations) and the resilience set-up.
    Pass (scheduling_pass.py): one scheduling pass: ask the policy, check and apply its actions,
        record the pass and the fairness columns.
    SimulationRecord, the record's columns (record.py): the tables metrics read.
    EngineSimulator, EventPriority (events.py): the clock, the event heap, same-instant order.
    SchedulingView (view.py): what a policy may see.
    WaitQueue (wait_queue.py) with its numpy columns (queue_columns.py) and size index
        (size_index.py); RunningEnds (running_ends.py), RankSums (rank_sums.py), PassedJobs
        (passed_jobs.py): the bookkeeping the passes read.
    progress.py: how far a job's attempt got (checkpointing, preemption modes).
    guard.py: the guard around plug-in code (ExtensionCalls, the pass watchdog).
    mesa_core.py: Mesa's model, agents and simulator without the rest of Mesa (pandas, scipy).

Only :class:`SchedulingModel`, :class:`SimulationRecord`, :class:`SchedulingView`, the event
priorities, the multifactor priority's settings (:class:`PriorityWeights`, :func:`parse_fairshare_windows`), the
owners of the groups' and queues' limits (:class:`OwnerMap`) and a prime-time rule on a log's clock
(:class:`PrimeTimeRule`, :class:`LogClock`, :func:`parse_prime_time`), the standing reservations' days on that clock
(:func:`parse_standing_reservations`, :func:`standing_reservation_days`) and the effective size's spans read back from the
held reservations (:func:`size_spans`, :data:`SIZE_ORIGIN`: a run's manifest) are meant for use outside the engine;
policies see the view.
"""

from torus_sim.core.lazy_imports import lazy_attributes

_HOMES = {
    "EventPriority": "torus_sim.engine.events",
    "LogClock": "torus_sim.engine.prime_time",
    "PrimeTimeRule": "torus_sim.engine.prime_time",
    "parse_prime_time": "torus_sim.engine.prime_time",
    "parse_standing_reservations": "torus_sim.engine.standing_reservations",
    "standing_reservation_days": "torus_sim.engine.standing_reservations",
    "OwnerMap": "torus_sim.engine.limits",
    "PriorityWeights": "torus_sim.engine.multifactor",
    "parse_fairshare_windows": "torus_sim.engine.multifactor",
    "SchedulingModel": "torus_sim.engine.model",
    "SimulationRecord": "torus_sim.engine.record",
    "SchedulingView": "torus_sim.engine.view",
    "SIZE_ORIGIN": "torus_sim.engine.effective_size",
    "size_spans": "torus_sim.engine.effective_size",
}
"""Each public class -> its module, imported on first use: ``torus_sim.engine.guard`` (read by the
scenario's defaults and the command line's parser) does not pull Mesa, pandas and scipy in."""

__all__ = sorted(_HOMES)
__getattr__ = lazy_attributes(__name__, _HOMES)
