"""`info` and `search --json`: a published skill's signature and its publisher's claims
(`registry.stores.revision_facts`), as JSON and as terminal text."""

from __future__ import annotations

from typing import Any

from rich.markup import escape

from registry.cli import _output as out
from registry.config import Settings
from registry.errors import HubskillsError
from registry.format.claims import CLAIMS_LABEL, plain_text
from registry.stores import SkillStore
from registry.stores.revision_facts import RevisionFacts, revision_facts

SHOWN_LINES = 25  # of each claim file in the terminal; --json has it whole


def facts_of(settings: Settings, store: SkillStore, repo: str,
             version: str | None) -> RevisionFacts | str:
    """The facts of `repo` at `version` (the latest when None), or why they are unknown."""
    try:
        return revision_facts(store, repo, home=settings.home, version=version)
    except HubskillsError as err:
        return err.message


def signature_json(facts: RevisionFacts | str) -> dict[str, Any]:
    """`{"status": "signed"|"unsigned"|"invalid"|"unknown", "signer": ..., "label": ...}`."""
    if isinstance(facts, str):
        return {"status": "unknown", "reason": facts, "label": f"signature unknown: {facts}"}
    return facts.signature.to_dict()


def claims_json(facts: RevisionFacts | str) -> dict[str, Any]:
    """The claim files under their label (`files` empty when the skill ships none)."""
    return {"label": CLAIMS_LABEL,
            "files": {} if isinstance(facts, str) else dict(facts.claims)}


def print_signature(facts: RevisionFacts | str) -> None:
    """One line: `signature: signed by … (trusted: nvidia)`."""
    out.result("signature: " + escape(plain_text(signature_json(facts)["label"])))


def print_claims(facts: RevisionFacts | str) -> None:
    """Each claim file's first lines, under the label saying whose claims they are."""
    if isinstance(facts, str) or not facts.claims:
        return
    out.result("")
    out.result(f"Publisher's claims ({', '.join(facts.claims)}): {CLAIMS_LABEL}")
    for name, text in facts.claims.items():
        lines = plain_text(text).splitlines()
        out.result(f"── {escape(name)} (publisher's claim) ──")
        for line in lines[:SHOWN_LINES]:
            out.result("  " + escape(line))
        if len(lines) > SHOWN_LINES:
            out.result(f"  … {len(lines) - SHOWN_LINES} more lines (--json has the whole file)")
