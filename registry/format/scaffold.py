"""`hubskills new`: a valid skill folder with one example test case."""

from __future__ import annotations

from pathlib import Path

from registry._io import atomic_write_text
from registry.errors import InvalidSkill
from registry.format.skill import NAME_RE, dump_frontmatter
from registry.format.suite import Suite, suite_path
from registry.format.suite_writer import save_suite

_BODY = """
# {title}

Follow these steps when the task matches the description above.

1. State the one fact or convention the agent usually gets wrong.
2. Show a minimal, correct example.
3. List the pitfalls to avoid.

Keep this body short (a few hundred tokens); put detail in `references/`.
"""


def scaffold_skill(parent: Path, name: str, description: str | None = None) -> Path:
    """Create `parent/name` with SKILL.md and evals/evals.json; never overwrite.

    Raises:
        InvalidSkill: the name breaks the format's rule, or the folder already exists.
    """
    if not NAME_RE.match(name) or len(name) > 64:
        raise InvalidSkill(
            f"'{name}' is not a valid skill name (lowercase letters, digits, single hyphens)",
            hint="hubskills new my-skill",
        )
    folder = parent / name
    if folder.exists() or folder.is_symlink():
        raise InvalidSkill(f"{folder} already exists", hint=f"hubskills validate {folder}")
    try:
        folder.mkdir(parents=True)
    except OSError as exc:
        raise InvalidSkill(
            f"cannot create {folder}: {exc.strerror or exc}",
            hint=f"hubskills new {name} --dir DIR  # a folder you can write to",
        ) from None
    frontmatter = {
        "name": name,
        "description": description
        or f"Describe what {name} does. Use when the user asks about {name.replace('-', ' ')}.",
        "license": "Apache-2.0",
        "metadata": {"version": "0.1.0"},
    }
    title = name.replace("-", " ").capitalize()
    atomic_write_text(folder / "SKILL.md",
                      f"---\n{dump_frontmatter(frontmatter)}---\n{_BODY.format(title=title)}")
    example = Suite.model_validate({
        "skill_name": name,
        "cases": [{
            "id": "example",
            "prompt": f"Explain how to use {name.replace('-', ' ')}. Answer briefly.",
            "checks": [{"type": "contains", "value": ["replace me"]}],
        }],
    })
    save_suite(example, suite_path(folder))
    return folder
