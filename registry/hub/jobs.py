"""`JobsClient`: Hugging Face Jobs as hubskills uses them, with errors translated.

Jobs run under the token given here (a user's own: their account, their quota). Secrets go in
`secrets`, which the Hub never shows; `env` and `command` are shown in listings and the UI, so
nothing secret may go there. Answers are our `JobState`, never a `huggingface_hub` type.
"""

from __future__ import annotations

import builtins
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from registry.hub.errors import translate

if TYPE_CHECKING:
    from huggingface_hub import HfApi

TERMINAL_STAGES = frozenset({"COMPLETED", "CANCELED", "ERROR", "DELETED"})


@dataclass(frozen=True)
class JobState:
    """One job as the Hub reports it."""

    id: str
    stage: str
    message: str | None = None
    flavor: str | None = None
    labels: dict[str, str] = field(default_factory=dict)
    created_at: str | None = None
    url: str | None = None

    @property
    def is_done(self) -> bool:
        """The job ended (completed, cancelled, failed or deleted)."""
        return self.stage in TERMINAL_STAGES


@dataclass(frozen=True)
class Hardware:
    """A Jobs flavor and its price per minute (None when the Hub does not say)."""

    name: str
    pretty_name: str
    usd_per_minute: float | None


class JobsClient:
    """Jobs of one namespace at `endpoint` (see the module docstring)."""

    def __init__(self, endpoint: str, token: str | None, namespace: str | None = None) -> None:
        from huggingface_hub import HfApi

        self.endpoint = endpoint
        self.api: HfApi = HfApi(endpoint=endpoint, token=token, library_name="hubskills")
        self._namespace = namespace

    def _call(self, call: Any) -> Any:
        with translate(self.endpoint, None):
            return call()

    @property
    def namespace(self) -> str:
        """Where jobs run: the one given, else the token's user (asked once)."""
        if self._namespace is None:
            self._namespace = str(self._call(self.api.whoami)["name"])
        return self._namespace

    def run(self, *, image: str, command: list[str], env: Mapping[str, str],
            secrets: Mapping[str, str], flavor: str, labels: Mapping[str, str],
            timeout: str | None = None) -> JobState:
        """Start a job; returns it as created."""
        info = self._call(lambda: self.api.run_job(
            image=image, command=command, env=dict(env), secrets=dict(secrets), flavor=flavor,
            labels=dict(labels), timeout=timeout, namespace=self.namespace))
        return _state(info)

    def inspect(self, job_id: str) -> JobState:
        """The job's current stage."""
        return _state(self._call(lambda: self.api.inspect_job(job_id=job_id,
                                                              namespace=self.namespace)))

    def logs(self, job_id: str) -> list[str]:
        """Every log line the job printed so far (does not wait for more)."""
        return self._call(lambda: list(self.api.fetch_job_logs(
            job_id=job_id, namespace=self.namespace, follow=False)))

    def may_write(self, repo: str, *, repo_type: str = "dataset") -> bool:
        """Whether this token may write ``repo`` (where a job under it records what it found);
        the Hub answers for every kind of token, fine-grained ones included (a repo it may not
        see is one it may not write)."""
        from registry.hub.errors import AuthFailed, RepoNotFound

        try:
            with translate(self.endpoint, repo, repo_type=repo_type):
                self.api.auth_check(repo, repo_type=repo_type, write=True)
        except (AuthFailed, RepoNotFound):
            return False
        return True

    def cancel(self, job_id: str) -> None:
        """Ask the Hub to stop the job."""
        self._call(lambda: self.api.cancel_job(job_id=job_id, namespace=self.namespace))

    def list(self, labels: Mapping[str, str] | None = None,
             stages: tuple[str, ...] | None = None) -> list[JobState]:
        """The namespace's jobs (with all of `labels`, in one of `stages`, when given)."""
        return [_state(info) for info in self._call(lambda: list(self.api.list_jobs(
            labels=dict(labels) if labels else None, status=list(stages) if stages else None,
            namespace=self.namespace)))]

    def hardware(self) -> builtins.list[Hardware]:  # `list` here is the method above
        """The flavors jobs may run on, with their prices."""
        return [Hardware(h.name, h.pretty_name,
                         h.unit_cost_usd if h.unit_label == "minute" else None)
                for h in self._call(self.api.list_jobs_hardware)]


def _state(info: Any) -> JobState:
    created = getattr(info, "created_at", None)
    return JobState(id=info.id, stage=str(info.status.stage), message=info.status.message,
                    flavor=info.flavor, labels=dict(info.labels or {}),
                    created_at=created.isoformat() if created else None,
                    url=getattr(info, "url", None))
