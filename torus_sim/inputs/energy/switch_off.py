"""Switching idle nodes off: after how long, what an off, a switching-off and a booting node draw, how long each transition takes.

A node (a midplane on a torus, a node on a cluster) that has been idle for ``after_s`` seconds starts
switching off; it is off ``shutdown_s`` seconds later (0 by default: at once). A job that is then given
it waits for the switch-off to end, then ``boot_s`` seconds for it to boot, before its work starts (the
attempt's overhead, like a restart's recovery: its predicted end includes it; a node cannot be switched
back on halfway through switching off: the switch-off completes first; nor is a boot cut short: a job that ends
before its nodes are on leaves them to finish it, idle). While switching off a node draws ``shutdown_w``
(the idle draw when None), while off ``off_w``, while booting ``boot_w`` (the job's own draw when None).
The vocabulary is Batsim's power states (computing, idle, switching on, off); the idle timeout is the
resource manager's (SLURM's ``SuspendTime``; the boot its ``ResumeTimeout``).

References:
    Batsim's energy model (host power states and the transitions between them, the ``energy``
    plug-in of SimGrid); issue 45 §1 ("optionally switched off / booting with transition times and energy").
"""

from __future__ import annotations

from dataclasses import dataclass

from torus_sim.core.errors import ConfigurationError

__all__ = ["SwitchOff"]


@dataclass(frozen=True)
class SwitchOff:
    """The run's switch-off rule and the draws of its two extra power states.

    Attributes:
        after_s: seconds a node stays idle (up, no job) before it is switched off (>= 0; 0: at once).
        boot_s: seconds a switched-off node takes to boot when a job is given it (>= 0).
        off_w: watts of a switched-off node.
        boot_w: watts of a booting node, or None: the draw of the job it boots for.
        shutdown_s: seconds a node takes to switch off (>= 0; 0: at once).
        shutdown_w: watts of a node switching off, or None: the idle draw.
    """

    after_s: float
    boot_s: float = 0.0
    off_w: float = 0.0
    boot_w: float | None = None
    shutdown_s: float = 0.0
    shutdown_w: float | None = None

    @classmethod
    def of(cls, settings) -> SwitchOff | None:
        """The rule a scenario's ``idle_off_after``, ``boot_time``, ``node_off_w``, ``node_boot_w``, ``shutdown_time``, ``node_shutdown_w`` give, or None.

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
                    ("shutdown_time", settings.shutdown_time),
                    ("node_shutdown_w", settings.node_shutdown_w),
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
            float(settings.shutdown_time or 0.0),
            None if settings.node_shutdown_w is None else float(settings.node_shutdown_w),
        )

    from_scenario = ("idle_off_after", "boot_time", "node_off_w", "node_boot_w", "shutdown_time", "node_shutdown_w")
    """The scenario fields :meth:`of` reads."""

    def shutdown_draw_w(self, idle_w: float) -> float:
        """Watts of a node switching off: ``shutdown_w``, or ``idle_w`` (the node's idle draw, watts) when it is None."""
        return idle_w if self.shutdown_w is None else float(self.shutdown_w)

    def describe(self) -> str:
        """``idle nodes off after 600 s (0 W), boot 300 s at the job's draw``, for the run's header."""
        boot = "the job's draw" if self.boot_w is None else f"{self.boot_w:,.0f} W"
        text = f"idle nodes off after {self.after_s:,.0f} s ({self.off_w:,.0f} W), boot {self.boot_s:,.0f} s at {boot}"
        if self.shutdown_s > 0:
            draw = "the idle draw" if self.shutdown_w is None else f"{self.shutdown_w:,.0f} W"
            text += f", switch-off {self.shutdown_s:,.0f} s at {draw}"
        return text

    def manifest(self) -> dict:
        """The run manifest's ``power.switch_off`` entry: the settings and their ``description`` (the switch-off's with a time)."""
        entry = {"idle_off_after": self.after_s, "boot_time": self.boot_s, "off_w": self.off_w, "boot_w": self.boot_w}
        if self.shutdown_s > 0:
            entry |= {"shutdown_time": self.shutdown_s, "shutdown_w": self.shutdown_w}
        return entry | {"description": self.describe()}
