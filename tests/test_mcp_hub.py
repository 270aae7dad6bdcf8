"""`hubskills mcp --registry hub`'s catalog on the fake Hub over real HTTP: a skill published to
the Hub is listed with its digests and every file read back byte for byte through the official
SDK's in-process client."""

from __future__ import annotations

import os
from collections.abc import Iterator

# huggingface_hub reads these once, at import: set them before anything imports it.
os.environ.setdefault("HF_HUB_DISABLE_XET", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")

import hashlib  # noqa: E402
from pathlib import Path  # noqa: E402

import anyio  # noqa: E402
import pytest  # noqa: E402

pytest.importorskip("mcp")

from mcp import Client  # noqa: E402

from registry.mcp import Catalog, build_server, parse  # noqa: E402
from tests.fakes.hub_server import FakeHub  # noqa: E402
from tests.hub_setup import online_hub  # noqa: E402
from tests.test_hub_fallback import hub_store  # noqa: E402
from tests.test_mcp import _call, _list_all, _read  # noqa: E402
from tests.test_store_contract import make_skill  # noqa: E402


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeHub]:
    yield from online_hub()


def test_the_hub_registry_is_served_pinned_and_byte_identical(fake: FakeHub,
                                                              tmp_path: Path) -> None:
    store = hub_store(fake, tmp_path / "home")
    folder = make_skill(tmp_path / "src", "over-mcp")
    published = store.publish(folder, repo="tester/over-mcp", version="1.0.0")
    server = build_server(Catalog(store))

    async def main() -> None:
        async with Client(server, mode="2026-07-28") as client:
            skills = await _list_all(client.session)
            (skill,) = [s for s in skills if s["frontmatter"]["name"] == "over-mcp"]
            uri = parse(skill["uri"])
            assert (uri.repo, uri.revision) == ("tester/over-mcp", published.sha)
            files = {p.relative_to(folder).as_posix(): p.read_bytes()
                     for p in folder.rglob("*") if p.is_file()}
            listed = {parse(r["uri"]).path: r for r in skill["resources"]}
            assert set(listed) == set(files) and "SKILL.md" in listed
            for path, resource in listed.items():
                data = await _read(client.session, resource["uri"])
                assert data == files[path]
                assert resource["digest"] == "sha256:" + hashlib.sha256(data).hexdigest()
            got = await _call(client.session, "skills/get", uri=skill["uri"])
            assert got["skill"]["resources"] == skill["resources"]

    anyio.run(main)


def test_the_hub_store_reads_a_revision_into_no_folder(fake: FakeHub, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """`HubStore.read_files`: the bytes and exec bits `fetch` would write, checked the same
    way, with no folder of the catalog's made (a Hub-backed server's first read)."""
    import tempfile

    from registry.errors import UnsafeSkill
    from registry.scan import SizeLimits

    store = hub_store(fake, tmp_path / "home")
    folder = make_skill(tmp_path / "src", "read-only", files={
        "references/notes.md": "Notes.\n", "scripts/run.sh": "#!/bin/sh\necho run\n",
        "assets/blob.bin": "\x00\x01\x02 binary\n"})
    (folder / "scripts" / "run.sh").chmod(0o755)
    published = store.publish(folder, repo="tester/read-only", version="1.0.0")

    fetched = store.fetch("tester/read-only", published.sha, tmp_path / "fetched", count=False)
    oracle = {rel: (tmp_path / "fetched" / rel).read_bytes() for rel in fetched.files}
    files, executable = store.read_files("tester/read-only", published.sha)
    assert files == oracle and executable == {"scripts/run.sh"}
    with pytest.raises(UnsafeSkill, match="too large|max|over"):
        store.read_files("tester/read-only", published.sha,
                         limits=SizeLimits(max_file_bytes=8))

    scratch = tmp_path / "scratch"  # where the catalog would make its folders
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    catalog = Catalog(hub_store(fake, tmp_path / "home"))  # a fresh server
    rev = catalog.revision("tester/read-only", published.sha)
    assert rev.files == oracle and rev.executable == {"scripts/run.sh"}
    assert list(scratch.iterdir()) == []
