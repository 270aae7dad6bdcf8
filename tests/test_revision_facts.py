"""What the registry shows of a published skill beyond its instructions: signed (by whom),
unsigned or signature invalid, and the publisher's own claims (skill-card.md, BENCHMARK.md), in
`info`, `search --json` and the Space's skill page; read once per revision.

The oracle is NVIDIA's signed fixtures (tests/fixtures/nvidia) and keys made here."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from registry.config import Settings
from registry.registries import get_store
from registry.signing import _chain, new_key_pair, sign_folder
from registry.signing.status import signature_status
from registry.signing.trust import parse_anchor
from registry.stores import revision_facts as facts_module
from registry.stores.revision_facts import revision_facts
from tests.test_install import run_main
from tests.test_signing import CLOCK


@pytest.fixture(autouse=True)
def _held_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """NVIDIA's fixtures read as signed and valid on any date (`test_signing.CLOCK`)."""
    monkeypatch.setattr(_chain, "_now", lambda: CLOCK)

pytest.importorskip("model_signing")

FIXTURES = Path(__file__).parent / "fixtures" / "nvidia"
ROOT_CERT = FIXTURES / "nv-agent-root-cert.pem"
SIGNER = "CN=NVIDIA Agent Skills Signing 001,O=NVIDIA Corporation,C=US"
ROOT = "CN=NVIDIA Agent Capabilities CA,O=NVIDIA Corporation,C=US"
NAME = "jetson-set-target"


def _root_anchor():
    return parse_anchor("nvidia", ROOT_CERT.read_bytes(), ROOT_CERT)


def _copy(tmp_path: Path, name: str = NAME) -> Path:
    return Path(shutil.copytree(FIXTURES / name, tmp_path / "copies" / name))


def test_signed_by_the_certificate_trusted_or_not() -> None:
    alone = signature_status(FIXTURES / NAME, [], name=NAME)
    assert (alone.status, alone.signer, alone.root, alone.checked) == ("signed", SIGNER, ROOT,
                                                                       True)
    assert alone.trusted_by is None and alone.label() == (f"signed by {SIGNER} (not trusted "
                                                          f"here; root {ROOT})")
    trusted = signature_status(FIXTURES / NAME, [_root_anchor()], name=NAME)
    assert (trusted.trusted_by, trusted.label()) == ("nvidia", f"signed by {SIGNER} "
                                                               "(trusted: nvidia)")


@pytest.mark.parametrize("tamper, reason", [
    (lambda d: (d / "SKILL.md").write_bytes((d / "SKILL.md").read_bytes() + b" "),
     "changed: SKILL.md"),
    (lambda d: (d / "extra.md").write_text("later\n"), "added after signing: extra.md"),
    (lambda d: (d / "BENCHMARK.md").unlink(), "missing: BENCHMARK.md"),
    (lambda d: shutil.copy(FIXTURES / "tao-list-capabilities/skill.oms.sig", d),
     "not match"),
    (lambda d: (d / "skill.oms.sig").write_text("{not json"), "is malformed"),
])
def test_a_tampered_folder_is_invalid_naming_why(tmp_path: Path, tamper, reason: str) -> None:
    folder = _copy(tmp_path)
    tamper(folder)
    for trusted in ([], [_root_anchor()]):  # the same verdict, trusted or not
        status = signature_status(folder, trusted, name=NAME)
        assert status.status == "invalid" and reason in status.reason
        assert status.label().startswith("signature invalid: ")


def test_unsigned_and_key_mode(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    (folder / "skill.oms.sig").unlink()
    assert signature_status(folder, [], name=NAME).label() == "unsigned"
    pair = new_key_pair(tmp_path / "k.key")
    sign_folder(folder, key=pair.private)
    unknown = signature_status(folder, [], name=NAME)
    assert (unknown.status, unknown.mode, unknown.checked) == ("signed", "key", False)
    assert "not checked: no trusted key" in unknown.label()
    anchor = parse_anchor("acme", pair.public.read_bytes(), pair.public)
    known = signature_status(folder, [anchor], name=NAME)
    assert (known.signer, known.trusted_by, known.checked) == (pair.fingerprint, "acme", True)
    (folder / "SKILL.md").write_text("changed\n")
    assert "changed: SKILL.md" in signature_status(folder, [anchor], name=NAME).reason


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HUBSKILLS_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("HUBSKILLS_REGISTRY", "local")
    facts_module._MEMORY.clear()
    return tmp_path / "home"


def _published(home: Path, tmp_path: Path) -> tuple[object, str]:
    store = get_store(Settings.from_env(), "local")
    (tmp_path / "bare").mkdir()
    bare = tmp_path / "bare" / "plain-skill"
    bare.mkdir()
    (bare / "SKILL.md").write_text("---\nname: plain-skill\ndescription: A plain skill for "
                                   "tests. Use when testing.\n---\n\nDo it.\n")
    store.publish(bare, repo="acme/plain-skill", version="1.0.0")
    return store, store.publish(_copy(tmp_path), repo=f"nvidia/{NAME}", version="1.0.0").sha


def test_facts_are_read_once_per_revision_and_keyed_by_trust(home: Path, tmp_path: Path):
    store, sha = _published(home, tmp_path)
    first = revision_facts(store, f"nvidia/{NAME}", home=home, version="1.0.0")
    assert first.signature.signer == SIGNER and first.signature.trusted_by is None
    assert list(first.claims) == ["skill-card.md", "BENCHMARK.md"]
    assert first.claims["skill-card.md"] == (FIXTURES / NAME / "skill-card.md").read_text()
    revision = store.root / "skills" / "nvidia" / NAME / "revisions" / sha
    shutil.rmtree(revision / "files")  # a second read would now fail: the answer is kept
    facts_module._MEMORY.clear()  # ... on disk, for the next process too
    assert revision_facts(store, f"nvidia/{NAME}", home=home, version="1.0.0") == first
    assert revision_facts(store, f"nvidia/{NAME}", home=home, sha=sha) == first
    shutil.copytree(FIXTURES / NAME, revision / "files")
    (home / "trust").mkdir(parents=True)
    shutil.copy(ROOT_CERT, home / "trust" / "nvidia.pem")  # another trust store: read again
    again = revision_facts(store, f"nvidia/{NAME}", home=home, version="1.0.0")
    assert again.signature.trusted_by == "nvidia"


def test_info_and_search_json_say_who_signed_and_whose_claims(
        home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    _published(home, tmp_path)
    code, out, err = run_main(capsys, "info", f"nvidia/{NAME}")
    assert code == 0, err
    text = " ".join(out.split())
    assert f"signature: signed by {SIGNER} (not trusted here" in text
    assert "Publisher's claims (skill-card.md, BENCHMARK.md)" in text
    assert "not measured or checked by hubskills" in text
    assert text.index("No evaluation results yet.") < text.index("Publisher's claims")
    code, out, _ = run_main(capsys, "info", f"nvidia/{NAME}", "--json")
    data = json.loads(out)
    assert data["signature"]["status"] == "signed" and data["signature"]["signer"] == SIGNER
    assert set(data["publisher_claims"]["files"]) == {"skill-card.md", "BENCHMARK.md"}
    assert "not measured" in data["publisher_claims"]["label"]
    code, out, _ = run_main(capsys, "search", "--json")
    shown = {d["repo"]: d["signature"] for d in json.loads(out)}
    assert shown[f"nvidia/{NAME}"]["signer"] == SIGNER
    assert shown["acme/plain-skill"] == {**shown["acme/plain-skill"], "status": "unsigned",
                                         "label": "unsigned"}
    code, out, _ = run_main(capsys, "info", "acme/plain-skill")
    assert "signature: unsigned" in out and "Publisher's claims" not in out


def test_a_claim_cannot_drive_the_terminal(home: Path, tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]):
    store = get_store(Settings.from_env(), "local")
    folder = tmp_path / "loud"
    folder.mkdir()
    (folder / "SKILL.md").write_text("---\nname: loud\ndescription: Loud skill for tests. Use "
                                     "when testing.\n---\n\nDo it.\n")
    (folder / "BENCHMARK.md").write_text("score \x1b[2J\x1b]0;pwned\x07 100% [bold]x[/bold]\n")
    store.publish(folder, repo="acme/loud", version="1.0.0")
    code, out, _ = run_main(capsys, "info", "acme/loud")
    assert code == 0 and "\x1b" not in out and "\x07" not in out
    assert "score [2J]0;pwned 100% [bold]x[/bold]" in out


def test_the_space_skill_page_shows_signer_and_sanitised_claims(home: Path, tmp_path: Path):
    pytest.importorskip("gradio")
    from space import build_demo
    from space.skill_data import skill_page

    folder = _copy(tmp_path)
    card = folder / "skill-card.md"
    card.write_text("# Owner\n\nNVIDIA <form id=steal><input name=token></form>"
                    "<script>alert(1)</script>\n")  # breaks the signature too
    demo = build_demo(Settings.from_env({"HUBSKILLS_HOME": str(home), "HF_HUB_OFFLINE": "1"}),
                      on_space=False)
    state = demo.hubskills_state
    state.store.publish(folder, repo=f"nvidia/{NAME}", version="1.0.0")
    state.invalidate()
    page = skill_page(state, f"nvidia/{NAME}")
    assert "Signature:" in page.header and "signature invalid" in page.header
    assert "changed: skill-card.md" in page.header
    assert "<h2>Publisher&#39;s claims</h2>" in page.claims or \
        "<h2>Publisher's claims</h2>" in page.claims
    assert "not measured or checked by hubskills" in page.claims
    assert "<h3>Owner</h3>" in page.claims  # demoted under the page's h2
    assert "<form" not in page.claims and "<input" not in page.claims
    assert "<script" not in page.claims and "alert(1)" not in page.claims
    demo.close()


def test_info_of_a_pulled_folder_and_of_a_git_source_shows_the_signer(
        home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch):
    from tests.fakes.git_server import GitServer, commit_tree

    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    (tmp_path / "user").mkdir()
    project = tmp_path / "proj"
    (project / ".claude").mkdir(parents=True)
    assert run_main(capsys, "trust", "add", "nvidia", ROOT_CERT)[0] == 0
    assert run_main(capsys, "pull", str(_copy(tmp_path)), "--project", project)[0] == 0
    pulled = project / ".agents" / "skills" / NAME
    code, out, err = run_main(capsys, "info", pulled)  # its install marker is left out
    assert code == 0, err
    assert f"signature: signed by {SIGNER} (trusted: nvidia)" in " ".join(out.split())
    assert "no published version of a skill in the local registry" in " ".join(err.split())
    (pulled / "SKILL.md").write_text((pulled / "SKILL.md").read_text() + "Changed later.\n")
    code, out, _ = run_main(capsys, "info", pulled, "--json")
    data = json.loads(out)
    assert data["published"] is False and data["signature"]["status"] == "invalid"
    assert "changed: SKILL.md" in data["signature"]["reason"]
    with GitServer(tmp_path / "git") as server:
        monkeypatch.setenv("HUBSKILLS_GITHUB_URL", server.url)
        tree = {f"skills/{NAME}/{p.relative_to(FIXTURES / NAME).as_posix()}": p.read_bytes()
                for p in sorted((FIXTURES / NAME).rglob("*")) if p.is_file()}
        commit_tree(server.repo("nvidia/skills.git"), tree, tag="v1")
        code, out, err = run_main(capsys, "info", f"github:nvidia/skills/skills/{NAME}@v1",
                                  "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["signature"]["trusted_by"] == "nvidia" and data["signature"]["signer"] == SIGNER
    assert set(data["publisher_claims"]["files"]) == {"skill-card.md", "BENCHMARK.md"}


@pytest.mark.timeout(120)
def test_a_folders_facts_and_a_teachers_view_never_follow_its_links(tmp_path: Path) -> None:
    """`info ./folder` copied a link to /dev/zero until the disk filled, and `generate
    --improve` sent the file a link named to the teacher (a red-team walk): links are kept as
    links, or left out, never read."""
    import os

    from registry.generate.suite import skill_text
    from registry.stores.revision_facts import folder_facts

    folder = tmp_path / "linked"
    (folder / "references").mkdir(parents=True)
    (folder / "SKILL.md").write_text('---\nname: linked\ndescription: "A skill. Use when '
                                     'testing."\n---\n\nRead references/notes.md.\n')
    secret = tmp_path / "secret.txt"
    secret.write_text("HOST-SECRET-1234\n")
    os.symlink(secret, folder / "references" / "notes.md")
    os.symlink("/dev/zero", folder / "data.bin")
    assert folder_facts(folder).signature.label() == "unsigned"
    assert "HOST-SECRET" not in skill_text(folder)
