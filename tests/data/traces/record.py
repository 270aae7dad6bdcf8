"""Re-record the real-CLI session fixtures in tests/data/traces/recorded/ (see README.md there).

    npm install --prefix /tmp/agents @anthropic-ai/claude-code@2.1.197 @openai/codex@0.169.0 \
        opencode-ai@1.18.33 @google/gemini-cli@0.61.0
    python tests/data/traces/record.py /tmp/agents            # all of them
    python tests/data/traces/record.py /tmp/agents codex      # one

Each CLI runs offline (`env -i`, a fresh HOME) against `tests.fakes.agent_server`, whose
script writes build.toml with an unclosed array, runs a check that fails, fixes the file,
checks again and answers. The session file the CLI wrote is copied with the temporary folder
replaced by /home/dev, so no path of this machine is committed.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
from tests.fakes.agent_server import ScriptedAgentServer  # noqa: E402

HERE = Path(__file__).resolve().parent / "recorded"
TASK = "Write build.toml for the relu kernel (CUDA, source relu/relu.cu) and check that it parses."
KEY = "sk-fake-recording-key"
BASE_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "TERM": "dumb"}


def claude(bin_dir: Path, home: Path, url: str, *flags: str) -> tuple[list[str], dict[str, str]]:
    """Claude Code in print mode."""
    env = {"ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": KEY, "DISABLE_TELEMETRY": "1",
           "DISABLE_AUTOUPDATER": "1", "DISABLE_ERROR_REPORTING": "1", "IS_SANDBOX": "1",
           "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}
    return [str(bin_dir / "claude"), "-p", TASK, "--output-format", "json", *flags], env


def codex(bin_dir: Path, home: Path, url: str, model: str = "fake-model"
          ) -> tuple[list[str], dict[str, str]]:
    """`codex exec` with a custom Responses provider."""
    (home / ".codex").mkdir(parents=True, exist_ok=True)
    (home / ".codex" / "config.toml").write_text(
        f'model = "{model}"\nmodel_provider = "fake"\n[model_providers.fake]\nname = "fake"\n'
        f'base_url = "{url}/v1"\nenv_key = "FAKE_KEY"\nwire_api = "responses"\n')
    return [str(bin_dir / "codex"), "exec", "--skip-git-repo-check",
            "--dangerously-bypass-approvals-and-sandbox", TASK], \
        {"CODEX_HOME": str(home / ".codex"), "FAKE_KEY": KEY}


def opencode(bin_dir: Path, home: Path, url: str) -> tuple[list[str], dict[str, str]]:
    """`opencode run` with an Anthropic-wire provider pointed at the fake."""
    config = {"$schema": "https://opencode.ai/config.json",
              "provider": {"fake": {"npm": "@ai-sdk/anthropic", "name": "fake",
                                    "options": {"baseURL": f"{url}/v1", "apiKey": KEY},
                                    "models": {"fake-model": {"name": "fake-model"}}}},
              "model": "fake/fake-model", "small_model": "fake/fake-model",
              "permission": {"edit": "allow", "bash": "allow"}}
    env = {f"XDG_{k}_HOME": str(home / v) for k, v in
           (("CONFIG", ".config"), ("DATA", ".local/share"), ("CACHE", ".cache"),
            ("STATE", ".local/state"))}
    env.update({"OPENCODE_DISABLE_AUTOUPDATE": "1", "OPENCODE_DISABLE_MODELS_FETCH": "1",
                "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1", "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
                "OPENCODE_DISABLE_SHARE": "1", "OPENCODE_CONFIG_CONTENT": json.dumps(config)})
    return [str(bin_dir / "opencode"), "run", TASK], env


def gemini(bin_dir: Path, home: Path, url: str) -> tuple[list[str], dict[str, str]]:
    """Gemini CLI in print mode with every tool allowed."""
    (home / ".gemini").mkdir(parents=True, exist_ok=True)
    (home / ".gemini" / "settings.json").write_text(json.dumps({
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "privacy": {"usageStatisticsEnabled": False},
        "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
        "telemetry": {"enabled": False}}))
    return [str(bin_dir / "gemini"), "-p", TASK, "--output-format", "json", "--yolo"], \
        {"GEMINI_API_KEY": KEY, "GOOGLE_GEMINI_BASE_URL": url, "GEMINI_CLI_TRUST_WORKSPACE": "true"}


# name -> (how to run it, which files under HOME are its session)
RECORDINGS: dict[str, tuple[Callable[..., tuple[list[str], dict[str, str]]], str]] = {
    "claude-code": (lambda b, h, u: claude(b, h, u, "--dangerously-skip-permissions"),
                    ".claude/projects/*/*.jsonl"),
    "claude-code-denied": (lambda b, h, u: claude(b, h, u, "--permission-mode", "acceptEdits"),
                           ".claude/projects/*/*.jsonl"),
    "codex": (codex, ".codex/sessions/*/*/*/rollout-*.jsonl"),
    "codex-apply-patch": (lambda b, h, u: codex(b, h, u, model="gpt-5.5"),
                          ".codex/sessions/*/*/*/rollout-*.jsonl"),
    "opencode": (opencode, "opencode-export.json"),
    "gemini-cli": (gemini, ".gemini/tmp/**/chats/*"),
}


def record(name: str, bin_dir: Path, keep: bool = False) -> list[Path]:
    """Run one CLI through the script; returns the scrubbed session files written (`keep`
    copies its temporary HOME to /tmp/hubskills-rec-NAME for a look)."""
    make, pattern = RECORDINGS[name]
    with tempfile.TemporaryDirectory(prefix="hubskills-rec-") as tmp:
        home = Path(tmp) / "dev"
        project = home / "relu-kernel"
        project.mkdir(parents=True)
        with ScriptedAgentServer(root=str(project)) as server:
            argv, env = make(bin_dir, home, server.url)
            env = {**BASE_ENV, "HOME": str(home), **env}
            done = subprocess.run(argv, cwd=project, env=env, stdin=subprocess.DEVNULL,
                                  capture_output=True, text=True, timeout=300)
        if name == "opencode":
            _export_opencode(argv[0], project, env, home / "opencode-export.json")
        print(f"{name}: exit {done.returncode}; {len(server.requests)} requests", file=sys.stderr)
        if done.returncode:
            print(done.stdout[-2000:], done.stderr[-2000:], file=sys.stderr)
        if keep:
            shutil.copytree(home, Path("/tmp") / f"hubskills-rec-{name}", dirs_exist_ok=True,
                            ignore_dangling_symlinks=True, symlinks=True)
        sessions = [p for p in sorted(home.glob(pattern)) if p.is_file()]
        written = []
        for source in sessions:
            text = source.read_text(encoding="utf-8").replace(str(home), "/home/dev")
            text = text.replace(tmp.lstrip("/"), "home").replace(KEY, "[key]")
            target = HERE / f"{name}{'' if len(sessions) == 1 else '-' + source.stem}" \
                f"{source.suffix}"
            target.write_text(text, encoding="utf-8")
            written.append(target)
        print(f"{name}: {', '.join(p.name for p in written) or 'no session file'}",
              file=sys.stderr)
        return written


def _export_opencode(binary: str, project: Path, env: dict[str, str], target: Path) -> None:
    """OpenCode keeps sessions in SQLite; `opencode export ID` is the file a user hands over."""
    db = sqlite3.connect(Path(env["XDG_DATA_HOME"]) / "opencode" / "opencode.db")
    [(session,)] = db.execute("SELECT id FROM session").fetchall()
    db.close()
    done = subprocess.run([binary, "export", session], cwd=project, env=env, text=True,
                          stdin=subprocess.DEVNULL, capture_output=True, timeout=120, check=True)
    target.write_text(done.stdout, encoding="utf-8")


def main() -> None:
    """`record.py BIN_PREFIX [NAME ...]`."""
    prefix, names = Path(sys.argv[1]), sys.argv[2:] or list(RECORDINGS)
    HERE.mkdir(exist_ok=True)
    for name in names:
        record(name, prefix / "node_modules" / ".bin")


if __name__ == "__main__":
    main()
