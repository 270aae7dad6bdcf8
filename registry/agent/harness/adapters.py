"""The four agent CLIs: how each is pointed at the proxy and how its JSON events read back
(docs/evaluating.md, "External agent harnesses", says what each is run with)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

from registry.agent.harness.base import HOME_INSIDE, Adapter, Parsed
from registry.agent.harness.proxy import PLACEHOLDER_KEY, SECRET_HEADER, Wire
from registry.agent.outcome import Budget, TranscriptEntry
from registry.providers.base import Usage

OPENAI_FAMILY = frozenset({"openai", "hf", "local", "openai-compatible"})
_SECRET_VARIABLE = "HUBSKILLS_PROXY_SECRET"


def _text(content: Any) -> str:
    """A tool result's content as text (a string, or a list of text blocks)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return "" if content is None else json.dumps(content)


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _int(value: Any) -> int:
    return value if isinstance(value, int) else 0


def _exchange(tool: str, arguments: dict[str, Any], call_id: Any, result: str,
              is_error: bool) -> list[TranscriptEntry]:
    """A tool call and its result, for CLIs that report both in one event."""
    return [TranscriptEntry("tool_call", tool=tool, arguments=arguments, call_id=call_id),
            TranscriptEntry("tool_result", result, call_id=call_id, is_error=is_error)]


def _final(entries: list[TranscriptEntry]) -> str:
    """The assistant text after the last tool result: the CLI's answer."""
    tail: list[str] = []
    for entry in entries:
        if entry.kind in ("tool_call", "tool_result"):
            tail = []
        elif entry.kind == "assistant":
            tail.append(entry.text)
    return "\n".join(t for t in tail if t).strip()


class ClaudeCode(Adapter):
    """`claude -p --output-format stream-json`; reads `.claude/skills` only."""

    name: ClassVar[str] = "claude-code"
    package: ClassVar[str] = "@anthropic-ai/claude-code"
    version: ClassVar[str] = "2.1.197"
    binary: ClassVar[str] = "claude"
    wire: ClassVar[Wire] = "anthropic"
    providers: ClassVar[frozenset[str]] = frozenset({"anthropic"})
    skills_folder: ClassVar[str] = ".claude/skills"

    def prepare(self, home: Path, base_url: str, model_id: str) -> dict[str, str]:
        return {"ANTHROPIC_BASE_URL": base_url, "ANTHROPIC_API_KEY": PLACEHOLDER_KEY,
                "DISABLE_TELEMETRY": "1", "DISABLE_AUTOUPDATER": "1",
                "DISABLE_ERROR_REPORTING": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
                "IS_SANDBOX": "1"}  # it runs in ours: its own permission prompts have no one

    def secret_env(self, secret: str, env: dict[str, str]) -> dict[str, str] | None:
        return {"ANTHROPIC_CUSTOM_HEADERS": f"{SECRET_HEADER}: {secret}"}

    def argv(self, prompt: str, model_id: str, budget: Budget) -> list[str]:
        return ["-p", "--output-format", "stream-json", "--verbose",
                "--dangerously-skip-permissions", "--model", model_id,
                "--max-turns", str(budget.max_turns), prompt]

    def parse(self, events: list[dict[str, Any]]) -> Parsed:
        parsed = Parsed()
        for event in events:
            content = _dict(event.get("message")).get("content")
            blocks = [b for b in content if isinstance(b, dict)] \
                if isinstance(content, list) else []
            if event.get("type") == "assistant":
                for block in blocks:
                    if block.get("type") == "text":
                        parsed.entries.append(TranscriptEntry("assistant", str(block["text"])))
                    elif block.get("type") == "tool_use":
                        parsed.entries.append(TranscriptEntry(
                            "tool_call", tool=str(block.get("name")),
                            arguments=_dict(block.get("input")), call_id=block.get("id")))
            elif event.get("type") == "user":
                parsed.entries += [TranscriptEntry(
                    "tool_result", _text(b.get("content")), call_id=b.get("tool_use_id"),
                    is_error=bool(b.get("is_error"))) for b in blocks
                    if b.get("type") == "tool_result"]
            elif event.get("type") == "result":
                self._result(event, parsed)
        return parsed

    @staticmethod
    def _result(event: dict[str, Any], parsed: Parsed) -> None:
        usage = _dict(event.get("usage"))
        parsed.usage = Usage(
            _int(usage.get("input_tokens")) + _int(usage.get("cache_read_input_tokens"))
            + _int(usage.get("cache_creation_input_tokens")), _int(usage.get("output_tokens")),
            _int(usage.get("cache_read_input_tokens")),
            _int(usage.get("cache_creation_input_tokens")))
        parsed.final_text = str(event.get("result") or "")
        parsed.turns = _int(event.get("num_turns")) or None
        parsed.stopped_at_turns = event.get("subtype") == "error_max_turns"
        if event.get("is_error") and not parsed.stopped_at_turns:
            parsed.error = f"claude: {event.get('subtype')}: {parsed.final_text[:300]}"


class Codex(Adapter):
    """`codex exec --json` against a custom Responses-API provider in `$CODEX_HOME`."""

    name: ClassVar[str] = "codex"
    package: ClassVar[str] = "@openai/codex"
    version: ClassVar[str] = "0.169.0"
    binary: ClassVar[str] = "codex"
    wire: ClassVar[Wire] = "openai"
    providers: ClassVar[frozenset[str]] = OPENAI_FAMILY
    # each exec_command result starts with a random chunk id and the command's wall time
    volatile: ClassVar[tuple[str, ...]] = (r"Chunk ID: \w+", r"Wall time: [0-9.]+ seconds")

    def prepare(self, home: Path, base_url: str, model_id: str) -> dict[str, str]:
        (home / ".codex").mkdir()
        (home / ".codex" / "config.toml").write_text(
            f"model = {json.dumps(model_id)}\nmodel_provider = \"hubskills\"\n\n"
            f"[model_providers.hubskills]\nname = \"hubskills\"\n"
            f"base_url = {json.dumps(base_url)}\nenv_key = \"HUBSKILLS_MODEL_KEY\"\n"
            f"wire_api = \"responses\"\n"
            f"env_http_headers = {{ {json.dumps(SECRET_HEADER)} = \"{_SECRET_VARIABLE}\" }}\n")
        return {"CODEX_HOME": f"{HOME_INSIDE}/.codex", "HUBSKILLS_MODEL_KEY": PLACEHOLDER_KEY}

    def secret_env(self, secret: str, env: dict[str, str]) -> dict[str, str] | None:
        return {_SECRET_VARIABLE: secret}  # config.toml names the variable, not the value

    def argv(self, prompt: str, model_id: str, budget: Budget) -> list[str]:
        # Its own bwrap sandbox cannot start inside ours: ours holds it.
        return ["exec", "--json", "--skip-git-repo-check",
                "--dangerously-bypass-approvals-and-sandbox", prompt]

    def parse(self, events: list[dict[str, Any]]) -> Parsed:
        parsed = Parsed()
        usage = Usage()
        for event in events:
            item = _dict(event.get("item"))
            if event.get("type") == "turn.completed":
                u = _dict(event.get("usage"))
                usage = usage + Usage(_int(u.get("input_tokens")), _int(u.get("output_tokens")),
                                      _int(u.get("cached_input_tokens")))
            elif event.get("type") == "turn.failed":
                parsed.error = f"codex: {_dict(event.get('error')).get('message', 'failed')}"
            elif event.get("type") == "item.completed":
                self._item(item, parsed)
        parsed.usage = usage
        parsed.final_text = _final(parsed.entries)
        return parsed

    @staticmethod
    def _item(item: dict[str, Any], parsed: Parsed) -> None:
        kind, call_id = item.get("type"), item.get("id")
        if kind == "agent_message":
            parsed.entries.append(TranscriptEntry("assistant", str(item.get("text", ""))))
        elif kind == "command_execution":
            parsed.entries += _exchange("exec_command", {"cmd": item.get("command")}, call_id,
                                        str(item.get("aggregated_output", "")),
                                        item.get("exit_code") != 0)
        elif kind in ("file_change", "mcp_tool_call", "web_search"):
            tool = "apply_patch" if kind == "file_change" else str(item.get("tool") or kind)
            arguments = {k: v for k, v in item.items() if k not in ("id", "type", "status")}
            parsed.entries += _exchange(tool, arguments, call_id, str(item.get("status", "")),
                                        item.get("status") == "failed")


class OpenCode(Adapter):
    """`opencode run --format json` with a provider defined in `OPENCODE_CONFIG_CONTENT`."""

    name: ClassVar[str] = "opencode"
    package: ClassVar[str] = "opencode-ai"
    version: ClassVar[str] = "1.18.33"
    binary: ClassVar[str] = "opencode"
    wire: ClassVar[Wire] = "anthropic"
    providers: ClassVar[frozenset[str]] = frozenset({"anthropic"})

    def prepare(self, home: Path, base_url: str, model_id: str) -> dict[str, str]:
        config = {"provider": {"hubskills": {
            "npm": "@ai-sdk/anthropic", "name": "hubskills",
            "options": {"baseURL": f"{base_url}/v1", "apiKey": PLACEHOLDER_KEY},
            "models": {model_id: {"name": model_id}}}},
            "model": f"hubskills/{model_id}", "small_model": f"hubskills/{model_id}",
            "autoupdate": False, "share": "disabled"}
        xdg = {"XDG_CONFIG_HOME": ".config", "XDG_DATA_HOME": ".local/share",
               "XDG_CACHE_HOME": ".cache", "XDG_STATE_HOME": ".local/state"}
        switches = ("AUTOUPDATE", "MODELS_FETCH", "DEFAULT_PLUGINS", "LSP_DOWNLOAD", "SHARE")
        return {**{k: f"{HOME_INSIDE}/{v}" for k, v in xdg.items()},
                **{f"OPENCODE_DISABLE_{s}": "1" for s in switches},
                "OPENCODE_CONFIG_CONTENT": json.dumps(config)}

    def secret_env(self, secret: str, env: dict[str, str]) -> dict[str, str] | None:
        config = json.loads(env["OPENCODE_CONFIG_CONTENT"])
        config["provider"]["hubskills"]["options"]["headers"] = {SECRET_HEADER: secret}
        return {"OPENCODE_CONFIG_CONTENT": json.dumps(config)}

    def argv(self, prompt: str, model_id: str, budget: Budget) -> list[str]:
        return ["run", "--format", "json", "--auto", prompt]

    def parse(self, events: list[dict[str, Any]]) -> Parsed:
        parsed = Parsed(turns=0)
        usage = Usage()
        for event in events:
            part, kind = _dict(event.get("part")), event.get("type")
            if kind == "step_start":
                parsed.turns = (parsed.turns or 0) + 1
            elif kind == "text":
                parsed.entries.append(TranscriptEntry("assistant", str(part.get("text", ""))))
            elif kind == "tool_use":
                state = _dict(part.get("state"))
                parsed.entries += _exchange(
                    str(part.get("tool")), _dict(state.get("input")), part.get("callID"),
                    str(state.get("output") or state.get("error") or ""),
                    state.get("status") == "error")
            elif kind == "step_finish":
                tokens = _dict(part.get("tokens"))
                cache = _dict(tokens.get("cache"))
                read, write = _int(cache.get("read")), _int(cache.get("write"))
                usage = usage + Usage(_int(tokens.get("input")) + read + write,
                                      _int(tokens.get("output")), read, write)
            elif kind == "error":
                parsed.error = f"opencode: {json.dumps(event.get('error'))[:300]}"
        parsed.usage = usage
        parsed.final_text = _final(parsed.entries)
        return parsed


class GeminiCli(Adapter):
    """`gemini -p --output-format stream-json`; its workspace must be trusted by variable."""

    name: ClassVar[str] = "gemini"
    package: ClassVar[str] = "@google/gemini-cli"
    version: ClassVar[str] = "0.61.0"
    binary: ClassVar[str] = "gemini"
    wire: ClassVar[Wire] = "gemini"
    providers: ClassVar[frozenset[str]] = frozenset({"local", "openai-compatible"})

    def prepare(self, home: Path, base_url: str, model_id: str) -> dict[str, str]:
        settings = {"security": {"auth": {"selectedType": "gemini-api-key"}},
                    "privacy": {"usageStatisticsEnabled": False},
                    "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
                    "telemetry": {"enabled": False}}
        (home / ".gemini").mkdir()
        (home / ".gemini" / "settings.json").write_text(json.dumps(settings))
        return {"GEMINI_API_KEY": PLACEHOLDER_KEY, "GOOGLE_GEMINI_BASE_URL": base_url,
                "GEMINI_CLI_TRUST_WORKSPACE": "true"}

    def secret_env(self, secret: str, env: dict[str, str]) -> dict[str, str] | None:
        return {"GEMINI_CLI_CUSTOM_HEADERS": f"{SECRET_HEADER}: {secret}"}

    def argv(self, prompt: str, model_id: str, budget: Budget) -> list[str]:
        return ["--output-format", "stream-json", "--yolo", "-m", model_id, "-p", prompt]

    def parse(self, events: list[dict[str, Any]]) -> Parsed:
        parsed = Parsed()
        for event in events:
            kind = event.get("type")
            if kind == "message" and event.get("role") == "assistant":
                last = parsed.entries[-1] if parsed.entries else None
                if last is not None and last.kind == "assistant":
                    last.text += str(event.get("content", ""))
                else:
                    parsed.entries.append(TranscriptEntry("assistant",
                                                          str(event.get("content", ""))))
            elif kind == "tool_use":
                parsed.entries.append(TranscriptEntry(
                    "tool_call", tool=str(event.get("tool_name")),
                    arguments=_dict(event.get("parameters")), call_id=event.get("tool_id")))
            elif kind == "tool_result":
                error = event.get("error")
                parsed.entries.append(TranscriptEntry(
                    "tool_result", _text(event.get("output") or _dict(error).get("message")),
                    call_id=event.get("tool_id"), is_error=event.get("status") != "success"))
            elif kind == "result":
                stats = _dict(event.get("stats"))
                parsed.usage = Usage(_int(stats.get("input_tokens")),
                                     _int(stats.get("output_tokens")), _int(stats.get("cached")))
                if event.get("status") != "success":
                    parsed.error = f"gemini: {json.dumps(event.get('error'))[:300]}"
        parsed.final_text = _final(parsed.entries)
        return parsed


ADAPTERS: dict[str, type[Adapter]] = {a.name: a for a in (ClaudeCode, Codex, OpenCode,
                                                          GeminiCli)}
