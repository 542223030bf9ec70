"""The scenario's ``[power]`` section: whether a run accounts for power, and with which figures.

A mixin of :class:`torus_sim.experiments.scenario.Scenario` (fields only, validated by pydantic): with ``power``
off (the default) nothing is read or computed and every output is byte for byte what it was
without power accounting.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, Field, field_validator, model_validator

__all__ = ["POWER_FIELDS", "PowerSettings"]

POWER_FIELDS = (
    "power",
    "job_power",
    "price",
    "node_idle_w",
    "node_busy_w",
    "node_down_w",
    "clock_start_hour",
    "power_cap",
    "power_cap_hours",
    "power_cap_file",
    "idle_off_after",
    "boot_time",
    "node_off_w",
    "node_boot_w",
    "shutdown_time",
    "node_shutdown_w",
)
"""The ``[power]`` section's fields, in the order the command line lists them."""


class PowerSettings(BaseModel):
    """Power accounting settings (issue 45 §1-§3).

    Attributes:
        power: account for power: energy (kWh) per job, per node state and for the machine, the
            energy of killed attempts (wasted), the electricity bill, peak and mean power.
        job_power: each job's draw per node: ``machine`` (the node's busy figure), ``uniform:LOW:HIGH``
            (watts per node drawn per job with the run's seed) or a CSV file ``job_id,watts_per_node``.
        price: the electricity price: ``flat:PRICE`` (per kWh), ``tou:OFF_PEAK:RATIO[:START-END]``
            (on-peak hours START to END of each day cost RATIO x OFF_PEAK) or a CSV file ``time,price``.
        node_idle_w, node_busy_w: watts of one node (a midplane on a torus) idle and busy; None: the
            machine's figures (:func:`torus_sim.inputs.energy.node_power.node_power`).
        node_down_w: watts of a failed or repairing node (0: switched off).
        clock_start_hour: the hour of the day at t = 0 (the log's first submission), for on-peak hours.
        power_cap: a machine power cap as a share of its busy draw N x busy_w (None: no cap): what the
            ``power-cap`` policy keeps the draw under and what ``hours_over_cap`` / ``energy_over_cap_kwh``
            measure every policy against (:class:`~torus_sim.inputs.energy.caps.PowerCap`).
        power_cap_hours: ``START-END``: the cap holds only in those hours of each day (None: always).
        power_cap_file: a CSV file ``time,share``: the cap's level over time instead (a share of the busy
            draw from each time on; :class:`~torus_sim.inputs.energy.caps.CapSchedule`); not with ``power_cap``.
        idle_off_after: seconds a node stays idle before it is switched off (None: never switched off);
            with it, ``boot_time`` (seconds a job waits for its switched-off nodes to boot), ``node_off_w``
            (watts of an off node, 0 when None) and ``node_boot_w`` (watts of a booting node; None: the
            job's draw), ``shutdown_time`` (seconds a switch-off takes, 0 when None) and ``node_shutdown_w``
            (watts while switching off; None: the idle draw): :class:`~torus_sim.inputs.energy.switch_off.SwitchOff`.
    """

    SECTION: ClassVar[str] = "power"

    power: bool = Field(
        strict=True, default=False, description="account for power: energy (kWh), wasted energy, electricity bill, peak power"
    )
    job_power: str = Field(
        "machine", description="job draw per node: machine (busy figure), uniform:LOW:HIGH watts, or a CSV job_id,watts_per_node"
    )
    price: str = Field(
        "flat:0.10", description="price per kWh: flat:P, tou:OFF_PEAK:RATIO[:START-END] hours, or a CSV time,price"
    )
    node_idle_w: float | None = Field(
        None, ge=0, allow_inf_nan=False, description="watts of an idle node (default: the machine's)"
    )
    node_busy_w: float | None = Field(
        None, ge=0, allow_inf_nan=False, description="watts of a busy node (default: the machine's)"
    )
    node_down_w: float = Field(0.0, ge=0, allow_inf_nan=False, description="watts of a failed or repairing node")
    clock_start_hour: float = Field(0.0, ge=0, lt=24, allow_inf_nan=False, description="hour of the day at t = 0 (on-peak hours)")

    power_cap: float | None = Field(
        None, gt=0, le=10, allow_inf_nan=False, description="power cap, a share of the machine's busy draw (none by default)"
    )
    power_cap_hours: str | None = Field(None, description="hours START-END of each day the power cap holds (default: every hour)")
    power_cap_file: str | None = Field(
        None, description="power cap over time: a CSV time,share (share of the busy draw from each time on)"
    )

    idle_off_after: float | None = Field(
        None, ge=0, allow_inf_nan=False, description="seconds an idle node waits before it is switched off (default: never)"
    )
    boot_time: float | None = Field(
        None, ge=0, allow_inf_nan=False, description="seconds a switched-off node takes to boot for a job (default 0)"
    )
    node_off_w: float | None = Field(None, ge=0, allow_inf_nan=False, description="watts of a switched-off node (default 0)")
    node_boot_w: float | None = Field(
        None, ge=0, allow_inf_nan=False, description="watts of a booting node (default: its job's draw)"
    )
    shutdown_time: float | None = Field(
        None, ge=0, allow_inf_nan=False, description="seconds a node takes to switch off (default 0: at once)"
    )
    node_shutdown_w: float | None = Field(
        None, ge=0, allow_inf_nan=False, description="watts of a node switching off (default: the idle draw)"
    )

    @field_validator("power_cap_hours")
    @classmethod
    def _cap_hours(cls, value: str | None) -> str | None:
        if value is not None:
            from torus_sim.core.errors import ConfigurationError
            from torus_sim.inputs.energy.daily_hours import DailyHours

            try:
                DailyHours(value, "power_cap_hours")
            except ConfigurationError:
                raise ValueError("expected hours of the day START-END within 0-24, START != END (14-20)") from None
        return value

    @field_validator("job_power", "price")
    @classmethod
    def _short_text(cls, value: str) -> str:
        if not value or len(value) > 4096:
            raise ValueError("expected a short specification (a name, name:arguments or a file path)")
        return value

    @model_validator(mode="after")
    def _one_cap(self):
        """A cap is a share (with its hours) or a schedule file, not both."""
        if self.power_cap_file is not None and (self.power_cap is not None or self.power_cap_hours is not None):
            raise ValueError("give power_cap (with power_cap_hours) or power_cap_file, not both")
        if self.power_cap_file is not None and not (0 < len(self.power_cap_file) <= 4096):
            raise ValueError("power_cap_file: expected a file path")
        return self

    @model_validator(mode="after")
    def _switch_off_with_power(self):
        """Switched-off nodes are a power accounting setting: refused without ``power`` (it would change nothing silently)."""
        if self.idle_off_after is not None and not self.power:
            raise ValueError("idle_off_after switches idle nodes off for power accounting: set power = true (--power)")
        return self
