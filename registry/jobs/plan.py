"""A sharded run's plan and its files in the results dataset repo.

Everything a Job needs travels through the user's results dataset repo, beside (never inside)
the `data/evals/` split, so a run's partial rows never reach the leaderboard:

    jobs/wheels/<sha256[:16]>/hubskills-<version>-py3-none-any.whl   the client's own code
    jobs/<run_id>/plan.json        manifest, options, and each shard's (model, case) units
    jobs/<run_id>/skill/...        the skill folder evaluated (the revision, as files)
    jobs/<run_id>/suite/<name>     the --tests file, when one was given
    jobs/<run_id>/rows/s<k>-<n>-<rand>.jsonl   rows of shard k (append-only, one file a flush)
    jobs/<run_id>/transcripts/s<k>-<m>-<rand>.jsonl   agent mode: shard k's transcripts of model m

Rows use the schema of `--push` (`ResultRow`), carry the run id, and name their shard in the
file. A shard holds whole (model, case) units, every repeat and both arms of each, so a unit's
paired samples and its seeds never straddle two machines.
"""

from __future__ import annotations

import json
import re
import secrets
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from registry.credentials import carries_secret
from registry.errors import HubskillsError
from registry.evaluation.config import EvalConfig
from registry.hub import HubClient, RemoteFile, with_retry
from registry.results.runs import ResultRow, RunManifest, iter_rows

JOBS_DIR = "jobs"
PROGRESS = "hubskills-progress"  # a shard's log line: `hubskills-progress SHARD DONE TOTAL`
Unit = tuple[str, str]  # (model ref, case id)
_SHARD_FILE = re.compile(r"^s(\d+)-")
_CONFIG_FIELDS = ("models", "runs", "mode", "placement", "judge", "concurrency", "max_cost",
                  "case_ids", "temperature", "max_tokens", "use_cache", "base_url", "sandbox",
                  "code_checks")


def split_units(units: list[Unit], shards: int) -> list[list[Unit]]:
    """`units` dealt into at most `shards` non-empty shards of near-equal size, in order."""
    count = max(1, min(shards, len(units)))
    size, extra = divmod(len(units), count)
    out, start = [], 0
    for index in range(count):
        end = start + size + (1 if index < extra else 0)
        out.append(units[start:end])
        start = end
    return out


@dataclass
class JobPlan:
    """What every shard of one run reads: the run, its options and its units."""

    manifest: RunManifest
    config: dict[str, Any]
    shards: list[list[Unit]]
    wheel: str
    tests: str | None = None
    flush_every: int = 20
    has_code: bool = False  # code checks or agent mode: code runs, only in a sandbox
    jobs: dict[str, list[str]] = field(default_factory=dict)  # shard index -> job ids, oldest 1st

    @property
    def run_id(self) -> str:
        """The run this plan is for."""
        return self.manifest.run_id

    def eval_config(self) -> EvalConfig:
        """The options as the engine takes them, with the job as the producer."""
        return EvalConfig(**{k: v for k, v in self.config.items() if k in _CONFIG_FIELDS},
                          via="job")

    def to_json(self) -> str:
        """The plan as JSON (it holds no secret: keys travel as Job secrets)."""
        data = asdict(self)
        data["manifest"] = self.manifest.model_dump(mode="json")
        return json.dumps(data, indent=1)

    @classmethod
    def from_json(cls, text: str) -> JobPlan:
        """Parse a plan written by `to_json`."""
        data = json.loads(text)
        data["manifest"] = RunManifest.model_validate(data["manifest"])
        data["shards"] = [[tuple(unit) for unit in shard] for shard in data["shards"]]
        return cls(**data)

    @property
    def needs_sandbox(self) -> bool:
        """Whether the Job must have bubblewrap (code runs, and was not left out)."""
        return self.has_code and self.config.get("code_checks") != "skip"

    @staticmethod
    def config_of(config: EvalConfig) -> dict[str, Any]:
        """The options of `config` a plan keeps; a `--base-url` holding a credential is not
        one (the plan is a file in the results dataset): it reaches the shards as the Jobs'
        secret `HUBSKILLS_BASE_URL` (`remote.job_secrets`)."""
        kept = {name: getattr(config, name) for name in _CONFIG_FIELDS}
        if carries_secret(kept["base_url"]):
            kept["base_url"] = None
        return kept


class RunFiles:
    """One run's files in the results dataset repo `repo` (see the module docstring)."""

    def __init__(self, client: HubClient, repo: str, run_id: str) -> None:
        self.client, self.repo, self.run_id = client, repo, run_id
        self.root = f"{JOBS_DIR}/{run_id}"

    def _commit(self, files: dict[str, bytes], message: str) -> None:
        with_retry(lambda: self.client.commit(self.repo, files, repo_type="dataset",
                                              message=message))

    def _read(self, path: str) -> bytes:
        return self.client.download(self.repo, path, repo_type="dataset").read_bytes()

    def upload_wheel(self, name: str, data: bytes, digest: str) -> str:
        """Put the wheel in the repo once (the same code is never uploaded twice); its path."""
        path = f"{JOBS_DIR}/wheels/{digest[:16]}/{name}"
        if not self.client.file_exists(self.repo, path, repo_type="dataset"):
            self._commit({path: data}, f"hubskills {name}")
        return path

    def upload_inputs(self, plan: JobPlan, skill: dict[str, bytes],
                      suite: tuple[str, bytes] | None) -> None:
        """The plan, the skill's files and the suite, in one commit."""
        files = {f"{self.root}/skill/{rel}": data for rel, data in skill.items()}
        if suite:
            files[f"{self.root}/suite/{suite[0]}"] = suite[1]
        files[f"{self.root}/plan.json"] = plan.to_json().encode()
        self._commit(files, f"Inputs of sharded eval run {self.run_id}")

    def save_plan(self, plan: JobPlan) -> None:
        """Rewrite the plan (its job ids changed)."""
        self._commit({f"{self.root}/plan.json": plan.to_json().encode()},
                     f"Jobs of eval run {self.run_id}")

    def plan(self) -> JobPlan:
        """The run's plan.

        Raises:
            HubskillsError: the repo holds no such run.
        """
        from registry.hub import EntryNotFound, RepoNotFound

        try:
            return JobPlan.from_json(self._read(f"{self.root}/plan.json").decode())
        except (EntryNotFound, RepoNotFound) as err:
            raise HubskillsError(f"no sharded run {self.run_id} in {self.repo}",
                                 hint="hubskills jobs list") from err

    def download_inputs(self, dest: Path) -> tuple[Path, Path | None]:
        """The skill folder (and the suite file) into `dest`; their local paths."""
        skill, suite = dest / "skill", None
        for entry in self._listing(f"{self.root}/skill"):
            target = skill / entry.path.removeprefix(f"{self.root}/skill/")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(self._read(entry.path))
        for entry in self._listing(f"{self.root}/suite"):
            suite = dest / Path(entry.path).name
            suite.write_bytes(self._read(entry.path))
        return skill, suite

    def add_rows(self, shard: int, seq: int, rows: list[ResultRow], text: str) -> None:
        """One immutable file of shard `shard`'s rows (`text`: their scrubbed JSONL)."""
        name = f"s{shard}-{seq:05d}-{secrets.token_hex(4)}.jsonl"  # attempts never collide
        self._commit({f"{self.root}/rows/{name}": text.encode()},
                     f"{len(rows)} rows of eval run {self.run_id}, shard {shard}")

    def add_transcripts(self, shard: int, seq: int, text: str) -> None:
        """One immutable file of shard `shard`'s agent transcripts (`text`: scrubbed JSONL)."""
        name = f"s{shard}-{seq:05d}-{secrets.token_hex(4)}.jsonl"
        self._commit({f"{self.root}/transcripts/{name}": text.encode()},
                     f"Agent transcripts of eval run {self.run_id}, shard {shard}")

    def transcripts(self) -> list[dict[str, Any]]:
        """Every agent transcript the shards saved, file by file."""
        records = []
        for entry in self._listing(f"{self.root}/transcripts"):
            text = self._read(entry.path).decode("utf-8", errors="replace")
            records += [json.loads(line) for line in text.splitlines() if line.strip()]
        return records

    def rows(self) -> dict[int, list[ResultRow]]:
        """Every row written so far, by shard."""
        by_shard: dict[int, list[ResultRow]] = {}
        for entry in self._listing(f"{self.root}/rows"):
            match = _SHARD_FILE.match(Path(entry.path).name)
            if match:
                path = self.client.download(self.repo, entry.path, repo_type="dataset")
                by_shard.setdefault(int(match.group(1)), []).extend(iter_rows(path))
        return by_shard

    def _listing(self, folder: str) -> list[RemoteFile]:
        from registry.hub import EntryNotFound

        try:
            head = self.client.repo_info(self.repo, repo_type="dataset").sha
            return sorted(self.client.tree(self.repo, folder, head, repo_type="dataset"),
                          key=lambda e: e.path)
        except EntryNotFound:
            return []
