"""External agent harnesses: the real CLIs (from `make agent-clis`) run in real bubblewrap
against the scripted fake model on 127.0.0.1, reaching it only through the key-holding proxy."""

from __future__ import annotations

import asyncio
import json
import sys
import tomllib
from pathlib import Path

import pytest

from registry.agent import AgentTask, Budget, TranscriptEntry, seed_workspace
from registry.agent.harness import (
    ADAPTERS,
    AUX_REQUESTS,
    HARNESSES,
    PLACEHOLDER_KEY,
    Harness,
    ModelProxy,
    count_turns,
    make_harness,
    skill_files,
)
from registry.agent.harness.replay import Replay
from registry.config import Settings
from registry.errors import HubskillsError
from registry.evaluation.cache import ResponseCache
from registry.format.skill import load_skill
from registry.providers.anthropic import AnthropicProvider
from registry.providers.model import Model
from registry.providers.openai_compat import LocalProvider, OpenAIProvider
from registry.sandbox import DirectSandbox
from tests.agent_clis_required import agent_cli
from tests.fakes.agent_server import GOOD_LINE
from tests.fakes.harness_server import HarnessServer
from tests.sandbox_required import bwrap_sandbox

REAL_KEY = "sk-hubskills-real-key-7f3a9c"
SKILL = ("toml-facts", "Facts about kernel-builder build.toml files. Use when writing one.")
SKILL_BODY = "Declare capabilities = [\"9.0\"] for H100 kernels."
PROMPT = "Write build.toml for the relu kernel and check that it parses."


def _model(name: str, url: str) -> Model:
    if name in ("claude-code", "opencode"):
        return Model("anthropic:fake", AnthropicProvider(base_url=url, api_key=REAL_KEY), "fake")
    if name == "codex":
        return Model("openai:fake", OpenAIProvider(base_url=f"{url}/v1", api_key=REAL_KEY),
                     "fake")
    return Model("local:fake", LocalProvider(base_url=url, api_key=REAL_KEY), "fake")


@pytest.fixture
def skill(tmp_path: Path):
    folder = tmp_path / "src" / SKILL[0]
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(f"---\nname: {SKILL[0]}\ndescription: {SKILL[1]}\n---\n"
                                     f"{SKILL_BODY}\n")
    return load_skill(folder)


def _run(name: str, tmp_path: Path, *, skill=None, script=None, budget: Budget | None = None):
    """Run harness `name` once; (outcome, workspace, server, harness)."""
    agent_cli(name)
    sandbox = bwrap_sandbox()
    skill_dir = ".claude/skills" if name == "claude-code" else ".agents/skills"
    with HarnessServer(root="/workspace", script=script, skill=SKILL,
                       skill_dir=skill_dir) as server:
        harness = make_harness(name, model=_model(name, server.url), sandbox=sandbox,
                               settings=Settings.from_env({}))
        workspace = seed_workspace(tmp_path / "ws", {"README.md": "relu kernel\n"}, skill=skill)
        task = AgentTask(PROMPT, workspace.path, skill_name=skill and skill.name,
                         skill_description=skill and skill.description,
                         skill_path=workspace.skill_path, budget=budget or Budget())
        outcome = asyncio.run(harness.run(task))
    return outcome, workspace, server, harness


@pytest.mark.slow
@pytest.mark.parametrize("name", HARNESSES)
def test_skill_arm_reads_the_skill_and_builds_the_file(name, tmp_path, skill):
    outcome, workspace, server, harness = _run(name, tmp_path, skill=skill)
    assert (outcome.protocol, outcome.stop_reason, outcome.error) == \
        (f"harness:{name}", "answered", None)
    assert [change.path for change in workspace.diff()] == ["build.toml"]  # no link left over
    built = (workspace.path / "build.toml").read_text()
    assert GOOD_LINE in built
    assert tomllib.loads(built)["general"]["name"] == "relu"
    assert outcome.final_text.startswith("Done: build.toml declares the relu kernel")
    assert outcome.turns == 6  # the skill read, then the script's five replies
    assert sum(outcome.tool_calls.values()) == 5
    assert (outcome.input_tokens, outcome.output_tokens) == (100 * 6, 20 * 6)  # the fake's usage
    assert outcome.skill_files == ["SKILL.md"] and outcome.activated
    results = [e.text for e in outcome.transcript if e.kind == "tool_result"]
    assert any(SKILL_BODY in text for text in results)  # the file was really read
    # the model's own pricing: a local model is free; a fake Anthropic/OpenAI id has no price
    assert outcome.cost_usd == (0.0 if name == "gemini" else None)
    assert all(h.get("x-api-key", h.get("authorization", h.get("x-goog-api-key", "")))
               .endswith(REAL_KEY) for h in server.headers)
    # every model request carried the run's secret, and the model never saw it (Claude Code's
    # connectivity probe, a HEAD without its custom headers, is refused and it goes on)
    assert harness.last_proxy.secret
    assert all(r.startswith("HEAD ") for r in harness.last_proxy.refused)
    assert not any("x-hubskills-proxy-secret" in h for h in server.headers)


@pytest.mark.slow
@pytest.mark.parametrize("name", HARNESSES)
def test_baseline_runs_the_same_cli_without_the_skill(name, tmp_path):
    outcome, workspace, server, _ = _run(name, tmp_path)
    assert outcome.stop_reason == "answered" and outcome.error is None
    assert [change.path for change in workspace.diff()] == ["build.toml"]
    assert SKILL[1] not in server.all_bodies()  # nothing listed
    assert outcome.turns == 5 and sum(outcome.tool_calls.values()) == 4
    assert outcome.skill_files == [] and not outcome.activated
    kinds = [e.kind for e in outcome.transcript]
    assert kinds[0] == "user" and kinds.count("tool_result") == 4


@pytest.mark.slow
@pytest.mark.parametrize("name", HARNESSES)
def test_the_turn_budget_stops_a_cli_that_keeps_going(name, tmp_path):
    """The proxy holds the turn budget for every CLI (only Claude Code has a flag for it): past
    `max_turns` + a few requests of the CLI's own, the model answers 400 and the CLI stops."""
    script = [{"say": f"Step {i}.", "run": "true"} for i in range(30)]
    outcome, _, server, harness = _run(name, tmp_path, script=script, budget=Budget(max_turns=3))
    assert outcome.stop_reason == "turns" and outcome.error is None, outcome.error
    if name == "claude-code":  # its own --max-turns 3 stops it before the proxy has to
        assert len(server.requests) == 3 and not harness.last_proxy.over_budget
    else:  # the proxy forwarded exactly the budget, then refused: nothing more reached the model
        assert len(server.requests) == 3 + AUX_REQUESTS and harness.last_proxy.over_budget
    assert outcome.turns <= 3 + AUX_REQUESTS


@pytest.mark.slow
@pytest.mark.parametrize("name", HARNESSES)
def test_a_rerun_is_answered_from_the_cache_and_another_repeat_is_not(name, tmp_path, skill):
    """Also `--no-cache` (read_cache=False): the model is asked again, and its answers are
    kept, so a later run (a resume) asks nothing."""
    agent_cli(name)
    cache = ResponseCache(tmp_path / "cache.sqlite")
    with HarnessServer(root="/workspace", skill=SKILL, skill_dir=".claude/skills"
                       if name == "claude-code" else ".agents/skills") as server:
        def make(read_cache: bool):
            return make_harness(name, model=_model(name, server.url), sandbox=bwrap_sandbox(),
                                settings=Settings.from_env({}), cache=cache,
                                read_cache=read_cache)

        reading = make(True)

        def once(folder: str, seed: int, harness=reading):
            workspace = seed_workspace(tmp_path / folder, {"README.md": "relu kernel\n"},
                                       skill=skill)
            task = AgentTask(PROMPT, workspace.path, skill_name=skill.name,
                             skill_description=skill.description,
                             skill_path=workspace.skill_path, seed=seed)
            return asyncio.run(harness.run(task)), workspace

        first, _ = once("ws1", 0, make(False))
        asked = len(server.requests)
        fresh, _ = once("ws2", 0, make(False))  # --no-cache asks again
        assert len(server.requests) == 2 * asked and not (first.cached or fresh.cached)
        again, workspace = once("ws3", 0)
        assert len(server.requests) == 2 * asked and again.cached
        assert (again.final_text, again.turns, again.stop_reason) == \
            (first.final_text, first.turns, "answered")
        assert GOOD_LINE in (workspace.path / "build.toml").read_text()  # the CLI really ran
        other, _ = once("ws4", 1)  # another repeat is asked anew
        assert len(server.requests) == 3 * asked and not other.cached


@pytest.mark.slow
@pytest.mark.parametrize("name", HARNESSES)
def test_another_skill_with_the_same_listing_is_never_answered_from_the_cache(name, tmp_path,
                                                                               skill):
    """Two skills listed alike (name, description) make the same first request: the second
    skill's sample still asks the model all of it, from the first turn on."""
    agent_cli(name)
    cache = ResponseCache(tmp_path / "cache.sqlite")
    other_folder = tmp_path / "other" / SKILL[0]
    other_folder.mkdir(parents=True)
    (other_folder / "SKILL.md").write_text(
        f"---\nname: {SKILL[0]}\ndescription: {SKILL[1]}\n---\nDeclare nothing at all.\n")
    with HarnessServer(root="/workspace", skill=SKILL, skill_dir=".claude/skills"
                       if name == "claude-code" else ".agents/skills") as server:
        harness = make_harness(name, model=_model(name, server.url), sandbox=bwrap_sandbox(),
                               settings=Settings.from_env({}), cache=cache)

        def once(folder: str, given):
            workspace = seed_workspace(tmp_path / folder, {"README.md": "relu kernel\n"},
                                       skill=given)
            return asyncio.run(harness.run(AgentTask(
                PROMPT, workspace.path, skill_name=given.name,
                skill_description=given.description, skill_path=workspace.skill_path,
                case_id="relu")))

        first = once("ws1", skill)
        asked = len(server.requests)
        second = once("ws2", load_skill(other_folder))
        assert first.stop_reason == second.stop_reason == "answered"
        assert not second.cached and len(server.requests) == 2 * asked


def test_replay_keys_ignore_ids_and_session_data_but_not_the_conversation():
    replay = Replay({}, "s", (r"Chunk ID: \w+",))  # keys need no store
    body = {"model": "m", "metadata": {"user_id": "u1"}, "prompt_cache_key": "k1",
            "input": [{"id": "a1", "role": "user", "content": "hi"},
                      {"call_id": "c1", "output": "Chunk ID: 3f2a\nok"}]}
    same = {**body, "metadata": {"user_id": "u2"}, "prompt_cache_key": "k2",
            "input": [{"id": "b7", "role": "user", "content": "hi"},
                      {"call_id": "c9", "output": "Chunk ID: 77aa\nok"}]}
    differs = {**body, "input": [{"id": "a1", "role": "user", "content": "hello"}]}
    key = replay.key("/v1/responses", json.dumps(body).encode())
    assert replay.key("/v1/responses", json.dumps(same).encode()) == key
    assert replay.key("/v1/responses", json.dumps(differs).encode()) != key
    assert Replay({}, "another repeat").key("/v1/responses", json.dumps(body).encode()) != key


SNOOP = ("env; cat /proc/1/environ /proc/self/environ | tr '\\0' '\\n'; "
         "python3 -c \"import socket; s = socket.create_connection(('127.0.0.1', 8787)); "
         "s.sendall(b'GET http://example.com/ HTTP/1.1\\r\\nhost: example.com\\r\\n\\r\\n'); "
         "print(s.recv(200))\"")


@pytest.mark.slow
@pytest.mark.parametrize("name", HARNESSES)
def test_the_key_never_enters_the_sandbox_and_the_proxy_refuses_other_hosts(name, tmp_path):
    script = [{"say": "Looking around.", "run": SNOOP}, {"say": "Done looking."}]
    outcome, _, server, harness = _run(name, tmp_path, script=script)
    seen = "\n".join(e.text for e in outcome.transcript if e.kind == "tool_result")
    assert "HOME=/home/agent" in seen and PLACEHOLDER_KEY in seen  # env really ran
    assert "403 Forbidden" in seen
    assert harness.last_proxy is not None
    refused = [r for r in harness.last_proxy.refused if not r.startswith("HEAD ")]
    assert refused == ["GET http://example.com/"]  # (and Claude Code's HEAD probe, above)
    assert REAL_KEY not in seen and REAL_KEY not in server.all_bodies()
    secret = harness.last_proxy.secret  # printed by `env`, blanked out everywhere
    assert secret and secret not in seen and secret not in server.all_bodies()
    assert "[hubskills-proxy-secret]" in seen
    assert outcome.final_text == "Done looking."


# A child process is the client: pytest-socket forbids Unix sockets in the test process.
CLIENT = ("import socket, sys; s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); "
          "s.sendall(sys.stdin.buffer.read()); s.shutdown(socket.SHUT_WR); "
          "sys.stdout.buffer.write(b''.join(iter(lambda: s.recv(65536), b'')))")


async def _ask(socket_path: Path, head: str) -> bytes:
    child = await asyncio.create_subprocess_exec(
        sys.executable, "-c", CLIENT, str(socket_path), stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE)
    data, _ = await child.communicate(head.encode())
    return data


@pytest.mark.parametrize("wire,upstream_path,route,header,expected", [
    ("openai", "/v1", "/responses", "authorization", f"Bearer {REAL_KEY}"),
    ("anthropic", "", "/v1/messages", "x-api-key", REAL_KEY),
    ("gemini", "", "/v1beta/models/fake:generateContent", "x-goog-api-key", REAL_KEY),
])
def test_proxy_swaps_the_placeholder_for_the_real_key(tmp_path, wire, upstream_path, route,
                                                      header, expected):
    body = '{"input": "hi"}'
    target = f"{upstream_path}{route}?key={PLACEHOLDER_KEY}"

    async def go(url: str) -> bytes:
        async with ModelProxy(upstream=url + upstream_path, key=REAL_KEY, wire=wire,
                              folder=tmp_path) as proxy:
            return await _ask(proxy.socket_path, (
                f"POST {target} HTTP/1.1\r\nhost: 127.0.0.1\r\nx-api-key: {PLACEHOLDER_KEY}\r\n"
                f"authorization: Bearer {PLACEHOLDER_KEY}\r\ncontent-type: application/json\r\n"
                f"content-length: {len(body)}\r\n\r\n{body}"))

    with HarnessServer(root="/w") as server:
        reply = asyncio.run(go(server.url))
    assert reply.startswith(b"HTTP/1.1 200")
    assert server.headers[0][header] == expected
    assert PLACEHOLDER_KEY not in str(server.headers) and server.requests[0][1] == {"input": "hi"}


@pytest.mark.parametrize("head", [
    "CONNECT example.com:443 HTTP/1.1\r\nhost: example.com:443\r\n\r\n",
    "GET http://example.com/v1/models HTTP/1.1\r\nhost: example.com\r\n\r\n",
    "GET //example.com/v1/models HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n",
    "GET /v2/models HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n",
    "GET /v1x/models HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n",
    "GET /v1/models HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n",  # no CLI lists models
    "POST /v1/files HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: 0\r\n\r\n",
    "GET /v1/responses HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n",
])
def test_proxy_refuses_everything_but_the_model_endpoint(tmp_path, head):
    async def go(url: str) -> tuple[bytes, list[str]]:
        async with ModelProxy(upstream=f"{url}/v1", key=REAL_KEY, wire="openai",
                              folder=tmp_path) as proxy:
            return await _ask(proxy.socket_path, head), proxy.refused

    with HarnessServer(root="/w") as server:
        reply, refused = asyncio.run(go(server.url))
    assert reply.startswith(b"HTTP/1.1 403") and len(refused) == 1
    assert server.requests == []


def test_a_missing_cli_names_its_npm_package_and_the_make_target(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.chdir(Path(__file__).resolve().parent.parent)  # the checkout: `make` works
    model = _model("codex", "http://127.0.0.1:9")
    from registry.sandbox import BwrapSandbox
    with pytest.raises(HubskillsError) as caught:
        make_harness("codex", model=model, sandbox=BwrapSandbox(), settings=Settings.from_env({}),
                     tools=tmp_path)
    assert "@openai/codex@0.169.0" in str(caught.value)
    assert "make agent-clis" in (caught.value.hint or "")
    # a tool install (pipx, uv, pip) has no Makefile: npm alone (issue 38)
    monkeypatch.setattr("registry._install.install_kind", lambda: "pipx")
    with pytest.raises(HubskillsError) as caught:
        make_harness("codex", model=model, sandbox=BwrapSandbox(), settings=Settings.from_env({}),
                     tools=tmp_path)
    assert caught.value.hint == "npm install -g @openai/codex@0.169.0"


def test_harness_refuses_a_model_it_cannot_speak_to_and_a_non_isolating_sandbox(tmp_path):
    settings = Settings.from_env({})
    from registry.sandbox import BwrapSandbox
    with pytest.raises(HubskillsError, match="speaks the anthropic API"):
        make_harness("claude-code", model=_model("codex", "http://127.0.0.1:9"),
                     sandbox=BwrapSandbox(), settings=settings)
    with pytest.raises(HubskillsError, match="only inside the bwrap sandbox"):
        make_harness("claude-code", model=_model("claude-code", "http://127.0.0.1:9"),
                     sandbox=DirectSandbox(), settings=settings)
    with pytest.raises(HubskillsError, match="unknown harness"):
        make_harness("copilot", model=_model("codex", "http://x"), sandbox=BwrapSandbox(),
                     settings=settings)


def test_turns_count_replies_and_skill_files_come_from_tool_arguments():
    entries = [TranscriptEntry("assistant", "reading"),
               TranscriptEntry("tool_call", tool="Bash", arguments={
                   "command": "cat .claude/skills/toml-facts/references/a.md"}),
               TranscriptEntry("tool_result", "..."),
               TranscriptEntry("tool_call", tool="activate_skill",
                               arguments={"name": "toml-facts"}),
               TranscriptEntry("tool_call", tool="read", arguments={
                   "filePath": "/workspace/.agents/skills/toml-facts/../other/SKILL.md"}),
               TranscriptEntry("tool_result", "..."),
               TranscriptEntry("assistant", "done")]
    assert count_turns(entries) == 3
    assert skill_files(entries, "toml-facts") == ["references/a.md", "SKILL.md"]
    assert skill_files(entries, "other") == []


def test_doctor_lists_which_harness_clis_are_found(tmp_path):
    from click.testing import CliRunner

    from registry.agent.harness import find_cli
    from registry.cli import cli

    env = {"HUBSKILLS_HOME": str(tmp_path / "home"), "HUBSKILLS_REGISTRY": "local"}
    data = json.loads(CliRunner().invoke(cli, ["doctor", "--json"], env=env).stdout)
    expected = {name: str(found.binary) if (found := find_cli(name)) else None
                for name in HARNESSES}
    assert {name: row["found"] for name, row in data["harnesses"].items()} == expected
    assert data["harnesses"]["codex"]["package"] == "@openai/codex@0.169.0"
    human = CliRunner().invoke(cli, ["doctor"], env=env).output
    assert "agent CLIs (--harness)" in human and "opencode" in human


# What the model reads at any depth changes the key; only the volatile places the pinned CLIs
# fill (tests/test_harness.py's runs, measured twice each) are dropped.
MODEL_READS = [
    ("/v1/messages",  # Claude Code: a tool's parameter named `id`, its description
     {"model": "m", "messages": [{"role": "user", "content": "hi"}], "tools": [{
         "name": "CronDelete", "input_schema": {"type": "object", "properties": {
             "id": {"type": "string", "description": "Job ID returned by CronCreate."}}}}]},
     ("tools", 0, "input_schema", "properties", "id", "description"), "Delete every job."),
    ("/v1/messages",  # a tool's parameter named `metadata`
     {"model": "m", "messages": [], "tools": [{"name": "TaskUpdate", "input_schema": {
         "properties": {"metadata": {"description": "Metadata keys to merge."}}}}]},
     ("tools", 0, "input_schema", "properties", "metadata", "description"), "Wipe the task."),
    ("/v1/messages",  # the arguments of a call the model made
     {"model": "m", "messages": [{"role": "assistant", "content": [
         {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"id": "a.txt"}}]}]},
     ("messages", 0, "content", 0, "input", "id"), "b.txt"),
    ("/v1/responses",  # Codex: a tool's `session_id` parameter
     {"model": "m", "input": [], "tools": [{"type": "function", "name": "write_stdin",
                                            "parameters": {"properties": {"session_id": {
                                                "type": "number", "description": "A."}}}}]},
     ("tools", 0, "parameters", "properties", "session_id", "description"), "B."),
    ("/v1beta/models/m:streamGenerateContent",  # Gemini: a function call's arguments
     {"contents": [{"role": "model", "parts": [{"functionCall": {
         "id": "f_1", "name": "read_file", "args": {"user": "alice"}}}]}]},
     ("contents", 0, "parts", 0, "functionCall", "args", "user"), "mallory"),
]


@pytest.mark.parametrize("target,body,where,other", MODEL_READS)
def test_replay_keys_change_with_what_the_model_reads_at_any_depth(target, body, where, other):
    changed = json.loads(json.dumps(body))
    node = changed
    for step in where[:-1]:
        node = node[step]
    node[where[-1]] = other
    replay = Replay({}, "s")
    assert replay.key(target, json.dumps(changed).encode()) != \
        replay.key(target, json.dumps(body).encode())


def test_replay_keys_ignore_what_each_cli_makes_up_where_it_puts_it():
    replay = Replay({}, "s")
    claude = {"model": "m", "metadata": {"user_id": '{"device_id":"75f5"}'}, "messages": [
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_3", "name": "Bash",
                                           "input": {"command": "ls"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_3",
                                      "content": "a"}]}]}
    gemini = {"contents": [{"role": "model", "parts": [{"functionCall": {
        "id": "run_shell_command_1796661794740_0", "name": "run_shell_command",
        "args": {"command": "ls"}}}]}, {"role": "user", "parts": [{"functionResponse": {
            "id": "run_shell_command_1796661794740_0", "name": "run_shell_command",
            "response": {"output": "a"}}}]}]}
    chat = {"model": "m", "user": "u1", "messages": [
        {"role": "assistant", "tool_calls": [{"id": "call_1", "type": "function",
                                              "function": {"name": "f", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "a"}]}
    for target, body, other in [
        ("/v1/messages", claude, json.dumps(claude).replace("toolu_3", "toolu_9")
         .replace("75f5", "99d3")),
        ("/v1beta/models/m:streamGenerateContent", gemini,
         json.dumps(gemini).replace("1796661794740", "1796661806666")),
        ("/v1/chat/completions", chat,
         json.dumps(chat).replace("call_1", "call_7").replace("u1", "u2")),
    ]:
        assert replay.key(target, other.encode()) == replay.key(target, json.dumps(body).encode())


def test_a_samples_cache_never_answers_another_arm_skill_or_case(tmp_path, skill):
    """The same request from two samples shares an answer only when they are the same sample
    (a resume): not for another arm, another skill (same name and description, another body),
    or another case."""
    from registry.sandbox import BwrapSandbox

    harness = Harness(
        ADAPTERS["claude-code"](), model=_model("claude-code", "http://127.0.0.1:9"),
        sandbox=BwrapSandbox(), cli=tmp_path / "claude", install=tmp_path,
        base_url="http://127.0.0.1:9", key=REAL_KEY, node=tmp_path / "node", cache={})
    other_folder = tmp_path / "other" / SKILL[0]
    other_folder.mkdir(parents=True)
    (other_folder / "SKILL.md").write_text(
        f"---\nname: {SKILL[0]}\ndescription: {SKILL[1]}\n---\nDeclare nothing.\n")
    other = load_skill(other_folder)
    body = json.dumps({"model": "fake", "messages": [{"role": "user", "content": PROMPT}]})

    def key(folder: str, with_skill, case_id: str = "c1", seed: int = 0) -> str:
        ws = seed_workspace(tmp_path / folder, {"README.md": "relu kernel\n"}, skill=with_skill)
        task = AgentTask(PROMPT, ws.path, skill_name=with_skill and with_skill.name,
                         skill_path=ws.skill_path, seed=seed, case_id=case_id)
        replay = harness._replay(task)
        assert replay is not None
        return replay.key("/v1/messages", body.encode())

    first = key("a", skill)
    assert key("a-again", skill) == first  # a resume of the same sample still hits
    assert len({first, key("baseline", None), key("other-skill", other),
                key("other-case", skill, "c2"), key("other-repeat", skill, seed=1)}) == 5
