"""Two repos serving one skill name over MCP: a pull by that name is never a pick by sort order.

A red team published `dup` as `zeta/dup` and again as `aaa-evil/dup`: `skills/list` lists by
repo id, so `hubskills pull mcp+URL --skill dup` installed aaa-evil's, and the output never
said which. Now a name two entries share is refused, naming both repos; `--skill NS/NAME` (or
`#NS/NAME`) picks one, and the pull prints the URI it installed. Served by `hubskills mcp`'s
own app over real HTTP (`tests/test_mcp_pull.serving`).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

pytest.importorskip("mcp")

from registry.config import Settings  # noqa: E402
from registry.errors import HubskillsError  # noqa: E402
from registry.install import install, update  # noqa: E402
from registry.install.lockfile import Lockfile  # noqa: E402
from registry.install.pull import pull_source  # noqa: E402
from registry.registries import get_store  # noqa: E402
from registry.stores import SkillStore  # noqa: E402
from tests.cli_process import hubskills  # noqa: E402
from tests.test_mcp_pull import _plan, nothing_installed, serving  # noqa: E402
from tests.test_pull_fidelity import make_full_skill  # noqa: E402

pytestmark = pytest.mark.timeout(300)


def publish_dup(store: SkillStore, tmp: Path, namespace: str) -> None:
    """A skill named `dup` as `NAMESPACE/dup`, its README saying whose it is."""
    folder = make_full_skill(tmp / namespace, "dup")
    (folder / "README.md").write_text(f"{namespace}'s dup\n", encoding="utf-8")
    store.publish(folder, repo=f"{namespace}/dup", version="1.0.0")


def readme(project: Path) -> str:
    return (project / ".agents/skills/dup/README.md").read_text(encoding="utf-8")


def test_a_name_two_repos_serve_is_refused_and_ns_name_picks_one(tmp_path: Path) -> None:
    store = get_store(Settings.from_env())
    publish_dup(store, tmp_path, "zeta")
    publish_dup(store, tmp_path, "aaa-evil")
    project = tmp_path / "proj"
    with serving(store) as url:
        for spec, skills in ((f"mcp+{url}", ["dup"]), (f"mcp+{url}#dup", [])):
            with pytest.raises(HubskillsError) as err:
                pull_source(spec, _plan(project), skills=skills)
            assert "aaa-evil/dup" in err.value.message and "zeta/dup" in err.value.message
            assert err.value.hint is not None and "--skill" in err.value.hint
            assert "NS/dup" in err.value.hint, err.value.hint
            nothing_installed(project)
        with pytest.raises(HubskillsError) as listing:  # the listing keeps both apart
            pull_source(f"mcp+{url}", _plan(project))
        assert "aaa-evil/dup" in listing.value.message and "zeta/dup" in listing.value.message
        with pytest.raises(HubskillsError, match="both named dup"):
            pull_source(f"mcp+{url}", _plan(project), all_skills=True)
        nothing_installed(project)

        (result,) = pull_source(f"mcp+{url}", _plan(project), skills=["zeta/dup"])
        assert result.name == "dup" and readme(project) == "zeta's dup\n"
        assert result.ref.startswith("skill://zeta/dup@") and result.ref.endswith("/dup/SKILL.md")
        entry = Lockfile.read(project / "skills.lock").entries["dup"]
        assert entry.repo == f"mcp+{url}#zeta/dup"
        assert entry.source is not None and entry.source["uri"] == result.ref
        (again,) = pull_source(f"mcp+{url}#zeta/dup", _plan(project))
        assert again.status == "up-to-date"
        shutil.rmtree(project / ".agents/skills/dup")
        install(project, stores=lambda name: store, frozen=True)
        assert readme(project) == "zeta's dup\n"
        with pytest.raises(HubskillsError, match="lists no skill 'nobody/dup'"):
            pull_source(f"mcp+{url}", _plan(tmp_path / "other"), skills=["nobody/dup"])


def test_a_lock_pinned_before_a_squatter_keeps_its_repo(tmp_path: Path) -> None:
    """A lock that pinned `#dup` when only zeta served it installs and updates zeta's once
    aaa-evil serves a `dup` too: its URI names the repo."""
    store = get_store(Settings.from_env())
    publish_dup(store, tmp_path, "zeta")
    project = tmp_path / "proj"
    with serving(store, recheck_s=0) as url:
        (first,) = pull_source(f"mcp+{url}", _plan(project), skills=["dup"])
        assert Lockfile.read(project / "skills.lock").entries["dup"].repo == f"mcp+{url}#dup"
        publish_dup(store, tmp_path / "later", "aaa-evil")
        shutil.rmtree(project / ".agents/skills/dup")
        install(project, stores=lambda name: store, frozen=True)
        assert readme(project) == "zeta's dup\n"
        (updated,) = update(project, "dup", stores=lambda name: store)
        assert updated.ref == first.ref and readme(project) == "zeta's dup\n"


def test_pull_output_names_the_uri_it_installed(tmp_path: Path) -> None:
    store = get_store(Settings.from_env())
    publish_dup(store, tmp_path, "zeta")
    publish_dup(store, tmp_path, "aaa-evil")
    project = tmp_path / "proj"
    project.mkdir()
    with serving(store) as url:
        done = hubskills("pull", f"mcp+{url}", "--skill", "zeta/dup", "--agent", "agents",
                         "--allow-risky", "--project", project)
    assert done.returncode == 0, done.stderr
    assert "skill://zeta/dup@" in done.stdout, done.stdout
