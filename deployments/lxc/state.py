"""What the container API's routes share: its configuration and the service (SSH pool, host lock actors)."""

from __future__ import annotations

from dataclasses import dataclass, field

from actors.lxc.jobs import JobBook
from actors.lxc.runner import JobRunner
from rayfleet.metrics import Metrics
from rayfleet.state import ActorHandle, actor
from rayfleet.supervisor import ChildMetrics

from .config import LxcConfig
from .hosts import default_lock_factory
from .service import LxcService

JOBS_ACTOR = "lxc-jobs"
RUNNER_ACTOR = "lxc-job-runner"


@dataclass
class LxcState:
    config: LxcConfig
    service: LxcService
    metrics: Metrics = field(default_factory=lambda: Metrics("lxc"))
    child_metrics: ChildMetrics = field(init=False)
    _jobs: ActorHandle[JobBook] | None = field(default=None, init=False)
    _runner: ActorHandle[JobRunner] | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        self.child_metrics = ChildMetrics(self.metrics)

    @property
    def jobs(self) -> ActorHandle[JobBook]:
        """The named `lxc-jobs` actor (made on first use)."""
        if self._jobs is None:
            self._jobs = actor(JobBook, JOBS_ACTOR, self.config.jobs_store)
        return self._jobs

    @property
    def runner(self) -> ActorHandle[JobRunner]:
        """The named `lxc-job-runner` actor, which runs the jobs (made on first use)."""
        if self._runner is None:
            self._runner = actor(JobRunner, RUNNER_ACTOR, JOBS_ACTOR, self.config.jobs_store)
        return self._runner

    @classmethod
    def from_ray(cls, config: LxcConfig) -> LxcState:
        """The default: one SSH pool per replica, per-host lock actors named through `rayfleet.state.actor`
        (in-process stand-ins without Ray)."""
        return cls(config, LxcService(config, lock_factory=default_lock_factory))
