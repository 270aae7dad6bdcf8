"""One replay of a submitted run within the verifier's time cap: in a child process, killed
past it.

A submitted run's checks are the submitter's code and its suite sets their timeouts, so a
replay of it is bounded from outside: `replay_bounded` replays the run's exact bytes in a child
Python (`python -m registry.verify.bounded`, in its own session), waits at most
`Settings.replay_timeout_s`, then kills the child's whole process group (its sandboxes with
it). Inside, the replay keeps to the verifier's other caps (`limits`: each code check's time,
`replay_check_timeout_s`, whatever the suite asks; the samples regraded,
`replay_max_samples`). A replay stopped that way, or one whose child died, is `not
replayable`, saying why; it is not recorded (the rows were not judged), and a later replay
under another cap may try again. The child reads the skill from the same Hub registry, with
the same settings.

A pull request's run file is never read in the caller's process (the Space's, which serves
its pages meanwhile): `open_replay` starts the child on the file's path and commit; the child
downloads it once, hashes it and checks its rows against the gate's bounds (`Inspected`: what
the caller decides on), then waits; `Replay.run` has it replay those same bytes, `close`
ends it unreplayed (a refusal, or a record of these rows that counts already).
"""

from __future__ import annotations

import json
import os
import pickle
import select
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from registry.config import Settings
    from registry.stores.base import SkillStore
    from registry.verify.gate import RunFileAdded
    from registry.verify.replay import ReplayLimits

GRACE_S = 5.0  # a killed child's group is waited on this long
READ_S = 300.0  # a child reads and hashes a run file within this long (the cap bounds replays)
NICE = 19  # the child's nice value (`give_way`): the visitors' requests come first


@dataclass(frozen=True)
class Found:
    """What a bounded replay found (`Verification.to_dict()`'s fields); `recorded`: whether it
    judged the rows (False: stopped at the cap, or the child died)."""

    found: dict[str, Any]
    recorded: bool = True

    @property
    def status(self) -> str:
        """`verified`, `mismatch` or `not replayable`."""
        return str(self.found.get("status"))

    @property
    def samples(self) -> int:
        """Samples the replay saw."""
        return int(self.found.get("samples") or 0)

    @property
    def checks_regraded(self) -> int:
        """Checks the replay ran again."""
        return int(self.found.get("checks_regraded") or 0)

    def to_dict(self) -> dict[str, Any]:
        """The replay's findings, as `Verification.to_dict()` gives them."""
        return self.found

    @classmethod
    def cannot(cls, run_id: str, why: str) -> Found:
        """A replay that judged nothing, and why."""
        return cls({"run_id": run_id, "status": "not replayable", "problems": [],
                    "differences": [], "not_replayable": [{"why": why, "count": 1}],
                    "skill_source": "", "samples": 0, "checks_regraded": 0}, recorded=False)


def replay_bounded(store: SkillStore, repo: str, run_id: str, data: bytes,
                   settings: Settings) -> Found:
    """Replay run ``run_id`` of skill ``repo`` from its file's exact bytes ``data`` (no model
    is called), within ``settings.replay_timeout_s`` (module docstring)."""
    if store.kind != "hub":  # a folder holds no submissions: nothing to bound
        from registry.verify.pushed import verify_published

        return Found(verify_published(store, repo, run_id, settings, data=data,
                                      limits=limits(settings)).to_dict())
    cap = settings.replay_timeout_s
    with tempfile.TemporaryDirectory(prefix="hubskills-replay-") as folder:
        out, log = Path(folder) / "found.json", Path(folder) / "stderr.log"
        with open(log, "wb") as errors:
            child = subprocess.Popen(
                [sys.executable, "-m", "registry.verify.bounded", str(out)],
                stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=errors,
                start_new_session=True, env=_child_env())
            give_way(child.pid)
            try:
                child.communicate(pickle.dumps((settings, repo, run_id, data)), timeout=cap)
            except subprocess.TimeoutExpired:
                _kill(child)
                return Found.cannot(run_id, f"the replay ran past the verifier's cap of "
                                            f"{cap:g} s a replay (HUBSKILLS_REPLAY_TIMEOUT)")
        if child.returncode != 0 or not out.is_file():
            said = log.read_bytes()[-400:].decode("utf-8", "replace").strip().splitlines()
            return Found.cannot(run_id, f"the replay stopped without a result (exit "
                                        f"{child.returncode}: {said[-1] if said else 'no output'})")
        return Found(json.loads(out.read_text(encoding="utf-8")))


@dataclass(frozen=True)
class Inspected:
    """What the child found of a run file at a commit before replaying it: ``error``, why it
    could not be read (None: it was); ``refused``, why the gate refuses its rows (None: within
    bounds); its bytes' hash (`rows_hash`) and the skill repo and revision its first row
    names."""

    error: str | None = None
    refused: str | None = None
    rows_hash: str = ""
    repo: str | None = None
    revision: str | None = None


class Replay:
    """One run file's bounded replay, in a child started by `open_replay` (module docstring):
    `inspect` (once), then `run` or `close`."""

    def __init__(self, store: SkillStore, settings: Settings, run: RunFileAdded,
                 head: str) -> None:
        self.store, self.settings, self.run_file, self.head = store, settings, run, head
        self._data: bytes | None = None  # a local store's bytes (no child)
        self._seen = Inspected()
        self._child: subprocess.Popen[bytes] | None = None
        self._folder: tempfile.TemporaryDirectory[str] | None = None

    def inspect(self) -> Inspected:
        """Read the run file (in the child), hash it, check its rows against the gate."""
        if self.store.kind != "hub":  # a folder's file, read here: no submission to bound
            from registry.errors import HubskillsError

            try:
                self._data = self.store.results.read_at(self.run_file.path, self.head)
            except HubskillsError as err:
                return Inspected(error=str(err))
            self._seen = _inspected(self.run_file, self._data, self.settings)
            return self._seen
        self._folder = tempfile.TemporaryDirectory(prefix="hubskills-replay-")
        folder = Path(self._folder.name)
        with open(folder / "stderr.log", "wb") as errors:
            self._child = subprocess.Popen(
                [sys.executable, "-m", "registry.verify.bounded", str(folder / "found.json")],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errors,
                start_new_session=True, env=_child_env())
        give_way(self._child.pid)
        assert self._child.stdin is not None and self._child.stdout is not None
        try:
            self._child.stdin.write(pickle.dumps((self.settings, self.run_file, self.head)))
            self._child.stdin.flush()
        except OSError:
            pass
        cap = max(READ_S, self.settings.replay_timeout_s)
        ready, _, _ = select.select([self._child.stdout], [], [], cap)
        line = self._child.stdout.readline() if ready else b""
        if not line:
            said = f"it was not read within {cap:g} s" if not ready else self._stopped()
            self.close()
            return Inspected(error=said)
        return Inspected(**json.loads(line))

    def run(self) -> Found:
        """Replay the bytes inspected (no model is called), within the verifier's cap."""
        run_id, cap = self.run_file.run_id, self.settings.replay_timeout_s
        if self._child is None:
            assert self._data is not None, "inspect first"
            return replay_bounded(self.store, self._seen.repo or "", run_id, self._data,
                                  self.settings)
        child = self._child
        try:
            child.communicate(b"go\n", timeout=cap)
        except subprocess.TimeoutExpired:
            self.close()
            return Found.cannot(run_id, f"the replay ran past the verifier's cap of "
                                        f"{cap:g} s a replay (HUBSKILLS_REPLAY_TIMEOUT)")
        assert self._folder is not None
        out = Path(self._folder.name) / "found.json"
        try:
            if child.returncode != 0 or not out.is_file():
                return Found.cannot(run_id, f"the replay {self._stopped()}")
            return Found(json.loads(out.read_text(encoding="utf-8")))
        finally:
            self.close()

    def close(self) -> None:
        """End the child (unreplayed, if it waits) and remove its folder."""
        if self._child is not None:
            if self._child.poll() is None:
                _kill(self._child)
            for pipe in (self._child.stdin, self._child.stdout):
                if pipe is not None:
                    try:
                        pipe.close()
                    except OSError:
                        pass
        if self._folder is not None:
            self._folder.cleanup()
            self._folder = None

    def _stopped(self) -> str:
        """How the child stopped without a result."""
        assert self._child is not None and self._folder is not None
        if self._child.poll() is None:
            _kill(self._child)
        log = Path(self._folder.name) / "stderr.log"
        said = log.read_bytes()[-400:].decode("utf-8", "replace").strip().splitlines()
        return (f"stopped without a result (exit {self._child.returncode}: "
                f"{said[-1] if said else 'no output'})")

    def __enter__(self) -> Replay:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_replay(store: SkillStore, settings: Settings, run: RunFileAdded, head: str) -> Replay:
    """The bounded replay of pull-request run file ``run`` at commit ``head`` (a context
    manager; `Replay`)."""
    return Replay(store, settings, run, head)


def _inspected(run: RunFileAdded, data: bytes, settings: Settings) -> Inspected:
    """What `Replay.inspect` says of ``data``, the bytes of ``run``."""
    from registry.stores.records import rows_hash
    from registry.verify.gate import rows_refusal

    repo, revision = named_skill(data)
    return Inspected(refused=rows_refusal(run, data, settings), rows_hash=rows_hash(data),
                     repo=repo, revision=revision)


def named_skill(data: bytes) -> tuple[str | None, str | None]:
    """The skill repo and revision the run's first row names (None when it names none)."""
    first = data.split(b"\n", 1)[0]
    try:
        row: Any = json.loads(first)
    except ValueError:
        return None, None
    if not isinstance(row, dict):
        return None, None
    repo, revision = row.get("skill_repo"), row.get("skill_revision")
    return (repo if isinstance(repo, str) else None,
            revision if isinstance(revision, str) else None)


def limits(settings: Settings) -> ReplayLimits:
    """The verifier's caps inside one replay: each code check's time, the samples regraded."""
    from registry.verify.replay import ReplayLimits

    return ReplayLimits(check_timeout_s=settings.replay_check_timeout_s,
                        max_samples=settings.replay_max_samples)


def _child_env() -> dict[str, str]:
    """This process's environment, with hubskills' own folder first on the child's path."""
    home = str(Path(__file__).resolve().parents[2])
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (home, env.get("PYTHONPATH")) if p)
    return env


def give_way(pid: int) -> None:
    """Have the child ``pid`` yield the CPU to the process serving visitors: nice `NICE`, for
    it and for its session's autogroup (Linux gives a new session an autogroup of its own,
    weighed against the Space's whole group whatever the nice of the tasks inside it). Raising
    a nice value needs no privilege; where either cannot be set, the child runs as it is."""
    try:
        os.setpriority(os.PRIO_PROCESS, pid, NICE)
    except (OSError, AttributeError):
        pass
    try:
        Path(f"/proc/{pid}/autogroup").write_text(f"{NICE}\n")
    except OSError:  # no autogroups (not Linux, or turned off)
        pass


def _kill(child: subprocess.Popen[bytes]) -> None:
    """Kill the child's whole process group, and reap the child."""
    try:
        os.killpg(child.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    try:
        child.wait(GRACE_S)
    except subprocess.TimeoutExpired:
        child.kill()
        child.wait()


def _child(out: Path) -> int:
    """The child's side: read the replay asked for on stdin, write what it found to ``out``.
    A pull request's run file (`Replay`): read it, say what `Inspected` holds on stdout, and
    replay it only once the parent says `go` (stdin closed without it: nothing replayed)."""
    from registry.stores.hub import HubStore
    from registry.verify.pushed import verify_published

    said = os.fdopen(os.dup(1), "w", encoding="utf-8")  # the parent's channel; checks' prints
    with open(os.devnull, "wb") as null:  # go nowhere
        os.dup2(null.fileno(), 1)
    asked = pickle.load(sys.stdin.buffer)  # noqa: S301 - ours
    if len(asked) == 4:
        settings, repo, run_id, data = asked
    else:
        from registry.errors import HubskillsError

        settings, run, head = asked
        store = HubStore(settings)
        try:
            data = store.results.read_at(run.path, head)
        except HubskillsError as err:
            said.write(json.dumps({"error": str(err)}) + "\n")
            said.flush()
            return 0
        inspected = _inspected(run, data, settings)
        said.write(json.dumps(inspected.__dict__) + "\n")
        said.flush()
        if inspected.refused is not None or sys.stdin.buffer.readline().strip() != b"go":
            return 0
        repo, run_id = inspected.repo or "", run.run_id
    found = verify_published(HubStore(settings), repo, run_id, settings, data=data,
                             limits=limits(settings))
    out.write_text(json.dumps(found.to_dict()), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(_child(Path(sys.argv[1])))
