"""`Harness`: one `AgentRunner` that runs a real agent CLI headless in the sandbox; an `Adapter`
says how one CLI is configured, started and read back.

Per sample: a fresh HOME (outside the workspace, so the workspace diff holds only the agent's
work) and a socket folder in a scratch folder; the CLI's install bound read-only; the model
reached only through `ModelProxy` (see `proxy.py`). The skill arm has the skill where that CLI
reads skills: `.agents/skills/<name>` is seeded already, and Claude Code gets a relative link
`.claude/skills/<name>` to it for the run. The CLI's event stream (its stdout) is written to a
file in HOME and parsed into an `AgentOutcome` with protocol `harness:<name>`.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import secrets
import stat
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar

from registry.agent.bounds import WorkspaceOverLimit, remove_tree
from registry.agent.harness.proxy import CLI_ENV_FILE, FORWARDER, REDACTED, ModelProxy, Wire
from registry.agent.harness.replay import Replay, ResponseStore
from registry.agent.outcome import AgentOutcome, AgentTask, Budget, TranscriptEntry
from registry.agent.workspace import SKILLS_FOLDER
from registry.format.skill import content_hash
from registry.providers.base import Usage
from registry.providers.model import Model
from registry.sandbox.base import Limits, Mounts
from registry.sandbox.bwrap import BwrapSandbox

HOME_INSIDE = "/home/agent"
PORT = 8787  # inside the sandbox's own network namespace: every sample can use the same one
EVENTS = ".hubskills-events.jsonl"
# The turn budget, held by the proxy: a CLI may make a request or two of its own (a title, a
# token count) beside its turns, so it gets `max_turns + AUX_REQUESTS` model requests.
AUX_REQUESTS = 2
MAX_EVENTS_BYTES = 64 << 20
# Node and Bun reserve far more address space than they use: RLIMIT_AS must not bite them.
CLI_LIMITS = Limits(memory_bytes=64 << 30, file_bytes=1 << 30, processes=512)
_SKILL_TOOLS = {"Skill": "skill", "skill": "name", "activate_skill": "name"}


@dataclass
class Parsed:
    """What an adapter read from its CLI's events."""

    entries: list[TranscriptEntry] = field(default_factory=list)
    final_text: str = ""
    usage: Usage = field(default_factory=Usage)
    turns: int | None = None  # None: counted from the entries
    stopped_at_turns: bool = False
    error: str | None = None


class Adapter:
    """How one agent CLI is installed, configured, started and read back."""

    name: ClassVar[str]
    package: ClassVar[str]  # npm package and pinned version (see `make agent-clis`)
    version: ClassVar[str]
    binary: ClassVar[str]
    wire: ClassVar[Wire]
    providers: ClassVar[frozenset[str]]  # model provider families whose API the CLI speaks
    skills_folder: ClassVar[str] = ".agents/skills"
    volatile: ClassVar[tuple[str, ...]] = ()  # patterns that differ between identical requests

    def prepare(self, home: Path, base_url: str, model_id: str) -> dict[str, str]:
        """Write the CLI's config under `home` (seen as HOME_INSIDE); its environment."""
        raise NotImplementedError

    def secret_env(self, secret: str, env: dict[str, str]) -> dict[str, str] | None:
        """Variables (new, or replacing some of `env`, what `prepare` returned) that make the
        CLI send `SECRET_HEADER: secret` with every model request; None for a CLI that cannot
        be told to add a header: its proxy then takes any request on its socket, whose
        permissions are the only guard (each of the four CLIs can, today)."""
        return None

    def argv(self, prompt: str, model_id: str, budget: Budget) -> list[str]:
        """The CLI's arguments after its binary."""
        raise NotImplementedError

    def parse(self, events: list[dict[str, Any]]) -> Parsed:
        """Read the CLI's JSON events (its stdout, one object a line)."""
        raise NotImplementedError


class Harness:
    """Runs `adapter`'s CLI (at `cli`, installed under `install`) for each task."""

    def __init__(self, adapter: Adapter, *, model: Model, sandbox: BwrapSandbox, cli: Path,
                 install: Path, base_url: str, key: str | None, node: Path,
                 cache: ResponseStore | None = None, read_cache: bool = True) -> None:
        self.adapter, self.model, self.sandbox = adapter, model, sandbox
        self.cli, self.install, self.node, self.cache = cli, install, node, cache
        self.read_cache = read_cache
        self.base_url, self._key = base_url, key
        self.name = f"harness:{adapter.name}"
        self.last_proxy: ModelProxy | None = None  # the tests read what it refused

    def __repr__(self) -> str:
        return f"Harness({self.adapter.name!r}, model={self.model.ref!r})"

    async def run(self, task: AgentTask) -> AgentOutcome:
        """Run the CLI once in `task.workspace`; see the module docstring."""
        started = time.monotonic()
        replay = await asyncio.to_thread(self._replay, task)  # before the skill's link is made
        scratch = Path(tempfile.mkdtemp(prefix="hubskills-harness-"))
        links = _link_skills(task, self.adapter.skills_folder)
        try:
            home, sockets = scratch / "home", scratch / "socket"
            home.mkdir(mode=0o700)
            sockets.mkdir(mode=0o700)  # handed to the sandbox's own user: no one else's
            scratch.chmod(0o755)
            proxy = ModelProxy(upstream=self.base_url, key=self._key, wire=self.adapter.wire,
                               folder=sockets, max_posts=task.budget.max_turns + AUX_REQUESTS,
                               replay=replay)
            env = self._environment(home, proxy)
            async with proxy:
                self.last_proxy = proxy
                result = await self._sandboxed(task, home, proxy, env)
            events = _read_events(home / EVENTS, redact=proxy.secret)
        finally:
            for link in reversed(links):  # the last one removed leaves folders empty
                _unlink_skill(link, task.workspace)
            remove_tree(scratch)  # the CLI's HOME and the secret's file: however deep it is
        if result.stopped:  # the workspace, HOME or memory went past its bound: the arm's
            raise WorkspaceOverLimit(result.stopped, sandbox=True)  # failure
        parsed = self.adapter.parse(events)
        outcome = self._outcome(task, parsed)
        outcome.wall_s = time.monotonic() - started
        outcome.cached = proxy.replay is not None and proxy.replay.all_replayed
        if result.timed_out:
            outcome.stop_reason = "wall_time"
        elif proxy.over_budget or parsed.stopped_at_turns:  # a budget stop, not a failure
            outcome.stop_reason = "turns"  # (the proxy's refusal, or Claude Code's --max-turns)
        elif result.exit_code != 0 or parsed.error:
            outcome.stop_reason = "error"
            outcome.error = parsed.error or (f"{self.adapter.binary} exited with "
                                             f"{result.exit_code}: {result.stderr[-500:]}")
        return outcome

    def _replay(self, task: AgentTask) -> Replay | None:
        """The response cache for this sample: its key names the CLI, the model, its endpoint,
        the repeat, the arm, the content of the skills folders as seeded (the skill and those it
        requires; a trigger session's listing) and the case, so no two samples share answers
        however alike their requests (read unless `--no-cache`, written always); the same
        sample asked again (a resume) has the same key."""
        if self.cache is None:
            return None
        skills = {folder: content_hash(task.workspace / folder)
                  for folder in sorted({SKILLS_FOLDER, self.adapter.skills_folder})
                  if (task.workspace / folder).is_dir()
                  and not (task.workspace / folder).is_symlink()}
        sample = json.dumps([f"{self.adapter.package}@{self.adapter.version}", self.model.ref,
                             self.base_url, task.seed, "skill" if task.skill_path else "baseline",
                             skills, task.case_id], sort_keys=True)
        return Replay(self.cache, sample, self.adapter.volatile, read=self.read_cache)

    def _environment(self, home: Path, proxy: ModelProxy) -> dict[str, str]:
        """The CLI's environment (its config written under `home`). When the CLI can send a
        header, `proxy` gets a fresh secret and the variables that carry it go to a file in
        the socket's private folder, which the forwarder reads (see `proxy.py`)."""
        env = {"HOME": HOME_INSIDE, "PATH": _path(self.node), "TERM": "dumb", "CI": "1",
               "NO_COLOR": "1", **self.adapter.prepare(
                   home, f"http://127.0.0.1:{PORT}{proxy.prefix}", self.model.model_id)}
        secret = secrets.token_urlsafe(32)
        hidden = self.adapter.secret_env(secret, env)
        if hidden is not None:
            proxy.secret = secret
            fd = os.open(proxy.socket_path.parent / CLI_ENV_FILE,
                         os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
            with os.fdopen(fd, "w") as handle:
                json.dump(hidden, handle)
        return env

    async def _sandboxed(self, task: AgentTask, home: Path, proxy: ModelProxy,
                         env: dict[str, str]) -> Any:
        """Run the CLI behind its forwarder in the sandbox."""
        python = self.sandbox.which("python3") or "/usr/bin/python3"
        argv = [python, "-c", FORWARDER, str(proxy.socket_path), str(PORT),
                f"{HOME_INSIDE}/{EVENTS}", "--", str(self.cli),
                *self.adapter.argv(task.prompt, self.model.model_id, task.budget)]
        mounts = Mounts(read_only=(str(self.install), str(self.node.parent)),
                        writable=((str(home), HOME_INSIDE),),
                        private=(str(proxy.socket_path.parent),))
        limits = replace(CLI_LIMITS, wall_s=task.budget.wall_s)
        return await self.sandbox.run(argv, task.workspace, limits=limits, env=env,
                                      mounts=mounts)

    def _outcome(self, task: AgentTask, parsed: Parsed) -> AgentOutcome:
        outcome = AgentOutcome(final_text=parsed.final_text, protocol=self.name,
                               input_tokens=parsed.usage.input_tokens,
                               output_tokens=parsed.usage.output_tokens,
                               cost_usd=self.model.provider.cost(self.model.model_id,
                                                                 parsed.usage))
        outcome.transcript = [TranscriptEntry("user", task.prompt), *parsed.entries]
        outcome.turns = parsed.turns if parsed.turns is not None else count_turns(parsed.entries)
        for entry in parsed.entries:
            if entry.kind == "tool_call" and entry.tool:
                outcome.count_tool(entry.tool)
        if task.skill_name:
            for rel in skill_files(parsed.entries, task.skill_name):
                outcome.saw_skill_file(rel)
        if parsed.stopped_at_turns:
            outcome.stop_reason = "turns"
        return outcome

    async def aclose(self) -> None:
        """Nothing stays open between samples."""


_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def count_turns(entries: list[TranscriptEntry]) -> int:
    """Model replies: each run of assistant text and tool calls after a prompt or results."""
    turns, in_reply = 0, False
    for entry in entries:
        replying = entry.kind in ("assistant", "tool_call")
        if replying and not in_reply:
            turns += 1
        in_reply = replying
    return turns


def skill_files(entries: list[TranscriptEntry], skill: str) -> list[str]:
    """Files under the skill folder that tool calls opened or ran (SKILL.md when the CLI's own
    skill tool loaded it), relative to the skill, in order."""
    pattern = re.compile(r"(?:\.agents|\.claude)/skills/" + re.escape(skill)
                         + r"/([A-Za-z0-9_.\-/]*[A-Za-z0-9_\-])")
    found: list[str] = []
    for entry in entries:
        if entry.kind != "tool_call" or entry.arguments is None:
            continue
        key = _SKILL_TOOLS.get(entry.tool or "")
        hits = ["SKILL.md"] if key and entry.arguments.get(key) == skill else []
        hits += pattern.findall(json.dumps(entry.arguments))
        found += [hit for hit in hits if hit not in found and ".." not in hit.split("/")]
    return found


def _link_skills(task: AgentTask, folder: str) -> list[Path]:
    """The seeded skill's link (`_link_skill`), then those of the skills it requires."""
    if not task.skill_name or not task.skill_path:
        return []
    found = [_link_skill(task.workspace, folder, name, path)
             for name, _, path in [(task.skill_name, "", task.skill_path), *task.required]]
    return [link for link in found if link is not None]


def _link_skill(workspace: Path, folder: str, name: str, skill_path: str) -> Path | None:
    """The relative link `folder/<name>` -> the seeded skill at `skill_path`, when the CLI
    reads another folder than the seeded one; None when nothing was made."""
    if folder == str(Path(skill_path).parent):
        return None
    link = workspace / folder / name
    if link.exists() or link.is_symlink():
        return None
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(os.path.relpath(workspace / skill_path, link.parent))
    return link


def _unlink_skill(link: Path | None, workspace: Path) -> None:
    """Remove the link and the folders made for it, if the agent left them empty. The agent may
    have swapped any folder on the way for a link to a host folder: each is opened relative to
    the last with `O_NOFOLLOW`, so nothing outside the workspace is ever removed."""
    if link is None:
        return
    parts = link.relative_to(workspace).parts
    fds = [os.open(workspace, _DIR_FLAGS)]
    try:
        for part in parts[:-1]:
            fds.append(os.open(part, _DIR_FLAGS, dir_fd=fds[-1]))
        if stat.S_ISLNK(os.lstat(parts[-1], dir_fd=fds[-1]).st_mode):
            os.unlink(parts[-1], dir_fd=fds[-1])
        for depth in (len(parts) - 2, len(parts) - 3):  # the link's folder, then its parent
            if depth >= 0:
                os.rmdir(parts[depth], dir_fd=fds[depth])
    except OSError:
        return  # replaced, not empty, or gone: left as the agent left it
    finally:
        for fd in fds:
            os.close(fd)


def _read_events(path: Path, redact: str | None = None) -> list[dict[str, Any]]:
    """The CLI's JSON lines (written by untrusted code: never followed through a link, never
    waited on: a FIFO, a folder or anything but a regular file counts as no events), with
    `redact` (the proxy's secret, which an agent may have printed) blanked out."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return []
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        return []
    with os.fdopen(fd, "rb") as handle:
        data = handle.read(MAX_EVENTS_BYTES)
    if redact:
        data = data.replace(redact.encode(), REDACTED)
    events = []
    for line in data.decode("utf-8", "replace").splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict):
            events.append(event)
    return events


def _path(node: Path) -> str:
    return os.pathsep.join(dict.fromkeys([str(node.parent), "/usr/local/bin", "/usr/bin",
                                          "/bin"]))
