"""The repository card (`README.md`) of a published skill, and reading it back.

The card's YAML header is what the Hub indexes: `tags: [agent-skill]` (what search filters
on), `license`, `description`, the skill's `metadata`, and a `hubskills` block with the name,
published version, content hash and the skill's own license text. The body shows the pull
command and, between two markers, the latest evaluation summary (rewritten by
`refresh_card` when results are attached later).
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from registry.errors import InvalidSkill
from registry.format.skill import Skill, dump_frontmatter, parse_frontmatter, split_frontmatter
from registry.stores.base import SkillInfo

if TYPE_CHECKING:
    from registry.hub import RepoInfo

SKILL_TAG = "agent-skill"
EVALS_START = "<!-- hubskills:evals:start -->"
EVALS_END = "<!-- hubskills:evals:end -->"
# License ids the Hub accepts in card metadata; anything else is published as `other`.
HUB_LICENSES = frozenset({
    "apache-2.0", "mit", "bsd-2-clause", "bsd-3-clause", "cc0-1.0", "cc-by-4.0",
    "cc-by-sa-4.0", "cc-by-nc-4.0", "gpl-3.0", "lgpl-3.0", "agpl-3.0", "mpl-2.0",
    "unlicense", "openrail", "llama3", "gemma", "other",
})
_EVALS = re.compile(re.escape(EVALS_START) + r".*?" + re.escape(EVALS_END), re.S)


def render_card(skill: Skill, *, repo: str, version: str, content_hash: str,
                summary: list[dict[str, Any]]) -> str:
    """The card text for `skill` published as `repo` at `version`."""
    license_text = str(skill.frontmatter.get("license") or "").strip()
    meta: dict[str, Any] = {"tags": [SKILL_TAG]}
    if license_text:
        meta["license"] = license_text.lower() if license_text.lower() in HUB_LICENSES \
            else "other"
    meta["description"] = skill.description
    metadata = skill.frontmatter.get("metadata")
    if isinstance(metadata, dict) and metadata:
        meta["metadata"] = {str(k): str(v) for k, v in metadata.items()}
    source = git_source(skill)
    meta["hubskills"] = {"name": skill.name, "version": version, "content_hash": content_hash,
                         **({"license": license_text} if license_text else {}),
                         **({"source": source} if source else {})}
    origin = f"Published from `{source['source']}` at commit `{source['sha']}` " \
        f"(<{source['url']}>).\n\n" if source else ""
    body = (f"# {skill.name}\n\n{skill.description}\n\n{origin}"
            "This is an [Agent Skill](https://agentskills.io): `SKILL.md` holds the "
            "instructions; this README is the registry card.\n\n"
            f"## Install\n\n```bash\nhubskills pull {repo}\n"
            f"hubskills pull {repo}@v{version}   # pinned\n```\n\n"
            f"{signature_section(skill)}"
            f"## Evaluation\n\n{evals_section(summary)}\n")
    return f"---\n{dump_frontmatter(meta)}---\n\n{body}"


def signature_section(skill: Skill) -> str:
    """`## Signature` for a skill that ships a `skill.oms.sig`, as checked when published
    (against the chain the signature carries: the card is the publisher's word, and `info`,
    `search --json` and `pull` check again); "" for an unsigned skill."""
    from registry.signing import SIGNATURE_FILE

    if not (skill.path / SIGNATURE_FILE).is_file():
        return ""
    from registry.stores.revision_facts import folder_facts

    status = folder_facts(skill.path, trusted=[]).signature  # what is published: no noise
    return (f"## Signature\n\nThis revision carries `{SIGNATURE_FILE}` (OpenSSF Model "
            f"Signing): {status.label()} when it was published. A signature says who published "
            "these exact files, not that they are safe; `hubskills pull` checks it against "
            "the certificates and keys you trust (`hubskills trust add`).\n\n")


def git_source(skill: Skill) -> dict[str, str] | None:
    """Where a skill fetched from a git source came from (its install marker says so): the
    source, a URL to that commit's folder, the commit sha and the ref asked; else None."""
    try:
        data = json.loads((skill.path / ".hubskills.json").read_text(encoding="utf-8")[:65536])
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("registry") != "git":
        return None
    key, sha = str(data.get("repo")), str(data.get("sha"))
    github = re.fullmatch(r"github:([^/]+)/([^/]+)(?:/(.*))?", key)
    url = (f"https://github.com/{github[1]}/{github[2]}/tree/{sha}/{github[3] or ''}".rstrip("/")
           if github else key)
    return {"source": key, "url": url, "sha": sha, "ref": str(data.get("ref") or "HEAD")}


def evals_section(summary: list[dict[str, Any]]) -> str:
    """The marked evaluation section: the summary table, or how to produce one."""
    from registry.stores.summary import summary_markdown  # loads pandas: only when writing

    table = summary_markdown(summary) or (
        "No evaluation results yet: `hubskills eval SKILL --push` adds them.")
    return f"{EVALS_START}\n{table}\n{EVALS_END}"


def with_evals(card: str, summary: list[dict[str, Any]]) -> str:
    """`card` with its evaluation section replaced (appended when the markers are missing)."""
    section = evals_section(summary)
    if _EVALS.search(card):
        return _EVALS.sub(lambda _: section, card, count=1)
    return card.rstrip("\n") + f"\n\n## Evaluation\n\n{section}\n"


def parse_card(text: str) -> dict[str, Any]:
    """The card's YAML header as a dict ({} when it has none or it is malformed)."""
    try:
        header, _, _ = split_frontmatter(text)
        data, _ = parse_frontmatter(header)
    except InvalidSkill:
        return {}
    return data


def card_fields(meta: dict[str, Any], repo: str) -> dict[str, Any]:
    """`name`, `description`, `version`, `license`, `tags` for a `SkillInfo`, from card data."""
    block = meta.get("hubskills")
    if not isinstance(block, dict):
        block = {}
    tags = meta.get("tags")
    if not isinstance(tags, list):
        tags = []
    version = block.get("version")
    license_value = block.get("license") or meta.get("license")
    return {
        "name": str(block.get("name") or repo.split("/")[-1]),
        "description": str(meta.get("description") or ""),
        "version": None if version is None else str(version),
        "license": None if license_value is None else str(license_value),
        "tags": [str(t) for t in tags],
    }


def reported_hash(meta: dict[str, Any]) -> str | None:
    """The content hash a card's metadata reports for its revision (None when absent)."""
    block = meta.get("hubskills")
    value = block.get("content_hash") if isinstance(block, dict) else None
    return str(value) if value else None


def skill_info(model: RepoInfo, card: str = "") -> SkillInfo:
    """A `SkillInfo` from a Hub listing entry (card data) or a card's text."""
    data = model.card_data or (parse_card(card) if card else {})
    fields = card_fields(data, model.id)
    fields["tags"] = fields["tags"] or list(model.tags)
    return SkillInfo(repo=model.id, downloads=model.downloads, likes=model.likes,
                     updated=model.last_modified, card=card, **fields)
