"""The coding agents hubskills knows: where each reads skills and how to detect it.

Each entry names the documentation its folders come from. An agent that reads `.agents/skills`
itself gets no link; every other one gets a link (or a copy) in its own folder.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

SKILLS_DIR = ".agents/skills"


@dataclass(frozen=True)
class Agent:
    """One coding agent: the folders it reads skills from and how to detect it.

    Attributes:
        name: the `--agent` name.
        title: the product name, for output.
        project: folder, relative to the project root, we place the skill in.
        user: folder, relative to HOME, we place the skill in with `--global`.
        markers: paths whose presence in the project (or HOME) means the agent is in use.
        binaries: commands whose presence on PATH means the agent is installed (`--global`
            serves it even before it has made its folder in HOME).
        config_env: a variable that moves the agent's user folder (its value + `/skills`).
        own: the agent's own project folder when it reads `.agents/skills` too (where its
            documentation, and skills written for it, may point instead).
    """

    name: str
    title: str
    project: str
    user: str
    markers: tuple[str, ...]
    binaries: tuple[str, ...] = ()
    config_env: str | None = None
    own: str = ""

    def folder(self, root: Path, *, global_: bool) -> Path:
        """The folder this agent reads under `root` (the project, or HOME with `--global`)."""
        moved = os.environ.get(self.config_env, "") if global_ and self.config_env else ""
        if moved:  # e.g. CLAUDE_CONFIG_DIR=~/.claude-work: skills live in ~/.claude-work/skills
            return Path(moved).expanduser() / "skills"
        return root / (self.user if global_ else self.project)

    def is_native(self, *, global_: bool) -> bool:
        """Whether the agent reads `.agents/skills` itself (then no link is needed)."""
        return (self.user if global_ else self.project) == SKILLS_DIR


# The folders each agent documents (from each agent's docs, named above its entry; the
# agentskills.io client list). An agent that reads `.agents/skills` itself gets no link.
AGENTS: dict[str, Agent] = {a.name: a for a in (
    # agentskills.io specification: the shared folder every reader below may use
    Agent("agents", "Agent Skills folder", SKILLS_DIR, SKILLS_DIR, (".agents",)),
    # code.claude.com/docs/en/skills: .claude/skills, ~/.claude/skills (CLAUDE_CONFIG_DIR)
    Agent("claude", "Claude Code", ".claude/skills", ".claude/skills", (".claude", "CLAUDE.md"),
          ("claude",), "CLAUDE_CONFIG_DIR"),
    # developers.openai.com/codex/skills: .agents/skills up to the repo root, ~/.agents/skills
    Agent("codex", "Codex", SKILLS_DIR, SKILLS_DIR, (".codex", "AGENTS.md"), ("codex",),
          own=".codex/skills"),
    # cursor.com/docs/context/skills: .agents/skills, .cursor/skills (and ~/ of each)
    Agent("cursor", "Cursor", SKILLS_DIR, SKILLS_DIR, (".cursor",), ("cursor-agent",),
          own=".cursor/skills"),
    # opencode.ai/docs/skills: .opencode/skills, .claude/skills, .agents/skills
    Agent("opencode", "OpenCode", SKILLS_DIR, SKILLS_DIR, (".opencode", "opencode.json"),
          ("opencode",), own=".opencode/skills"),
    # geminicli.com/docs/cli/skills: .gemini/skills, .agents/skills (and ~/ of each)
    Agent("gemini", "Gemini CLI", SKILLS_DIR, SKILLS_DIR, (".gemini", "GEMINI.md"),
          ("gemini",), own=".gemini/skills"),
    # code.visualstudio.com/docs/copilot/customization/agent-skills: .github/skills,
    # .claude/skills, .agents/skills; ~/.copilot/skills, ~/.agents/skills
    Agent("copilot", "GitHub Copilot", SKILLS_DIR, SKILLS_DIR,
          (".github/skills", ".github/copilot-instructions.md", ".copilot"), ("copilot",),
          own=".github/skills"),
    # block.github.io/goose/docs/guides/context-engineering/using-skills
    Agent("goose", "Goose", SKILLS_DIR, ".config/goose/skills", (".goose", ".config/goose"),
          ("goose",), own=".goose/skills"),
    # ampcode.com/manual#agent-skills: .agents/skills, ~/.config/agents/skills
    Agent("amp", "Amp", SKILLS_DIR, ".config/agents/skills", (".amp", ".config/amp"),
          ("amp",)),
    # docs.windsurf.com/windsurf/cascade/skills: .windsurf/skills, ~/.codeium/windsurf/skills
    Agent("windsurf", "Windsurf", ".windsurf/skills", ".codeium/windsurf/skills",
          (".windsurf", ".codeium/windsurf")),
    # docs.cline.bot/features/skills: .cline/skills, ~/.cline/skills
    Agent("cline", "Cline", ".cline/skills", ".cline/skills", (".cline", ".clinerules")),
    # docs.roocode.com/features/skills: .roo/skills, ~/.roo/skills
    Agent("roo", "Roo Code", ".roo/skills", ".roo/skills", (".roo",)),
    # kiro.dev/docs/skills: .kiro/skills, ~/.kiro/skills
    Agent("kiro", "Kiro", ".kiro/skills", ".kiro/skills", (".kiro",), ("kiro-cli",)),
    # docs.factory.ai/cli/configuration/skills: .factory/skills, ~/.factory/skills
    Agent("droid", "Factory Droid", ".factory/skills", ".factory/skills", (".factory",),
          ("droid",)),
    # docs.firebender.com/api-reference/skills: .firebender/skills, ~/.firebender/skills
    Agent("firebender", "Firebender", ".firebender/skills", ".firebender/skills",
          (".firebender",)),
    # docs.letta.com/configuration/skills: the project's .agents/skills; letta-code's
    # src/agent/skills.ts: ~/.letta/skills for the user's own
    Agent("letta", "Letta Code", SKILLS_DIR, ".letta/skills", (".letta",), ("letta",)),
    # pi's docs/skills.md (earendil-works/pi): .agents/skills and .pi/skills;
    # ~/.agents/skills and ~/.pi/agent/skills
    Agent("pi", "Pi", SKILLS_DIR, SKILLS_DIR, (".pi",), ("pi",)),
    # coder/mux docs/agents/agent-skills.mdx: .mux/skills, .agents/skills; ~/.mux/skills,
    # ~/.agents/skills
    Agent("mux", "Mux", SKILLS_DIR, SKILLS_DIR, (".mux",), ("mux",)),
    # autohandai/code-cli docs/agent-skills.md: .autohand/skills, .claude/skills;
    # ~/.autohand/skills (AUTOHAND_HOME), ~/.claude/skills, ~/.codex/skills
    Agent("autohand", "Autohand Code CLI", ".autohand/skills", ".autohand/skills",
          (".autohand",), ("autohand",), "AUTOHAND_HOME"),
    # docs.mistral.ai/vibe/code/cli/skills: .vibe/skills or .agents/skills (trusted folders);
    # ~/.vibe/skills (VIBE_HOME)
    Agent("vibe", "Mistral Vibe", SKILLS_DIR, ".vibe/skills", (".vibe",), ("vibe",),
          "VIBE_HOME"),
    # docs.openhands.dev/overview/skills: .agents/skills; the user folder from the table of
    # the `npx skills` installer (vercel-labs/skills src/agents.ts): ~/.openhands/skills
    Agent("openhands", "OpenHands", SKILLS_DIR, ".openhands/skills", (".openhands",),
          ("openhands",)),
    # jetbrains.com/help/air/skills.html: .junie/skills (and ~/.junie/skills)
    Agent("junie", "Junie", ".junie/skills", ".junie/skills", (".junie",), ("junie",)),
    # The rest, from the `npx skills` installer's table (vercel-labs/skills src/agents.ts),
    # where the vendor's own page was not found: TRAE .trae/skills, ~/.trae/skills; Snowflake
    # Cortex Code .cortex/skills, ~/.snowflake/cortex/skills; Kilo Code .agents/skills,
    # ~/.kilo/skills; Qwen Code .qwen/skills; Augment .augment/skills; Continue
    # .continue/skills; Crush .crush/skills, ~/.config/crush/skills; Warp and Zed
    # .agents/skills, ~/.agents/skills
    Agent("trae", "TRAE", ".trae/skills", ".trae/skills", (".trae",)),
    Agent("cortex", "Cortex Code", ".cortex/skills", ".snowflake/cortex/skills",
          (".cortex", ".snowflake/cortex"), ("cortex",)),
    Agent("kilo", "Kilo Code", SKILLS_DIR, ".kilo/skills", (".kilo", ".kilocode")),
    Agent("qwen", "Qwen Code", ".qwen/skills", ".qwen/skills", (".qwen",), ("qwen",)),
    Agent("augment", "Augment", ".augment/skills", ".augment/skills", (".augment",),
          ("auggie",)),
    Agent("continue", "Continue", ".continue/skills", ".continue/skills", (".continue",),
          ("cn",)),
    Agent("crush", "Crush", ".crush/skills", ".config/crush/skills",
          (".crush", ".config/crush"), ("crush",)),
    Agent("warp", "Warp", SKILLS_DIR, SKILLS_DIR, (".warp",)),
    Agent("zed", "Zed", SKILLS_DIR, SKILLS_DIR, (".zed", ".config/zed"), ("zed",)),
)}
ALIASES = {"claude-code": "claude", "github-copilot": "copilot", "vscode": "copilot",
           "gemini-cli": "gemini", "roo-code": "roo", "agent-skills": "agents",
           "factory": "droid", "factory-droid": "droid", "autohand-code": "autohand",
           "mistral-vibe": "vibe", "kilo-code": "kilo", "qwen-code": "qwen",
           "cortex-code": "cortex", "snowflake-cortex": "cortex"}
