"""A skill folder as a value: parse, validate and render `SKILL.md`, and hash the folder.

The rules follow the Agent Skills specification (agentskills.io) and its reference validator:
allowed top-level keys, the name and description limits, string-to-string metadata. Keys that
some agents add (`argument-hint`, `user-invocable`, ...) are accepted with a warning, and every
key survives a rewrite in its original order.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml

from .errors import InvalidSkill

SKILL_FILE = "SKILL.md"
NAME_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
SPEC_KEYS = ("name", "description", "license", "compatibility", "metadata", "allowed-tools")
AGENT_KEYS = (
    "argument-hint", "user-invocable", "disable-model-invocation", "model", "context", "agent",
    "hooks", "version",
)
MAX_FRONTMATTER_BYTES = 64 * 1024
MAX_YAML_NODES = 5_000
MARKER_FILES = frozenset({".hubskills.json", ".hf-skill-manifest.json"})
NOISE_NAMES = frozenset({".git", ".DS_Store", "Thumbs.db", "__pycache__", ".idea", ".vscode"})
NOISE_SUFFIXES = (".swp", ".swo", ".pyc", "~")
_LINK_RE = re.compile(r"\]\(([^)\s#]+)(?:#[^)]*)?\)")

Severity = Literal["error", "warning"]


@dataclass(frozen=True)
class Problem:
    """One validation finding, located at a file and line when known."""

    code: str
    severity: Severity
    message: str
    file: str = SKILL_FILE
    line: int | None = None

    def location(self) -> str:
        """`file:line` (or just the file) for human output."""
        return f"{self.file}:{self.line}" if self.line else self.file


@dataclass
class Skill:
    """A parsed skill folder. `frontmatter` keeps every key in its original order."""

    path: Path
    frontmatter: dict[str, Any]
    body: str
    key_lines: dict[str, int] = field(default_factory=dict)
    body_line: int = 1

    @property
    def name(self) -> str:
        """The `name` key (empty when absent)."""
        return str(self.frontmatter.get("name") or "")

    @property
    def description(self) -> str:
        """The `description` key (empty when absent)."""
        return str(self.frontmatter.get("description") or "")

    @property
    def version(self) -> str | None:
        """`metadata.version`, the place the specification keeps a version."""
        metadata = self.frontmatter.get("metadata")
        return str(metadata["version"]) if isinstance(metadata, dict) and "version" in metadata \
            else None

    def render(self) -> str:
        """The SKILL.md text: quoted YAML frontmatter, then the body unchanged."""
        return f"---\n{dump_frontmatter(self.frontmatter)}---\n{self.body}"

    def files(self) -> list[str]:
        """Relative POSIX paths of the skill's files, sorted, without markers and noise."""
        return [rel for rel, _ in _walk(self.path)]

    def content_hash(self) -> str:
        """See `content_hash`."""
        return content_hash(self.path)

    def token_estimate(self) -> dict[str, int]:
        """Estimated tokens (about 4 characters each) of the always-loaded part and the body."""
        return {
            "metadata": estimate_tokens(f"{self.name}\n{self.description}"),
            "body": estimate_tokens(self.body),
        }


class _GuardedLoader(yaml.SafeLoader):
    """A safe loader that refuses aliases and huge documents: no billion-laughs."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._nodes = 0

    def compose_node(self, parent: Any, index: Any) -> Any:  # noqa: D102
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise yaml.MarkedYAMLError(
                problem="YAML aliases are not allowed in SKILL.md", problem_mark=event.start_mark
            )
        self._nodes += 1
        if self._nodes > MAX_YAML_NODES:
            raise yaml.MarkedYAMLError(problem="frontmatter has too many YAML nodes")
        return super().compose_node(parent, index)


class _QuotingDumper(yaml.SafeDumper):
    """Emits plain scalars only where that is unambiguous; everything else double-quoted."""


_PLAIN_SAFE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/@+-]*$")


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    plain_is_str = dumper.resolve(yaml.ScalarNode, value, (True, False)) == _STR_TAG
    style = None if _PLAIN_SAFE.match(value) and plain_is_str else '"'
    return dumper.represent_scalar(_STR_TAG, value, style=style)


_STR_TAG = "tag:yaml.org,2002:str"
_QuotingDumper.add_representer(str, _represent_str)


def dump_frontmatter(data: dict[str, Any]) -> str:
    """YAML for a frontmatter mapping: key order kept, ambiguous strings double-quoted."""
    return yaml.dump(
        data, Dumper=_QuotingDumper, sort_keys=False, allow_unicode=True,
        default_flow_style=False, width=math.inf,
    )


def estimate_tokens(text: str) -> int:
    """A token *estimate*: about four characters per token for English text and code."""
    return math.ceil(len(text) / 4)


def split_frontmatter(text: str) -> tuple[str, str, int]:
    """Split SKILL.md text into (frontmatter YAML, body, line where the body starts).

    Raises:
        InvalidSkill: no frontmatter, or it is never closed.
    """
    text = text.removeprefix("\ufeff")
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        raise InvalidSkill(
            f"{SKILL_FILE}:1: no YAML frontmatter (the file must start with a '---' line)",
            hint="hubskills new NAME  # scaffolds a valid SKILL.md",
        )
    for index, line in enumerate(lines[1:], start=1):
        if line.strip() == "---":
            return "".join(lines[1:index]), "".join(lines[index + 1 :]), index + 2
    raise InvalidSkill(
        f"{SKILL_FILE}:1: the frontmatter is never closed by a '---' line",
        hint="add a line '---' after the YAML frontmatter",
    )


def parse_frontmatter(yaml_text: str) -> tuple[dict[str, Any], dict[str, int]]:
    """Parse frontmatter YAML safely; return the mapping and each top-level key's line.

    Raises:
        InvalidSkill: too large, invalid YAML, aliases, or not a mapping.
    """
    if len(yaml_text.encode()) > MAX_FRONTMATTER_BYTES:
        raise InvalidSkill(
            f"{SKILL_FILE}:2: frontmatter is larger than {MAX_FRONTMATTER_BYTES // 1024} KiB",
            hint="keep the frontmatter to name, description and a few short keys",
        )
    loader = _GuardedLoader(yaml_text)
    try:
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 2 if mark is not None else 2
        problem = getattr(exc, "problem", None) or str(exc)
        raise InvalidSkill(
            f"{SKILL_FILE}:{line}: invalid YAML in the frontmatter: {problem}",
            hint='quote values that contain ": " (e.g. description: "Use when: ...")',
        ) from None
    finally:
        loader.dispose()
    if not isinstance(data, dict):
        raise InvalidSkill(
            f"{SKILL_FILE}:2: the frontmatter must be a YAML mapping of keys to values",
            hint="write it as 'name: my-skill' and 'description: \"...\"' lines",
        )
    lines = {
        str(key.value): key.start_mark.line + 2
        for key, _ in node.value
        if isinstance(key, yaml.ScalarNode)
    }
    return data, lines


def load_skill(path: str | os.PathLike[str]) -> Skill:
    """Load a skill folder (or its SKILL.md).

    Raises:
        InvalidSkill: the folder has no readable SKILL.md with a YAML mapping as frontmatter.
    """
    folder = Path(path)
    if folder.name == SKILL_FILE and folder.is_file():
        folder = folder.parent
    skill_md = folder / SKILL_FILE
    if not skill_md.is_file():
        where = "does not exist" if not folder.exists() else f"has no {SKILL_FILE}"
        raise InvalidSkill(
            f"{folder}: {where}", hint=f"hubskills new {folder.name or 'my-skill'}"
        )
    raw = skill_md.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise InvalidSkill(
            f"{SKILL_FILE}:{line}: not valid UTF-8 (byte {exc.start})",
            hint="save SKILL.md as UTF-8",
        ) from None
    yaml_text, body, body_line = split_frontmatter(text)
    frontmatter, key_lines = parse_frontmatter(yaml_text)
    return Skill(folder, frontmatter, body, key_lines, body_line)


def _walk(root: Path) -> list[tuple[str, Path]]:
    """(relative POSIX path, path) of every file, sorted, skipping markers and editor noise."""
    found: list[tuple[str, Path]] = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if d not in NOISE_NAMES)
        for name in filenames:
            if name in MARKER_FILES or name in NOISE_NAMES or name.endswith(NOISE_SUFFIXES):
                continue
            full = Path(dirpath) / name
            found.append((full.relative_to(root).as_posix(), full))
    return sorted(found)


def content_hash(root: str | os.PathLike[str]) -> str:
    """sha256 over sorted relative paths and file bytes; markers, `.git` and noise ignored.

    Symlinks are hashed by their target string, never followed.
    """
    digest = hashlib.sha256()
    for rel, full in _walk(Path(root)):
        data = os.readlink(full).encode() if full.is_symlink() else full.read_bytes()
        digest.update(rel.encode() + b"\0")
        digest.update(hashlib.sha256(data).digest())
    return "sha256:" + digest.hexdigest()
