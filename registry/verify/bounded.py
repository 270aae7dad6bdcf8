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
"""

from __future__ import annotations

import json
import os
import pickle
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
    from registry.verify.replay import ReplayLimits

GRACE_S = 5.0  # a killed child's group is waited on this long


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
    """The child's side: read the replay asked for on stdin, write what it found to ``out``."""
    from registry.stores.hub import HubStore
    from registry.verify.pushed import verify_published

    settings, repo, run_id, data = pickle.loads(sys.stdin.buffer.read())  # noqa: S301 - ours
    found = verify_published(HubStore(settings), repo, run_id, settings, data=data,
                             limits=limits(settings))
    out.write_text(json.dumps(found.to_dict()), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(_child(Path(sys.argv[1])))
