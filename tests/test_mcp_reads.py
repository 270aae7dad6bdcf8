"""A file read over MCP by its exact URI, from memory (`Catalog.served`), answers what parsing
the URI and looking it up would: the same bytes, and the same refusals. The oracle for which
URIs may be answered is `uris.parse` itself; for bytes, the registry's own `fetch`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st

pytest.importorskip("mcp")

import mcp_types as types  # noqa: E402
from mcp import Client  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402
from mcp_types.jsonrpc import INVALID_PARAMS  # noqa: E402
from pydantic import TypeAdapter  # noqa: E402

from registry.config import Settings  # noqa: E402
from registry.mcp.uris import BadSkillUri, SkillUri, file_uri, parse, servable  # noqa: E402
from registry.registries import get_store  # noqa: E402

ANY = TypeAdapter(dict[str, Any])
SHA = "0123456789abcdef0123456789abcdef01234567"
# the characters that decide: separators, dots, what parse refuses, and plain ones
PATHS = st.text(alphabet="ab./%?#\\\x00\n\x7f é", max_size=12)


def _parses_back(path: str) -> bool:
    try:
        return (parse(file_uri("ns/repo", SHA, "my-skill", path))
                == SkillUri("ns/repo", SHA, "my-skill", path))
    except BadSkillUri:
        return False


@given(st.lists(PATHS, min_size=1, max_size=4))
def test_servable_paths_are_exactly_those_parse_gives_back(paths: list[str]) -> None:
    """A revision is answered by exact URI only when `parse` would give back the very path of
    each of its files; otherwise nothing of it is."""
    assert servable(paths) == all(_parses_back(path) for path in paths)


def test_servable_known_cases() -> None:
    ok = ["SKILL.md", "scripts/run.py", "a/b/c.txt", "...", ".hidden"]
    assert servable(ok)
    for bad in ["100%.txt", "a//b", "./x", "a/../b", "a/.", "q?.md", "f#1", "a\\b", "", "a/"]:
        assert not servable([*ok, bad]), bad


def _publish(tmp: Path, name: str, files: dict[str, bytes]) -> Path:
    folder = tmp / name
    for rel, data in {"SKILL.md": f"---\nname: {name}\ndescription: Read by URI. Use when "
                                  "testing.\n---\n\nBody.\n".encode(), **files}.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_bytes(data)
    return folder


async def _read(session: Any, uri: str) -> bytes:
    (content,) = (await session.read_resource(uri)).contents
    assert isinstance(content, types.TextResourceContents)
    return content.text.encode()


def test_a_file_parse_refuses_is_refused_after_its_skill_was_read(tmp_path: Path) -> None:
    """A revision with a file whose URI `parse` refuses (a `%` in its name) is never answered
    from memory: that file stays an MCP error after `skills/get` and the other files' reads,
    which still answer their bytes."""
    from registry.mcp import Catalog, build_server

    store = get_store(Settings.from_env())
    store.publish(_publish(tmp_path, "odd-name", {"100%.txt": b"percent\n",
                                                  "notes.md": b"notes\n"}),
                  repo="hubskills/odd-name", version="1.0.0")
    catalog = Catalog(store)

    async def main() -> None:
        async with Client(build_server(catalog), mode="2026-07-28") as client:
            (rev,) = [r for r in catalog.listed() if r.repo == "hubskills/odd-name"]
            got = await client.session.send_request(types.Request[dict[str, Any], str](
                method="skills/get", params={"uri": rev.uri()}), ANY)
            assert rev.uri("100%.txt") in [r["uri"] for r in got["skill"]["resources"]]
            assert await _read(client.session, rev.uri("notes.md")) == b"notes\n"
            with pytest.raises(MCPError) as err:
                await _read(client.session, rev.uri("100%.txt"))
            assert err.value.error.code == INVALID_PARAMS
            assert not [uri for uri in catalog.served if uri.startswith(rev.uri(""))]

    anyio.run(main)


def test_an_evicted_revision_is_read_again_from_the_store(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A revision read by URI has its files in `served`; evicted from memory, it takes them
    out with it, and a read of one of them then reads the store again, the same bytes."""
    import registry.mcp.catalog as catalog_module
    from registry.mcp import Catalog, build_server

    monkeypatch.setattr(catalog_module, "MAX_REVISIONS", 1)
    store = get_store(Settings.from_env())
    for name in ("first-one", "second-one"):
        store.publish(_publish(tmp_path, name, {"data.txt": name.encode()}),
                      repo=f"hubskills/{name}", version="1.0.0")
    catalog = Catalog(store)
    revs = {r.repo: r for r in catalog.listed()}  # each evicts the one before
    first, second = revs["hubskills/first-one"], revs["hubskills/second-one"]
    assert not catalog.served  # a listing alone puts nothing there: a walk pays nothing

    async def main() -> None:
        async with Client(build_server(catalog), mode="2026-07-28") as client:
            for rev, data in ((first, b"first-one"), (second, b"second-one"),
                              (first, b"first-one")):
                assert await _read(client.session, rev.uri("data.txt")) == data
                assert rev.uri("data.txt") in catalog.served  # the last read, in memory
                other = second if rev is first else first
                assert other.uri("data.txt") not in catalog.served  # evicted with it
            catalog.forget(first.repo, first.sha)
            assert not [uri for uri in catalog.served if uri.startswith(first.uri(""))]

    anyio.run(main)
