"""`hubskills new`: a valid skill folder with one example test case."""

from __future__ import annotations

import re
from pathlib import Path

from registry._io import atomic_write_text
from registry.errors import InvalidSkill
from registry.format.skill import NAME_RE, dump_frontmatter
from registry.format.suite import Suite, suite_path
from registry.format.suite_writer import save_suite

# The scaffold's placeholders: `hubskills validate` warns while any of them is left in place.
PLACEHOLDER_VALUE = "replace me"
PLACEHOLDER_STEP = "State the one fact or convention the agent usually gets wrong."


def placeholder_description(name: str) -> str:
    """The description `hubskills new` writes when none is given."""
    return f"Describe what {name} does. Use when the user asks about {name.replace('-', ' ')}."


_BODY = """
# {title}

Follow these steps when the task matches the description above.

1. {step}
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
        fixed = "-".join(re.findall(r"[a-z0-9]+", name.lower()))[:64].strip("-")
        raise InvalidSkill(
            f"'{name}' is not a valid skill name (lowercase letters, digits, single hyphens)",
            hint=f"hubskills new {fixed if fixed and NAME_RE.match(fixed) else 'my-skill'}",
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
        "description": description or placeholder_description(name),
        "license": "Apache-2.0",
        "metadata": {"version": "0.1.0"},
    }
    title = name.replace("-", " ").capitalize()
    body = _BODY.format(title=title, step=PLACEHOLDER_STEP)
    atomic_write_text(folder / "SKILL.md", f"---\n{dump_frontmatter(frontmatter)}---\n{body}")
    example = Suite.model_validate({
        "skill_name": name,
        "cases": [{
            "id": "example",
            "prompt": f"Explain how to use {name.replace('-', ' ')}. Answer briefly.",
            "checks": [{"type": "contains", "value": [PLACEHOLDER_VALUE]}],
        }],
    })
    save_suite(example, suite_path(folder))
    return folder
