"""Signers of skills pulled over MCP are pinned per publisher, not per server.

One `hubskills mcp --http` server serves every namespace of its registry: keyed by the server
(`127.0.0.1/PORT`), the first signer seen there stood for every publisher it served (bob's
skill refused as a change of acme's signer), and the same server on another port lost the pin.
Now the key is the namespace of the repo the skill's URI files it under (`acme` of
`skill://acme/a@REV/a/SKILL.md`). Served by `hubskills mcp`'s own app over real HTTP
(`tests/test_mcp_pull.serving`), the skills signed by two trusted keys
(`tests/test_install_trust.keys`).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

pytest.importorskip("mcp")

from registry.errors import UnsafeSkill  # noqa: E402
from registry.install import install  # noqa: E402
from registry.install.audit import verify_installed  # noqa: E402
from registry.install.pull import pull_source  # noqa: E402
from registry.install.signers import SignerChanged  # noqa: E402
from registry.signing import sign_folder  # noqa: E402
from registry.stores import LocalStore  # noqa: E402
from tests.fakes.mcp_skills_server import NAME, FakeSkillsServer, skill_files  # noqa: E402
from tests.test_install_trust import keys, lock, publish  # noqa: E402, F401 (the fixture)
from tests.test_mcp_pull import _plan, nothing_installed, serving  # noqa: E402

pytestmark = pytest.mark.timeout(300)


@pytest.fixture
def store(tmp_path: Path, keys: dict[str, Path]) -> LocalStore:  # noqa: F811
    """acme/a signed by the first key, bob/b by the second, and acme/c by the second: a
    publisher's skill signed by another key both trust."""
    found = LocalStore(tmp_path / "store")
    publish(found, tmp_path, "acme/a", keys["first"])
    publish(found, tmp_path, "bob/b", keys["second"])
    publish(found, tmp_path, "acme/c", keys["second"])
    return found


def test_two_publishers_on_one_server_pin_apart(tmp_path: Path, store: LocalStore) -> None:
    project = tmp_path / "proj"
    with serving(store) as url:
        (a,) = pull_source(f"mcp+{url}#a", _plan(project))
        (b,) = pull_source(f"mcp+{url}#b", _plan(project))
        assert a.signer != b.signer
        assert any("first signer of the namespace 'bob'" in n for n in b.notes), b.notes
        assert lock(project)["signers"] == {"acme": a.signer, "bob": b.signer}
        sources = {k: v["source"]["repo"] for k, v in lock(project)["skills"].items()}
        assert sources == {"a": "acme/a", "b": "bob/b"}
        with pytest.raises(SignerChanged) as err:
            pull_source(f"mcp+{url}#c", _plan(project))
    assert f"pins {a.signer} as the signer of the namespace 'acme'" in err.value.message
    assert "c" not in lock(project)["skills"]


def test_a_server_restarted_on_another_port_keeps_the_publishers_pin(
        tmp_path: Path, store: LocalStore) -> None:
    project = tmp_path / "proj"
    with serving(store) as first:
        (a,) = pull_source(f"mcp+{first}#a", _plan(project))
    with serving(store) as again:
        assert again != first
        with pytest.raises(SignerChanged, match="namespace 'acme'"):
            pull_source(f"mcp+{again}#c", _plan(project))
        (b,) = pull_source(f"mcp+{again}#b", _plan(project))
    assert lock(project)["signers"] == {"acme": a.signer, "bob": b.signer}


def test_a_lock_pinned_per_server_verifies_and_is_upgraded_on_the_next_write(
        tmp_path: Path, store: LocalStore) -> None:
    """A lock as the per-server code wrote it: the server's pin, entries without their repo.
    `verify-install` and `install --frozen` read it as it is (and write nothing); the next pull
    of another publisher from that server is not refused, and rewrites the pins per publisher."""
    project = tmp_path / "proj"
    with serving(store) as url:
        (a,) = pull_source(f"mcp+{url}#a", _plan(project))
        old = lock(project)
        old["skills"]["a"]["source"].pop("repo", None)  # as the per-server code wrote it
        server_key = url.removeprefix("http://").replace(":", "/").removesuffix("/mcp")
        old["signers"] = {server_key: a.signer}
        text = json.dumps(old, indent=2, sort_keys=True) + "\n"
        (project / "skills.lock").write_text(text)
        assert [(x.name, x.state) for x in verify_installed(project)] == [("a", "ok")]
        shutil.rmtree(project / ".agents/skills/a")
        (restored,) = install(project, stores=lambda name: store, frozen=True)
        assert restored.signer == a.signer
        assert (project / "skills.lock").read_text() == text
        (b,) = pull_source(f"mcp+{url}#b", _plan(project))
        assert any("now per publisher" in n for n in b.notes), b.notes
        assert lock(project)["signers"] == {"acme": a.signer, "bob": b.signer}
        assert lock(project)["skills"]["a"]["source"]["repo"] == "acme/a"
        with pytest.raises(SignerChanged, match="namespace 'acme'"):
            pull_source(f"mcp+{url}#c", _plan(project))


def test_a_signed_skill_filed_under_no_publisher_is_refused(
        tmp_path: Path, keys: dict[str, Path]) -> None:  # noqa: F811
    """A server whose URIs name no repo (`skill://NAME/SKILL.md`) has no namespace to pin a
    signer for: its signed skill is refused and nothing installed; unsigned, it installs."""
    folder = tmp_path / "signed" / NAME
    for path, data in skill_files().items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_bytes(data)
    sign_folder(folder, key=keys["first"])
    signed = {p.relative_to(folder).as_posix(): p.read_bytes()
              for p in folder.rglob("*") if p.is_file()}
    with FakeSkillsServer("flat") as fake:
        fake.files = signed
        with pytest.raises(UnsafeSkill) as err:
            pull_source(f"mcp+{fake.url}#{NAME}", _plan(tmp_path / "proj"))
        assert "files it under no publisher" in err.value.message
        nothing_installed(tmp_path / "proj")
        fake.files = skill_files()
        (plain,) = pull_source(f"mcp+{fake.url}#{NAME}", _plan(tmp_path / "plain"))
    assert plain.signer is None and plain.status == "installed"


def test_an_older_locks_unsigned_mcp_skill_of_a_pinned_namespace_still_installs(
        tmp_path: Path, store: LocalStore, keys: dict[str, Path]) -> None:  # noqa: F811
    """Under the per-server pins, an unsigned skill a server filed under `acme/` answered to
    the server's pin, not to the `acme` signer a registry pull had pinned: the lock vouched for
    it, and `install --frozen` must keep restoring it (it raised SignerChanged)."""
    publish(store, tmp_path, "acme/u", None)
    project = tmp_path / "proj"
    with serving(store) as url:
        (a,) = pull_source(f"mcp+{url}#a", _plan(project))
        (u,) = pull_source(f"mcp+{url}#u", _plan(project, accept_new_signer=True))
        old = lock(project)
        for entry in old["skills"].values():  # as the per-server code wrote them
            entry["source"].pop("repo", None)
            entry.pop("accepted_unsigned", None)
        server_key = url.removeprefix("http://").replace(":", "/").removesuffix("/mcp")
        old["signers"] = {server_key: a.signer, "acme": a.signer}
        (project / "skills.lock").write_text(json.dumps(old, indent=2, sort_keys=True) + "\n")
        assert sorted((x.name, x.state) for x in verify_installed(project)) == [
            ("a", "ok"), ("u", "ok")]
        shutil.rmtree(project / ".agents/skills/u")
        restored = install(project, stores=lambda name: store, frozen=True)
    assert sorted(r.name for r in restored) == ["a", "u"]
