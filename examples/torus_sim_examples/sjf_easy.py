"""Example 1: shortest job first with EASY backfilling and first-fit placement, on a torus or a cluster."""

from torus_sim.api import PlacementPolicy, Policy, Reserve, Start


class FirstFit(PlacementPolicy):
    """The first free partition in the table's order (torus) or the lowest free node ids (cluster)."""

    name = "first-fit"
    occupancy_only = True

    def choose(self, table, job, candidate_ids, words, now):
        """The lowest candidate partition id."""
        return int(candidate_ids[0])

    def choose_nodes(self, free_nodes, job, now):
        """The lowest free node ids."""
        return free_nodes[: job.partition_size]


class FirstFitSjfEasy(Policy):
    """SJF priority (shortest walltime first), EASY reservation for the first job, first-fit backfilling.

    Args:
        backfill: False gives plain SJF (start in order while the first job fits).
    """

    name = "first-fit SJF-queue EASY"

    def __init__(self, backfill: bool = True) -> None:
        self.backfill = backfill
        self.placement = FirstFit()

    def queue_key(self, job):
        """Shortest requested time first; the rank breaks ties (FCFS among equals)."""
        return (job.walltime, job.rank)

    def plan(self, view):
        """Start in SJF order while the first job fits; reserve for it; backfill the rest first-fit."""
        queue = view.queue
        while queue:  # the engine applies each Start before the generator resumes: the view is live
            allocation = view.place(queue.head, placement=self.placement)
            if allocation is None:
                break
            yield Start(queue.head, allocation)
        if not queue or not self.backfill:
            return
        head = queue.head
        shadow_at, occupancy = view.shadow(head.partition_size, None)  # when the head fits, and the room then
        yield Reserve(head, shadow_at)
        for job in queue.jobs()[1:]:
            if view.free_count() == 0:
                return
            if job.partition_size > view.free_count():
                continue
            ends_in_time = view.now + view.predicted_remaining(job) <= shadow_at
            keep_room = None if ends_in_time else (occupancy, head.partition_size)  # leave the head its room
            allocation = view.place(job, keep_room=keep_room, placement=self.placement)
            if allocation is not None:
                yield Start(job, allocation)
                if not ends_in_time:
                    occupancy.occupy(allocation)
