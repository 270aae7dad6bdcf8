"""An MCP server that asks for a credential: `pull mcp+https://bob:pw@host/mcp` (or `?token=`).

The lock and the install marker, which a project commits, record the server without the
credential; the URL as typed is kept per user in `HUBSKILLS_HOME/mcp-credentials.json` (0600),
and every later session with that server (`install`, `update`, another `pull`, `info`) connects
with it. The server is the fake of `tests/fakes/mcp_skills_server.py` requiring a password
(Basic auth or `?token=`) over real HTTP, asked through the SDK's client; the commands run
in-process through the CLI, so what they print is what a user sees.
"""

from __future__ import annotations

import json
import shutil
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

pytest.importorskip("mcp")

from registry.cli import main  # noqa: E402
from registry.credentials import credential_free, names_credential
from registry.errors import HubskillsError  # noqa: E402
from registry.install.lockfile import MARKER_FILE, Lockfile  # noqa: E402
from registry.install.mcp_source import connect_url, parse_mcp  # noqa: E402
from registry.secrets import MASK, scrub  # noqa: E402
from tests.fakes.mcp_skills_server import NAME, FakeSkillsServer  # noqa: E402

pytestmark = pytest.mark.timeout(300)
PASSWORD = "Opensesame42"  # long enough for the scrubber to mask it anywhere
SHORT = "pw4"  # too short to mask in all text: only never written is safe


@pytest.fixture
def hubskills(capsys: pytest.CaptureFixture[str]) -> Callable[..., tuple[int, str]]:
    """`hubskills ARGS [--project PROJECT]` through `main`, as a user runs it: its exit code
    and all it printed, stdout and stderr."""

    def run(project: Path | None, *args: str) -> tuple[int, str]:
        if project is not None:
            project.mkdir(exist_ok=True)
        capsys.readouterr()
        with pytest.raises(SystemExit) as done:
            main([*args, *(["--project", str(project)] if project else [])])
            raise SystemExit(0)
        printed = capsys.readouterr()
        return int(done.value.code or 0), printed.out + printed.err

    return run


def committed(project: Path) -> str:
    """What a project commits of its MCP skill: the lock and the install marker."""
    return (project / "skills.lock").read_text() + \
        (project / ".agents" / "skills" / NAME / MARKER_FILE).read_text()


def kept(home: Path) -> dict[str, str]:
    return dict(json.loads((home / "mcp-credentials.json").read_text()))


@pytest.mark.parametrize("form", ["user", "token"])
def test_the_lock_records_the_server_without_the_credential_kept_per_user(
        tmp_path: Path, _isolated_env: Path, form: str, hubskills: Callable[..., tuple[int, str]]
) -> None:
    project, home = tmp_path / "proj", _isolated_env
    with FakeSkillsServer(password=PASSWORD) as fake:
        typed = (fake.url.replace("//", f"//bob:{PASSWORD}@") if form == "user"
                 else f"{fake.url}?v=2&token={PASSWORD}")
        server = fake.url if form == "user" else f"{fake.url}?v=2"  # other parameters kept
        code, out = hubskills(project, "pull", f"mcp+{typed}", "--skill", NAME,
                              "--agent", "agents")
        assert code == 0, out
        assert PASSWORD not in out and PASSWORD not in committed(project)
        entry = Lockfile.read(project / "skills.lock").entries[NAME]
        assert entry.repo == f"mcp+{server}#{NAME}" and entry.source is not None
        assert entry.source["server"] == server
        assert json.loads((project / ".agents/skills" / NAME / MARKER_FILE).read_text())[
            "repo"] == entry.repo
        path = home / "mcp-credentials.json"
        assert kept(home) == {server: typed}
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert not list(project.rglob("mcp-credentials.json"))
        assert scrub(f"a log quoting {typed}") == f"a log quoting {typed.replace(PASSWORD, MASK)}"

        # a clone of the project: install, update and verify-install reattach the credential
        shutil.rmtree(project / ".agents")
        code, out = hubskills(project, "install", "--frozen")
        assert code == 0, out
        assert (project / ".agents/skills" / NAME / "SKILL.md").is_file()
        assert hubskills(project, "verify-install")[0] == 0
        fake.change()
        code, out = hubskills(project, "update", NAME)
        assert code == 0, out
        assert "version 2" in (project / ".agents/skills" / NAME / "SKILL.md").read_text()
        code, out = hubskills(project, "pull", f"mcp+{server}", "--skill", NAME)  # as recorded
        assert code == 0, out
        assert PASSWORD not in committed(project)
        assert fake.credentials and set(fake.credentials) == {PASSWORD}  # never without it


def test_a_lock_naming_a_server_with_no_kept_credential_hints_the_pull(
        tmp_path: Path, _isolated_env: Path, hubskills: Callable[..., tuple[int, str]]) -> None:
    project = tmp_path / "proj"
    with FakeSkillsServer(password=SHORT) as fake:
        typed = fake.url.replace("//", f"//bob:{SHORT}@")
        code, out = hubskills(project, "pull", f"mcp+{typed}#{NAME}", "--agent", "agents")
        assert code == 0, out
        assert f"bob:{SHORT}" not in out + committed(project)
        shutil.rmtree(project / ".agents")
        (_isolated_env / "mcp-credentials.json").unlink()  # another user, the project cloned
        code, out = hubskills(project, "install")
        assert code == 1
        assert f"the MCP server {fake.url} refused the session (HTTP 401)" in out
        assert "none is kept for it" in out
        assert f"hubskills pull 'mcp+http://USER:PASSWORD@{fake.url.partition('//')[2]}'" \
            in " ".join(out.split())
        assert fake.credentials[-1] is None  # connected without one: the server refused
        assert not (project / ".agents/skills" / NAME).exists()


def test_a_refused_credential_is_not_kept_nor_shown(
        tmp_path: Path, _isolated_env: Path, hubskills: Callable[..., tuple[int, str]]) -> None:
    project = tmp_path / "proj"
    with FakeSkillsServer(password=PASSWORD) as fake:
        for wrong in ("Wrongpassword9", SHORT):
            code, out = hubskills(project, "pull",
                                  "mcp+" + fake.url.replace("//", f"//bob:{wrong}@"),
                                  "--skill", NAME, "--agent", "agents")
            assert code == 1
            assert "refused the session (HTTP 401): it does not take the credential" in out
            assert f"bob:{wrong}" not in out and "Wrongpassword9" not in out
        assert not (_isolated_env / "mcp-credentials.json").exists()
        assert not (project / "skills.lock").exists()


def test_info_and_scan_of_a_source_with_a_credential_show_it_nowhere(
        _isolated_env: Path, hubskills: Callable[..., tuple[int, str]]) -> None:
    with FakeSkillsServer(password=SHORT) as fake:
        typed = fake.url.replace("//", f"//bob:{SHORT}@")
        for command in ("info", "scan"):
            code, out = hubskills(None, command, f"mcp+{typed}#{NAME}")
            assert code == 0, out
            assert f"bob:{SHORT}" not in out and f":{SHORT}@" not in out, out
        assert kept(_isolated_env) == {fake.url: typed}
        code, out = hubskills(None, "info", f"mcp+{fake.url}#{NAME}")  # the one kept
        assert code == 0, out


def test_a_credential_over_plain_http_to_another_host_is_refused() -> None:
    for typed in ("mcp+http://bob:pw@skills.example.org/mcp",
                  "mcp+http://skills.example.org/mcp?token=abc123#x"):
        with pytest.raises(HubskillsError) as err:
            parse_mcp(typed)
        assert "unencrypted" in err.value.message
        assert "pw@" not in err.value.message and "abc123" not in err.value.message
        assert err.value.hint and "mcp+https://USER:PASSWORD@skills.example.org/mcp" \
            in err.value.hint
    for typed in ("mcp+https://bob:pw@skills.example.org/mcp",
                  "mcp+http://bob:pw@localhost:8765/mcp", "mcp+http://bob:pw@[::1]:8765/mcp"):
        source = parse_mcp(typed)
        assert "pw" not in source.key + repr(source) and source.typed in typed
    assert parse_mcp("mcp+http://skills.example.org/mcp").typed == ""  # none: as before


@pytest.mark.parametrize(("typed", "free"), [
    ("https://bob:pw@host/mcp", "https://host/mcp"),
    ("https://host:8443/mcp?v=2&api_key=x%20y&x=1", "https://host:8443/mcp?v=2&x=1"),
    ("https://ghp_abcdefghijklmnopqrstuvwxyz1234@host/mcp", "https://host/mcp"),
    ("https://host/mcp/sk-ant-abcdefghijklmnopqrstuv12/sse", "https://host/mcp/(credential)/sse"),
    ("https://u:p@[::1/x", ""),  # does not parse: nothing of it is kept
])
def test_credential_free(typed: str, free: str) -> None:
    assert names_credential(typed)
    assert credential_free(typed) == free
    assert not free or not names_credential(free)


def test_a_typed_credential_wins_over_the_one_kept(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "mcp-credentials.json").write_text(json.dumps(
        {"https://host/mcp": "https://old:one@host/mcp"}))
    assert connect_url(parse_mcp("mcp+https://host/mcp#x"), home) == "https://old:one@host/mcp"
    assert connect_url(parse_mcp("mcp+https://new:two@host/mcp"), home) \
        == "https://new:two@host/mcp"
    assert connect_url(parse_mcp("mcp+https://other/mcp"), home) == "https://other/mcp"
