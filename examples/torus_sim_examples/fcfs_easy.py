"""FCFS-EASY written against the public API only: on a cluster its job record equals the built-in's bit for bit."""

from torus_sim.api import Policy, Reserve, Start


class PluginFcfsEasy(Policy):
    """FCFS with EASY backfilling (Lifka; Mu'alem and Feitelson 2001), placed by the run's placement.

    Args:
        placement: offered by the engine: the scenario's placement (None: MFP on the torus, lowest ids on a cluster).
    """

    name = "plug-in FCFS-EASY"
    starts_head_when_it_fits = True

    def __init__(self, placement=None) -> None:
        self.placement = placement

    def plan(self, view):
        """Start in FCFS order while the head fits, reserve for the head, backfill what does not delay it."""
        queue = view.queue
        while queue:
            allocation = view.place(queue.head, placement=self.placement)
            if allocation is None:
                break
            yield Start(queue.head, allocation)
        if not queue:
            return
        head = queue.head
        need = head.partition_size
        shadow_at, occupancy = view.shadow(need, None)
        yield Reserve(head, shadow_at)
        for job in queue.jobs()[1:]:
            free = view.free_count()
            if free == 0:
                return
            if job.partition_size > free:
                continue
            if view.now + view.predicted_remaining(job) <= shadow_at:
                allocation = view.place(job, placement=self.placement)
                if allocation is not None:
                    yield Start(job, allocation)
            else:
                allocation = view.place(job, keep_room=(occupancy, need), placement=self.placement)
                if allocation is not None:
                    yield Start(job, allocation)
                    occupancy.occupy(allocation)
