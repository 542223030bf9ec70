"""Switching idle nodes off: after how long, what an off and a booting node draw, how long a boot takes.

A node (a midplane on a torus, a node on a cluster) that has been idle for ``after_s`` seconds is
switched off; a job that is then given it waits ``boot_s`` seconds for it to boot before its work
starts (the attempt's overhead, like a restart's recovery: its predicted end includes it). Switching
off is immediate and costs nothing (Batsim's switching-off power state has a time and an energy: here
both are 0). While booting a node draws ``boot_w`` (the job's own draw when None); while off ``off_w``.
The vocabulary is Batsim's power states (computing, idle, switching on, off); the idle timeout is the
resource manager's (SLURM's ``SuspendTime``; the boot its ``ResumeTimeout``).

References:
    Batsim's energy model (host power states and the transitions between them, the ``energy``
    plug-in of SimGrid); issue 45 §1 ("optionally switched off / booting with transition times and energy").
"""

from __future__ import annotations

from dataclasses import dataclass

from torus_sim.errors import ConfigurationError

__all__ = ["SwitchOff"]


@dataclass(frozen=True)
class SwitchOff:
    """The run's switch-off rule and the draws of its two extra power states.

    Attributes:
        after_s: seconds a node stays idle (up, no job) before it is switched off (>= 0; 0: at once).
        boot_s: seconds a switched-off node takes to boot when a job is given it (>= 0).
        off_w: watts of a switched-off node.
        boot_w: watts of a booting node, or None: the draw of the job it boots for.
    """

    after_s: float
    boot_s: float = 0.0
    off_w: float = 0.0
    boot_w: float | None = None

    @classmethod
    def of(cls, settings) -> SwitchOff | None:
        """The rule a scenario's ``idle_off_after``, ``boot_time``, ``node_off_w``, ``node_boot_w`` give, or None.

        Raises:
            ConfigurationError: a boot time or an off / boot draw without ``idle_off_after`` (they would change nothing).
        """
        if settings.idle_off_after is None:
            given = [
                name
                for name, value in (
                    ("boot_time", settings.boot_time),
                    ("node_off_w", settings.node_off_w),
                    ("node_boot_w", settings.node_boot_w),
                )
                if value is not None
            ]
            if given:
                raise ConfigurationError(
                    f"{', '.join(given)}: only for switched-off nodes, and no node is switched off: set idle_off_after "
                    "(seconds an idle node waits before it is switched off)"
                )
            return None
        return cls(
            float(settings.idle_off_after),
            float(settings.boot_time or 0.0),
            float(settings.node_off_w or 0.0),
            None if settings.node_boot_w is None else float(settings.node_boot_w),
        )

    def describe(self) -> str:
        """``idle nodes off after 600 s (0 W), boot 300 s at the job's draw``, for the run's header."""
        boot = "the job's draw" if self.boot_w is None else f"{self.boot_w:,.0f} W"
        return f"idle nodes off after {self.after_s:,.0f} s ({self.off_w:,.0f} W), boot {self.boot_s:,.0f} s at {boot}"

    def manifest(self) -> dict:
        """The run manifest's ``power.switch_off`` entry: the four settings and their ``description``."""
        return {
            "idle_off_after": self.after_s,
            "boot_time": self.boot_s,
            "off_w": self.off_w,
            "boot_w": self.boot_w,
            "description": self.describe(),
        }
