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
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml

from registry.errors import InvalidSkill

SKILL_FILE = "SKILL.md"
NAME_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
SPEC_KEYS = ("name", "description", "license", "compatibility", "metadata", "allowed-tools")
AGENT_KEYS = (
    "argument-hint", "user-invocable", "disable-model-invocation", "model", "context", "agent",
    "hooks",
)
MAX_SKILL_MD_BYTES = 16 * 1024 * 1024
MAX_FRONTMATTER_BYTES = 64 * 1024
MAX_YAML_NODES = 5_000
MAX_YAML_DEPTH = 32
MARKER_FILES = frozenset({".hubskills.json", ".hf-skill-manifest.json"})
NOISE_NAMES = frozenset({".git", ".DS_Store", "Thumbs.db", "__pycache__", ".idea", ".vscode"})
NOISE_SUFFIXES = (".swp", ".swo", ".pyc", "~")
# Bookkeeping written *after* an evaluation (the run ids): hashing it would make a skill's hash
# differ from the hash its own runs recorded.
HASH_EXCLUDED = frozenset({"evals/runs.json"})
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
        """Estimated tokens (`estimate_tokens`) of the always-loaded part and of the body."""
        return {
            "metadata": estimate_tokens(f"{self.name}\n{self.description}"),
            "body": estimate_tokens(self.body),
        }


class SkillFormatError(InvalidSkill):
    """A SKILL.md that cannot be loaded, with the finding `code`, `file` and `line` it maps to."""

    def __init__(
        self, code: str, detail: str, *, line: int | None = None, where: str = SKILL_FILE,
        hint: str | None = None,
    ) -> None:
        super().__init__(f"{where}:{line}: {detail}" if line else f"{where}: {detail}", hint=hint)
        self.code, self.detail, self.line, self.file = code, detail, line, SKILL_FILE


class _Refused(yaml.MarkedYAMLError):
    """A YAML construct the guarded loader refuses; `code` names the finding."""

    def __init__(self, code: str, problem: str, mark: Any) -> None:
        super().__init__(problem=problem, problem_mark=mark)
        self.code = code


class _GuardedLoader(yaml.SafeLoader):
    """A safe loader that refuses aliases, duplicate keys, and huge or deep documents."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._nodes = 0
        self._depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:  # noqa: D102
        mark = self.peek_event().start_mark
        if self.check_event(yaml.AliasEvent):
            raise _Refused("yaml-alias", "YAML aliases (*name) are not allowed in SKILL.md", mark)
        self._nodes += 1
        if self._nodes > MAX_YAML_NODES:
            raise _Refused("yaml-too-complex", f"more than {MAX_YAML_NODES} YAML nodes", mark)
        if self._depth >= MAX_YAML_DEPTH:
            raise _Refused("yaml-too-complex", f"nested deeper than {MAX_YAML_DEPTH} levels", mark)
        self._depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:  # noqa: D102
        seen: set[tuple[str, str]] = set()
        for key, _ in node.value:
            if isinstance(key, yaml.ScalarNode):
                if (key.tag, key.value) in seen:
                    raise _Refused("duplicate-key", f"duplicate key '{key.value}'",
                                   key.start_mark)
                seen.add((key.tag, key.value))
        return super().construct_mapping(node, deep)


class _QuotingDumper(yaml.SafeDumper):
    """Emits plain scalars only where that is unambiguous; everything else double-quoted."""


# Plain only when every YAML 1.1 and 1.2 parser reads a string: starts with a letter, and is
# not a word some parsers read as a bool or null (`y`, `on`, `NO`, `null`, ...).
_PLAIN_SAFE = re.compile(r"^[A-Za-z][A-Za-z0-9._/@+-]*$")
_PLAIN_WORDS = frozenset(
    {"y", "n", "yes", "no", "on", "off", "true", "false", "null", "nan", "inf", "infinity"}
)


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    plain_is_str = dumper.resolve(yaml.ScalarNode, value, (True, False)) == _STR_TAG
    plain = bool(_PLAIN_SAFE.match(value)) and value.lower() not in _PLAIN_WORDS
    style = None if plain and plain_is_str else '"'
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
    """A token *estimate*, not a count: about four UTF-8 bytes per token.

    Four characters per token holds for English text and code; counting bytes keeps the
    estimate plausible for scripts that take a token or more per character (CJK, emoji).
    """
    return math.ceil(len(text.encode("utf-8", "surrogatepass")) / 4)


def split_frontmatter(text: str) -> tuple[str, str, int]:
    """Split SKILL.md text into (frontmatter YAML, body, line where the body starts).

    Raises:
        SkillFormatError: no frontmatter, or it is never closed.
    """
    text = text.removeprefix("\ufeff")
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        raise SkillFormatError(
            "no-frontmatter", "no YAML frontmatter (the file must start with a '---' line)",
            line=1, hint="hubskills new NAME  # scaffolds a valid SKILL.md",
        )
    for index, line in enumerate(lines[1:], start=1):
        if line.strip() == "---":
            return "".join(lines[1:index]), "".join(lines[index + 1 :]), index + 2
    raise SkillFormatError(
        "frontmatter-unclosed", "the frontmatter is never closed by a '---' line", line=1,
        hint="add a line '---' after the YAML frontmatter",
    )


def parse_frontmatter(yaml_text: str) -> tuple[dict[str, Any], dict[str, int]]:
    """Parse frontmatter YAML safely; return the mapping and the line of each key.

    Lines are those of SKILL.md (the frontmatter starts on line 2). Top-level keys are
    listed by name, the keys of a nested mapping as `parent.key` (e.g. `metadata.version`).

    Raises:
        SkillFormatError: too large, invalid YAML, aliases, duplicate keys, or not a mapping.
    """
    if len(yaml_text.encode("utf-8", "surrogatepass")) > MAX_FRONTMATTER_BYTES:
        raise SkillFormatError(
            "frontmatter-too-large",
            f"frontmatter is larger than {MAX_FRONTMATTER_BYTES // 1024} KiB", line=2,
            hint="keep the frontmatter to name, description and a few short keys",
        )
    try:
        loader = _GuardedLoader(yaml_text)  # the reader already refuses control characters
        try:
            node = loader.get_single_node()
            data = loader.construct_document(node) if node is not None else None
        finally:
            loader.dispose()
    except yaml.YAMLError as exc:
        code = getattr(exc, "code", "invalid-yaml")
        raise SkillFormatError(
            code, "invalid YAML in the frontmatter: "
            f"{getattr(exc, 'problem', None) or getattr(exc, 'reason', None) or exc}",
            line=_error_line(exc, yaml_text), hint=_YAML_HINTS.get(code, _YAML_HINTS[""]),
        ) from None
    if not isinstance(data, dict):
        raise SkillFormatError(
            "frontmatter-not-mapping", "the frontmatter must be a YAML mapping of keys to values",
            line=2, hint="write it as 'name: my-skill' and 'description: \"...\"' lines",
        )
    return data, _key_lines(node)


_YAML_HINTS = {
    "": 'quote values that contain ": " (e.g. description: "Use when: ...")',
    "yaml-alias": "write each value out: anchors (&name) and aliases (*name) are refused",
    "duplicate-key": "keep one line per key",
    "yaml-too-complex": "keep the frontmatter to a few short keys",
}


def _error_line(exc: yaml.YAMLError, yaml_text: str) -> int:
    mark = getattr(exc, "problem_mark", None)
    if mark is not None:
        return int(mark.line) + 2
    if isinstance(exc, yaml.reader.ReaderError):
        return yaml_text[: exc.position].count("\n") + 2
    return 2


def _key_lines(node: yaml.MappingNode) -> dict[str, int]:
    lines: dict[str, int] = {}
    for key, value in node.value:
        if not isinstance(key, yaml.ScalarNode):
            continue
        lines[str(key.value)] = key.start_mark.line + 2
        if isinstance(value, yaml.MappingNode):
            for inner, _ in value.value:
                if isinstance(inner, yaml.ScalarNode):
                    lines[f"{key.value}.{inner.value}"] = inner.start_mark.line + 2
    return lines


def load_skill(path: str | os.PathLike[str]) -> Skill:
    """Load a skill folder (or its SKILL.md).

    Raises:
        SkillFormatError: (an `InvalidSkill`) the folder has no readable UTF-8 SKILL.md with a
            YAML mapping as frontmatter.
    """
    folder = Path(path)
    if folder.name == SKILL_FILE and folder.is_file():
        folder = folder.parent
    skill_md = folder / SKILL_FILE
    if not skill_md.is_file():
        where = "no such folder" if not folder.exists() else f"the folder has no {SKILL_FILE}"
        raise SkillFormatError("missing-skill-md", where, where=str(folder),
                               hint=f"hubskills new {folder.name or 'my-skill'}")
    try:
        yaml_text, body, body_line = split_frontmatter(_read_text(skill_md))
        frontmatter, key_lines = parse_frontmatter(yaml_text)
    except SkillFormatError as exc:
        # Name the file in the message (for the CLI); the finding keeps `SKILL.md` + line.
        raise SkillFormatError(exc.code, exc.detail, line=exc.line, where=str(skill_md),
                               hint=exc.hint) from None
    return Skill(folder, frontmatter, body, key_lines, body_line)


def _read_text(skill_md: Path) -> str:
    try:
        # At most one byte past the bound, whatever the size says: a SKILL.md linked to a file
        # that reports 0 bytes and never ends (/proc/self/pagemap) would fill the memory.
        with skill_md.open("rb") as handle:
            raw = handle.read(MAX_SKILL_MD_BYTES + 1)
    except OSError as exc:
        raise SkillFormatError("unreadable", f"cannot read: {exc.strerror or exc}") from None
    if len(raw) > MAX_SKILL_MD_BYTES:
        raise SkillFormatError(
            "skill-md-too-large", f"larger than {MAX_SKILL_MD_BYTES // 2**20} MiB",
            hint="move detail to references/ and keep SKILL.md short",
        )
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SkillFormatError(
            "not-utf8", f"not valid UTF-8 (byte {exc.start})",
            line=raw[: exc.start].count(b"\n") + 1, hint="save SKILL.md as UTF-8",
        ) from None


def _is_noise(name: str) -> bool:
    return name in MARKER_FILES or name in NOISE_NAMES or name.endswith(NOISE_SUFFIXES)


def hash_ignores(rel: str) -> bool:
    """Whether `content_hash` leaves the file at `rel` (a relative POSIX path) out."""
    return rel in HASH_EXCLUDED or any(_is_noise(part) for part in rel.split("/"))


def _walk(root: Path) -> list[tuple[str, Path]]:
    """(relative POSIX path, path) of every regular file and symlink, sorted.

    Markers and editor noise are skipped, and so are FIFOs, sockets and devices (reading a
    FIFO would block). Symlinks, to files or folders, are listed and never followed.
    """
    found: list[tuple[str, Path]] = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        here = Path(dirpath)
        links = [d for d in dirnames if not _is_noise(d) and (here / d).is_symlink()]
        dirnames[:] = sorted(d for d in dirnames if d not in NOISE_NAMES and d not in links)
        for name in [*filenames, *links]:
            full = here / name
            if _is_noise(name):
                continue
            mode = full.lstat().st_mode
            if stat.S_ISREG(mode) or stat.S_ISLNK(mode):
                found.append((full.relative_to(root).as_posix(), full))
    return sorted(found)


def content_hash(root: str | os.PathLike[str]) -> str:
    """sha256 over sorted relative paths and file bytes; markers, `.git` and noise ignored.

    Symlinks are hashed by their target string, never followed, and a symlink never hashes
    like a file holding the same text.
    """
    digest = hashlib.sha256()
    for rel, full in _walk(Path(root)):
        if rel in HASH_EXCLUDED:
            continue
        if full.is_symlink():
            kind, data = b"L", os.fsencode(os.readlink(full))
        else:
            kind, data = b"F", full.read_bytes()
        digest.update(kind + os.fsencode(rel) + b"\0")
        digest.update(hashlib.sha256(data).digest())
    return "sha256:" + digest.hexdigest()
