"""A `skills.lock` pinning a skill pulled over MCP, after the server moves on.

The server is `hubskills mcp --http`'s app over the local registry (uvicorn on a free port);
the registry then gets a new version of the pinned skill, which the server lists from then on.
The lock names the revision-pinned URI, and `skills/get` still serves it: `install --frozen`
installs what the lock pins, byte for byte, as a registry pin does. And when the server cannot
help: one that is down is named with the real cause, one that answers an error (its own
registry unreachable) is quoted, never called hostile.
"""

from __future__ import annotations

import shutil
from contextlib import AbstractContextManager
from pathlib import Path

import pytest

pytest.importorskip("mcp")

from registry.config import Settings  # noqa: E402
from registry.errors import (  # noqa: E402
    HubskillsError,
    RegistryUnavailable,
    UnsafeSkill,
    VersionNotFound,
)
from registry.install import install  # noqa: E402
from registry.install.lockfile import Lockfile  # noqa: E402
from registry.install.pull import pull_source  # noqa: E402
from registry.registries import get_store  # noqa: E402
from registry.stores import SkillStore  # noqa: E402
from tests.test_mcp_pull import _plan, files_of  # noqa: E402
from tests.test_mcp_pull import serving as _serving  # noqa: E402

pytestmark = pytest.mark.timeout(300)
NAME, REPO = "agent-skill-md", "hubskills/agent-skill-md"
FAKE = "honest-skill"  # the fake server's skill


def serving(store: SkillStore) -> AbstractContextManager[str]:
    """`hubskills mcp --http`'s app over `store`, re-reading the listing on every request."""
    return _serving(store, recheck_s=0)


def publish_next(store: SkillStore, tmp: Path) -> str:
    """Publish 1.1.1 of the example skill (one more line in SKILL.md); its sha."""
    src = tmp / "next" / NAME
    store.fetch(REPO, store.resolve(REPO).sha, src, count=False)
    text = (src / "SKILL.md").read_text()
    (src / "SKILL.md").write_text(text.replace('version: "1.1.0"', 'version: "1.1.1"', 1)
                                  + "\nOne more line.\n")
    for marker in src.glob(".hubskills*"):
        marker.unlink()
    store.publish(src, repo=REPO, version="1.1.1")
    return store.resolve(REPO).sha


def test_frozen_install_fetches_the_pinned_revision_after_a_new_version(tmp_path: Path) -> None:
    store = get_store(Settings.from_env())
    first, fresh = tmp_path / "first", tmp_path / "fresh"
    with serving(store) as url:
        pull_source(f"mcp+{url}", _plan(first), skills=[NAME])
        pinned = Lockfile.read(first / "skills.lock").entries[NAME]
        assert pinned.version == "1.1.0"
        sha = publish_next(store, tmp_path)
        assert sha not in pinned.source["uri"]  # type: ignore[index]
        fresh.mkdir()
        shutil.copy(first / "skills.lock", fresh / "skills.lock")
        (result,) = install(fresh, stores=lambda name: store, frozen=True)
    assert result.version == "1.1.0" and result.sha == pinned.sha
    assert files_of(fresh / ".agents/skills" / NAME) == files_of(first / ".agents/skills" / NAME)
    assert Lockfile.read(fresh / "skills.lock").entries[NAME] == pinned


def test_a_revision_no_longer_served_names_the_pull_that_re_pins(tmp_path: Path) -> None:
    """A lock whose URI the server no longer serves (here: a revision it never had) is
    refused, and the hint says what `update` does there: install what is served now."""
    store = get_store(Settings.from_env())
    project = tmp_path / "proj"
    with serving(store) as url:
        pull_source(f"mcp+{url}", _plan(project), skills=[NAME])
        lock_path = project / "skills.lock"
        text = lock_path.read_text()
        uri = Lockfile.read(lock_path).entries[NAME].source["uri"]  # type: ignore[index]
        gone = uri.replace(uri.split("@", 1)[1].split("/", 1)[0], "f" * 40)
        lock_path.write_text(text.replace(uri, gone))
        shutil.rmtree(project / ".agents/skills" / NAME)
        publish_next(store, tmp_path)
        with pytest.raises(VersionNotFound) as err:
            install(project, stores=lambda name: store, frozen=True)
    assert f"no longer serves {gone}" in err.value.message
    assert err.value.hint is not None and "installs what the server serves now" in err.value.hint


def test_a_server_that_is_down_is_named_with_the_real_cause(tmp_path: Path) -> None:
    """Nothing listens on the pinned server's port: the error says so (the SDK's task group
    unwrapped to its cause) and the hint names the command that serves one there."""
    from tests.fakes.mcp_skills_server import FakeSkillsServer

    project = tmp_path / "proj"
    with FakeSkillsServer("honest") as fake:
        pull_source(f"mcp+{fake.url}", _plan(project), skills=[FAKE])
    shutil.rmtree(project / ".agents/skills" / FAKE)
    with pytest.raises(RegistryUnavailable) as err:
        install(project, stores=lambda name: get_store(Settings.from_env()), frozen=True)
    assert err.value.message == f"cannot reach the MCP server {fake.url}: connection refused"
    assert err.value.hint == (f"is the server running? hubskills mcp --http 127.0.0.1:{fake.port}"
                              "  # serves one there")


def test_an_error_the_server_answers_is_its_own_not_a_lie(tmp_path: Path) -> None:
    """A server that cannot reach its own registry answers skills/list with an error: the
    message says what it said, and nothing calls it malformed or hostile."""
    from tests.fakes.mcp_skills_server import UNREACHABLE, FakeSkillsServer

    with FakeSkillsServer("failing") as fake, pytest.raises(HubskillsError) as err:
        pull_source(f"mcp+{fake.url}#{FAKE}", _plan(tmp_path / "proj"))
    assert not isinstance(err.value, UnsafeSkill)
    assert err.value.message == f"{fake.url} answered skills/list with an error: {UNREACHABLE}"
    assert err.value.hint is not None and "hostile" not in err.value.hint
    assert "nothing was installed" in err.value.hint


def test_a_pinned_revision_the_server_says_is_not_found_names_the_update(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A server that answers `skills/get` of the pinned URI with -32002 ("resource not found",
    older MCP versions' code) no longer serves that revision: `hubskills install` says so and
    names the `update` that installs what it serves now (it said "try again once it can
    answer", which never helps), and nothing is installed."""
    from tests.fakes.mcp_skills_server import FakeSkillsServer
    from tests.test_install import run_main

    project = tmp_path / "proj"
    with FakeSkillsServer("gone") as fake:
        pull_source(f"mcp+{fake.url}", _plan(project), skills=[FAKE])
        pinned = Lockfile.read(project / "skills.lock").entries[FAKE]
        uri = pinned.source["uri"]  # type: ignore[index]
        fake.change()
        shutil.rmtree(project / ".agents/skills" / FAKE)
        code, _, err = run_main(capsys, "install", "--frozen", "--project", project)
        with pytest.raises(VersionNotFound) as refused:
            install(project, stores=lambda name: get_store(Settings.from_env()), frozen=True)
    assert code == 1 and "Traceback" not in err
    assert refused.value.message == (
        f"{FAKE} from {fake.url} changed since it was pinned at {pinned.sha[:12]}: the server "
        f"now lists other digests ({fake.root}/SKILL.md); it no longer serves {uri}")
    assert refused.value.hint == (f"hubskills update {FAKE}  # installs what the server serves "
                                  "now and re-pins it")
    assert err.splitlines() == [f"Error: {refused.value.message}", f"Hint: {refused.value.hint}"]
    assert not (project / ".agents/skills" / FAKE).exists()
    assert Lockfile.read(project / "skills.lock").entries[FAKE] == pinned
