"""`hubskills pull mcp+...`: skills from any Skills-extension (SEP-2640) MCP server.

The honest server is `hubskills mcp` itself (its app, served over real HTTP by uvicorn, or the
CLI over stdio); the oracle for every byte and exec bit is the registry's own fetch. The lying
server (`tests/fakes/mcp_skills_server.py`) is built on the official SDK's `Server`; each lie
must be refused with a message naming the server, leaving nothing installed.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

pytest.importorskip("mcp")

import uvicorn  # noqa: E402

from registry.config import Settings  # noqa: E402
from registry.errors import HubskillsError, UnsafeSkill, VersionNotFound  # noqa: E402
from registry.install import install, update  # noqa: E402
from registry.install.lockfile import MARKER_FILE, Lockfile  # noqa: E402
from registry.install.mcp_source import parse_mcp, trust_command  # noqa: E402
from registry.install.pull import Plan, pull_source  # noqa: E402
from registry.registries import get_store  # noqa: E402
from registry.scan import STORE_LIMITS, SizeLimits  # noqa: E402
from registry.stores import SkillStore  # noqa: E402
from tests.fakes.mcp_skills_server import NAME, FakeSkillsServer, skill_files  # noqa: E402
from tests.test_pull_fidelity import make_full_skill  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
REAL = ROOT / "tests" / "data" / "real_skills"
pytestmark = pytest.mark.timeout(300)


@contextmanager
def serving(store: SkillStore, *, page: int = 50,
            recheck_s: float | None = None) -> Iterator[str]:
    """`hubskills mcp --http`'s app over `store`, on a free port: yields its URL (`recheck_s`
    0: the listing re-read on every request)."""
    from registry.mcp import Catalog, build_server, http_app
    from tests.fakes.mcp_skills_server import _free_port

    catalog = Catalog(store) if recheck_s is None else Catalog(store, recheck_s=recheck_s)
    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(http_app(build_server(catalog, page=page)),
                                           host="127.0.0.1", port=port, log_level="error"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        assert thread.is_alive(), "the MCP server did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        server.should_exit = True
        thread.join()


def files_of(root: Path) -> dict[str, tuple[str, int]]:
    """Every file under root (the marker aside): (sha256, permission bits)."""
    found = {}
    for dirpath, _, filenames in os.walk(root):
        for name in filenames:
            full = Path(dirpath, name)
            if name != MARKER_FILE:
                found[full.relative_to(root).as_posix()] = (
                    hashlib.sha256(full.read_bytes()).hexdigest(),
                    stat.S_IMODE(full.lstat().st_mode))
    return found


def oracle(store: SkillStore, repo: str, tmp: Path) -> dict[str, tuple[str, int]]:
    """The registry's own files of `repo`'s latest version."""
    dest = tmp / "oracle" / repo.replace("/", "--")
    store.fetch(repo, store.resolve(repo).sha, dest, count=False)
    return files_of(dest)


def _plan(project: Path, **choices: object) -> Plan:
    project.mkdir(parents=True, exist_ok=True)
    return Plan.of(project, agents=["agents"], allow_risky=True, **choices)  # type: ignore[arg-type]


def nothing_installed(project: Path) -> None:
    skills = project / ".agents" / "skills"
    assert not skills.exists() or not any(skills.iterdir()), list(skills.iterdir())
    assert not (project / "skills.lock").exists()


def test_example_skills_round_trip_byte_and_mode_identical(tmp_path: Path) -> None:
    store = get_store(Settings.from_env())
    store.publish(make_full_skill(tmp_path / "src", "round-trip"), repo="tester/round-trip",
                  version="1.0.0")
    repos = {info.name: info.repo for info in store.search("", limit=100)}
    assert len(repos) == 4
    project = tmp_path / "proj"
    with serving(store) as url:
        results = pull_source(f"mcp+{url}", _plan(project), all_skills=True)
    assert sorted(r.name for r in results) == sorted(repos)
    lock = Lockfile.read(project / "skills.lock")
    for name, repo in repos.items():
        installed = files_of(project / ".agents" / "skills" / name)
        assert installed == oracle(store, repo, tmp_path), name
        entry = lock.entries[name]
        assert entry.registry == "mcp" and entry.repo == f"mcp+{url}#{name}"
        assert entry.source is not None and entry.source["server"] == url
        assert entry.source["uri"].endswith(f"@{store.resolve(repo).sha}/{name}/SKILL.md")
        assert entry.source["digests"] == {p: f"sha256:{h}" for p, (h, _) in installed.items()}
    assert files_of(project / ".agents/skills/round-trip")["scripts/run.py"][1] == 0o755


def test_the_http_server_refuses_a_body_over_its_cap(tmp_path: Path) -> None:
    """`hubskills mcp --http` caps request bodies as the Space's `/mcp` does (the SDK reads
    one whole, uncapped)."""
    import httpx

    from registry.mcp.transport import MAX_BODY

    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    headers = {"accept": "application/json, text/event-stream",
               "content-type": "application/json"}
    with serving(get_store(Settings.from_env())) as url:
        big = httpx.post(url, content=json.dumps({**ping, "pad": "x" * MAX_BODY}),
                         headers=headers)
        assert big.status_code == 413, big.text
        assert httpx.post(url, content=json.dumps(ping), headers=headers).status_code != 413


def test_many_real_shaped_skills_round_trip_through_pages(tmp_path: Path) -> None:
    """The real-shaped skills of tests/data and 40 full ones, listed 7 a page."""
    store = get_store(Settings.from_env())
    for folder in sorted(p for p in REAL.iterdir() if (p / "SKILL.md").is_file()):
        store.publish(folder, repo=f"real/{folder.name}", version="1.0.0")
    for i in range(40):
        name = f"shaped-{i:02d}"
        store.publish(make_full_skill(tmp_path / "src", name), repo=f"tester/{name}",
                      version="1.0.0")
    repos = {info.name: info.repo for info in store.search("", limit=1000)}
    assert len(repos) >= 45
    project = tmp_path / "proj"
    with serving(store, page=7) as url:
        results = pull_source(f"mcp+{url}", _plan(project), all_skills=True)
    assert len(results) == len(repos)
    for name, repo in repos.items():
        assert files_of(project / ".agents/skills" / name) == oracle(store, repo, tmp_path), name


def test_frozen_install_refuses_a_changed_digest_and_update_shows_it(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    with FakeSkillsServer("honest") as fake:
        (result,) = pull_source(f"mcp+{fake.url}", _plan(project), skills=[NAME])
        folder = project / ".agents/skills" / NAME
        assert files_of(folder)["scripts/run.sh"][1] == 0o755
        assert {p: (project / ".agents/skills" / NAME / p).read_bytes()
                for p in skill_files()} == skill_files()
        pinned = Lockfile.read(project / "skills.lock").entries[NAME]
        assert pinned.version == "1.0.0" and pinned.sha == result.sha
        fake.change()
        shutil.rmtree(folder)
        with pytest.raises(VersionNotFound, match=f"{NAME} from {fake.url} changed since"):
            install(project, stores=lambda name: get_store(Settings.from_env()), frozen=True)
        assert not folder.exists()
        assert Lockfile.read(project / "skills.lock").entries[NAME] == pinned
        (updated,) = update(project, NAME, stores=lambda name: get_store(Settings.from_env()))
    assert updated.status == "installed"  # its folder was gone
    assert (folder / "SKILL.md").read_bytes() == skill_files("2")["SKILL.md"]
    assert Lockfile.read(project / "skills.lock").entries[NAME].sha != pinned.sha


def test_pulling_again_keeps_the_pin_whole(tmp_path: Path) -> None:
    """An up-to-date pull rewrites the lock entry from what the server lists now."""
    from registry.install import mcp_source

    project = tmp_path / "proj"
    with FakeSkillsServer("honest") as fake:
        pull_source(f"mcp+{fake.url}", _plan(project), skills=[NAME])
        pinned = Lockfile.read(project / "skills.lock").entries[NAME]
        mcp_source.FETCHED.clear()  # as in a new process
        (again,) = pull_source(f"mcp+{fake.url}", _plan(project), skills=[NAME])
        reads = fake.reads
    assert again.status == "up-to-date" and reads == len(skill_files())  # no file read again
    assert Lockfile.read(project / "skills.lock").entries[NAME] == pinned


def test_update_lists_the_changed_file(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    with FakeSkillsServer("honest") as fake:
        pull_source(f"mcp+{fake.url}", _plan(project), skills=[NAME])
        fake.change()
        (updated,) = update(project, NAME, stores=lambda name: get_store(Settings.from_env()))
    assert updated.status == "updated" and updated.changed == ["~ SKILL.md"]


LIES = {
    "digest": "hash to",
    "outside": "not a file inside the skill|a path outside the skill",
    "foreign": "not a file inside the skill",
    "huge": "too large|max",
    "flood": "more than|bytes for SKILL.md|max",
    "endless": "without end",
    "drip": "did not answer resources/read within",
    "claims": "names the repo 'evil/honest-skill'.*under fake/honest-skill",
}


@pytest.mark.parametrize("mode", sorted(LIES))
def test_a_lying_server_is_refused_and_nothing_installed(
        mode: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if mode == "drip":  # the server drips forever: any deadline is passed
        monkeypatch.setenv("HUBSKILLS_MCP_TIMEOUT", "5")
    limits = SizeLimits(max_file_bytes=256 * 1024) if mode == "flood" else SizeLimits()
    project = tmp_path / "proj"
    with FakeSkillsServer(mode) as fake:
        with pytest.raises(UnsafeSkill) as err:
            pull_source(f"mcp+{fake.url}#{NAME}", _plan(project, limits=limits))
    assert fake.url in err.value.message
    assert err.value.hint is not None and "nothing was installed" in err.value.hint
    import re

    assert re.search(LIES[mode], err.value.message), err.value.message
    nothing_installed(project)


def test_a_dynamic_manifest_is_refused(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    with FakeSkillsServer("dynamic") as fake, pytest.raises(UnsafeSkill) as err:
        pull_source(f"mcp+{fake.url}#{NAME}", _plan(project))
    assert "dynamic manifest" in err.value.message and fake.url in err.value.message
    nothing_installed(project)


def test_stdio_server_by_command_and_a_lockfile_cannot_run_one(tmp_path: Path) -> None:
    """`pull 'mcp+stdio:...'` typed by the user runs the command; `install` from a lock runs
    it again only once the user typed it (a cloned project's lock runs nothing)."""
    project, home = tmp_path / "proj", tmp_path / "hubskills-home"
    project.mkdir()
    env = {**os.environ, "HUBSKILLS_HOME": str(home), "PYTHONPATH": str(ROOT),
           "HUBSKILLS_REGISTRY": "local"}
    command = f"mcp+stdio:{sys.executable} -m registry.cli mcp"

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "registry.cli", *args, "--project",
                               str(project)], env=env, cwd=ROOT, capture_output=True,
                              text=True, timeout=240)

    done = cli("pull", command, "--skill", "agent-skill-md")
    assert done.returncode == 0, done.stderr
    store = get_store(Settings.from_env())
    assert files_of(project / ".agents/skills/agent-skill-md") == oracle(
        store, "hubskills/agent-skill-md", tmp_path)
    entry = Lockfile.read(project / "skills.lock").entries["agent-skill-md"]
    assert entry.repo == f"{parse_mcp(command).key}#agent-skill-md"
    shutil.rmtree(project / ".agents/skills/agent-skill-md")
    assert cli("install", "--frozen").returncode == 0  # typed before: it may run again
    (home / "mcp-commands.json").unlink()
    shutil.rmtree(project / ".agents/skills/agent-skill-md")
    refused = cli("install", "--frozen")
    assert refused.returncode == 1
    assert "only once you typed it yourself" in refused.stderr
    assert "Traceback" not in refused.stderr
    assert not (project / ".agents/skills/agent-skill-md").exists()


@pytest.mark.parametrize("text", ["mcp+ftp://host/mcp", "mcp+stdio:", "mcp+http://",
                                  "mcp+https://host/mcp#Not_A_Name", "mcp+stdio:'unclosed"])
def test_bad_mcp_sources_are_refused(text: str) -> None:
    with pytest.raises(HubskillsError) as err:
        parse_mcp(text)
    assert err.value.hint and "mcp+" in err.value.hint


def test_source_forms() -> None:
    http = parse_mcp("mcp+https://host:8443/mcp#csv-cleaning")
    assert (http.server, http.skill, http.stdio) == ("https://host:8443/mcp", "csv-cleaning",
                                                     False)
    stdio = parse_mcp("mcp+stdio:hubskills  mcp --registry 'hub'")
    assert stdio.command == ["hubskills", "mcp", "--registry", "hub"]
    assert stdio.key == "mcp+stdio:hubskills mcp --registry hub"
    assert json.loads(json.dumps(stdio.at("x").key)).endswith("#x")


@pytest.mark.parametrize("mode", ["at-once", "after-initialize"])
def test_a_flooding_stdio_server_is_refused_and_nothing_installed(mode: str,
                                                                  tmp_path: Path) -> None:
    """A stdio server's output is held to the same cap as an HTTP response: one that prints
    without end, in `initialize` or in `skills/list`, is stopped there (not when the request's
    deadline passes, nor when memory runs out) and named."""
    from registry.install.mcp_session import cap_of

    limits = SizeLimits(max_file_bytes=64 * 1024)
    project = tmp_path / "proj"
    script = ROOT / "tests" / "fakes" / "mcp_stdio_flood.py"
    source = f"mcp+stdio:{sys.executable} {script} {mode}"
    trust_command(parse_mcp(source))  # typed by the user, as `hubskills pull` records it
    with pytest.raises(UnsafeSkill) as err:
        pull_source(f"{source}#{NAME}", _plan(project, limits=limits))
    assert f"{sys.executable} {script} {mode}" in err.value.message
    # the listing is read under the store's caps (the pull's own apply to its files)
    assert f"more than {cap_of(STORE_LIMITS)} bytes" in err.value.message, err.value.message
    assert err.value.hint is not None and "nothing was installed" in err.value.hint
    nothing_installed(project)


def test_a_listing_that_floods_page_by_page_is_refused(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Each response is capped, but a listing is many: a red-team server sent pages just
    under the cap (121 MiB at the default caps), each a junk entry, with a new cursor each
    time, and the pull kept every page in memory up to `MAX_PAGES` (1,000 of them: over
    100 GiB) before looking for the skill. The listing as a whole is held to
    `MAX_LISTING_BYTES` now, named as a flood, and nothing is installed."""
    from registry.install import mcp_source
    from tests.fakes.mcp_skills_server import BLOAT_BYTES, BLOAT_PAGES

    monkeypatch.setattr(mcp_source, "MAX_LISTING_BYTES", 4 * BLOAT_BYTES, raising=False)
    project = tmp_path / "proj"
    with FakeSkillsServer("bloat") as fake:
        with pytest.raises(UnsafeSkill) as err:
            pull_source(f"mcp+{fake.url}#{NAME}", _plan(project))
        assert fake.pages <= 5 < BLOAT_PAGES, fake.pages  # stopped as the budget ran out
    assert fake.url in err.value.message and "skills/list" in err.value.message
    assert "bytes" in err.value.message, err.value.message
    assert err.value.hint is not None and "nothing was installed" in err.value.hint
    nothing_installed(project)


def test_a_listing_keeps_only_what_a_pull_reads(tmp_path: Path) -> None:
    """What the store keeps of a listing is the entries' URIs, manifests and hubskills'
    `_meta`: a server's frontmatter (here 512 KiB a page) and unknown keys are dropped page by
    page (the budget counts them as they arrive, memory keeps none of them)."""
    from registry.install.mcp_store import McpStore
    from tests.fakes.mcp_skills_server import BLOAT_PAGES

    with FakeSkillsServer("bloat") as fake:
        store = McpStore(fake.url)
        try:
            assert NAME in store.skills(parse_mcp(f"mcp+{fake.url}"), "")
            kept = store._list()
        finally:
            store.close()
    assert len(kept) == BLOAT_PAGES
    assert all(set(entry) <= {"uri", "resources", "_meta"} for entry in kept), kept[0]
    assert sum(len(json.dumps(entry)) for entry in kept) < 10_000
