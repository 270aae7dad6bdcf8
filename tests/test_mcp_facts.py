"""The facts `hubskills mcp` keeps per revision (frontmatter, scan summary) by content key.

A fresh server answers a first walk from the facts an earlier one kept; a file that changed
under the same revision makes another content key, so its entry is computed from the bytes
served, never from what was kept. The oracle for every digest is hashlib over the bytes read.
"""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")

import mcp_types as types  # noqa: E402
from mcp import Client  # noqa: E402
from pydantic import TypeAdapter  # noqa: E402

from registry.config import Settings  # noqa: E402
from registry.registries import get_store  # noqa: E402

ANY = TypeAdapter(dict[str, Any])
REPO = "hubskills/kept-facts"


def _skill(folder: Path, description: str) -> Path:
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(f"---\nname: kept-facts\ndescription: {description}\n---\n"
                                     "\n# Kept facts\n\nRun `scripts/go.sh`.\n")
    (folder / "scripts").mkdir()
    (folder / "scripts" / "go.sh").write_text("#!/bin/sh\necho go\n")
    (folder / "scripts" / "go.sh").chmod(0o755)
    return folder


def _listed(catalog: Any) -> tuple[dict[str, Any], bytes]:
    """The skill's `skills/list` entry through the SDK's client, and its SKILL.md as read."""
    from registry.mcp import build_server

    async def main() -> tuple[dict[str, Any], bytes]:
        async with Client(build_server(catalog), mode="2026-07-28") as client:
            page = await client.session.send_request(types.Request[dict[str, Any], str](
                method="skills/list", params={}), ANY)
            (entry,) = [s for s in page["skills"] if s["_meta"]["io.hubskills/registry"]["repo"]
                        == REPO]
            result = await client.session.read_resource(entry["uri"])
            (content,) = result.contents
            data = (content.text.encode() if isinstance(content, types.TextResourceContents)
                    else base64.b64decode(content.blob))
            return entry, data

    return anyio.run(main)


def _digest(entry: dict[str, Any], path: str) -> tuple[str, int]:
    (resource,) = [r for r in entry["resources"] if r["uri"].endswith("/" + path)]
    return resource["digest"], resource["size"]


def test_a_changed_file_is_never_served_with_kept_facts(tmp_path: Path) -> None:
    from registry.mcp import Catalog
    from registry.mcp.facts import content_key

    store = get_store(Settings.from_env())
    published = store.publish(_skill(tmp_path / "src" / "kept-facts", "The first words. Use "
                                     "when testing."), repo=REPO, version="1.0.0")
    facts = tmp_path / "facts"
    first, first_bytes = _listed(Catalog(store, facts=facts))
    assert first["frontmatter"]["description"] == "The first words. Use when testing."
    assert _digest(first, "SKILL.md") == ("sha256:" + hashlib.sha256(first_bytes).hexdigest(),
                                          len(first_bytes))
    kept = sorted(facts.glob("mcp-*.json"))
    assert kept, "the first server keeps each revision's facts"

    again, _ = _listed(Catalog(store, facts=facts))  # a fresh server, nothing changed
    assert again == first and sorted(facts.glob("mcp-*.json")) == kept

    # the revision's SKILL.md changes in place, its tree.json with it (so the store's own
    # digest check passes): the same repo and sha, other bytes
    rev = store.root / "skills" / "hubskills" / "kept-facts" / "revisions" / published.sha
    changed = first_bytes.replace(b"The first words.", b"Other words entirely.")
    (rev / "files" / "SKILL.md").write_bytes(changed)
    tree = json.loads((rev / "tree.json").read_text())
    for entry in tree["files"]:
        if entry["path"] == "SKILL.md":
            entry["sha256"], entry["size"] = hashlib.sha256(changed).hexdigest(), len(changed)
    (rev / "tree.json").write_text(json.dumps(tree))

    # and the facts kept for the old bytes are copied under the new content's key too
    digests = {"SKILL.md": "sha256:" + hashlib.sha256(changed).hexdigest(),
               "scripts/go.sh": _digest(first, "scripts/go.sh")[0]}
    new_key = content_key(digests, ["scripts/go.sh"])
    old = [path for path in kept if "The first words" in path.read_text()]
    assert old
    (facts / f"mcp-{new_key}.json").write_text(old[0].read_text())

    served, served_bytes = _listed(Catalog(store, facts=facts))  # a fresh server
    assert served_bytes == changed
    assert _digest(served, "SKILL.md") == ("sha256:" + hashlib.sha256(changed).hexdigest(),
                                           len(changed))
    assert served["frontmatter"]["description"] == "Other words entirely. Use when testing."
    assert served["uri"] == first["uri"]  # the same revision, served as its bytes now are
    assert json.loads((facts / f"mcp-{new_key}.json").read_text())["key"] == new_key


def test_a_listed_revision_removed_from_the_store_is_not_served(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A revision the listing resolved is read again without asking the store to resolve it
    (it named that very sha); gone from the store since, it is an MCP error naming it."""
    import shutil

    from mcp.shared.exceptions import MCPError

    import registry.mcp.catalog as catalog_module
    from registry.mcp import Catalog, build_server

    monkeypatch.setattr(catalog_module, "MAX_REVISIONS", 1)  # each read evicts the last
    store = get_store(Settings.from_env())
    published = store.publish(_skill(tmp_path / "src" / "kept-facts", "Gone soon. Use when "
                                     "testing."), repo=REPO, version="1.0.0")
    catalog = Catalog(store, facts=tmp_path / "facts")
    (rev,) = [r for r in catalog.listed() if r.repo == REPO]  # then evicted by the others
    assert (REPO, rev.sha) not in catalog._revisions
    shutil.rmtree(store.root / "skills" / "hubskills" / "kept-facts" / "revisions"
                  / published.sha)

    async def main() -> None:
        async with Client(build_server(catalog), mode="2026-07-28") as client:
            with pytest.raises(MCPError) as err:
                await client.session.send_request(types.Request[dict[str, Any], str](
                    method="skills/get", params={"uri": rev.uri()}), ANY)
            assert err.value.error.code == -32602 and published.sha in err.value.error.message

    anyio.run(main)


def test_a_file_changed_behind_the_stores_back_is_refused_not_served(tmp_path: Path) -> None:
    """A first read takes each file's digest from the local store's own check (the digest it
    recorded, compared with the bytes it just read): a file that no longer matches it is an
    MCP error, never bytes served with the recorded digest; the digests it hands out are
    those of the bytes (hashlib, the oracle)."""
    from mcp.shared.exceptions import MCPError

    from registry.mcp import Catalog, build_server

    store = get_store(Settings.from_env())
    published = store.publish(_skill(tmp_path / "src" / "kept-facts", "Checked words. Use when "
                                     "testing."), repo=REPO, version="1.0.0")
    handed: dict[str, str] = {}
    files, _ = store.read_files(REPO, published.sha, digests=handed)
    assert handed == {path: hashlib.sha256(data).hexdigest() for path, data in files.items()}

    catalog = Catalog(store, facts=tmp_path / "facts")
    (rev,) = [r for r in catalog.listed() if r.repo == REPO]
    catalog.forget(REPO, rev.sha)  # evicted: the next read is a first read from the store
    skill_md = (store.root / "skills" / "hubskills" / "kept-facts" / "revisions" / published.sha
                / "files" / "SKILL.md")
    skill_md.write_bytes(skill_md.read_bytes().replace(b"Checked words.", b"Changed words."))

    async def main() -> None:
        async with Client(build_server(catalog), mode="2026-07-28") as client:
            with pytest.raises(MCPError):
                await client.session.send_request(types.Request[dict[str, Any], str](
                    method="skills/get", params={"uri": rev.uri()}), ANY)
            with pytest.raises(MCPError):
                await client.session.read_resource(rev.uri())

    anyio.run(main)
