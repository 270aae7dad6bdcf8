"""Which trusted anchor vouched for a signature, and what `skills.lock` pins for it.

A red-team walk: two roots, both trusted, each issuing a signing certificate with the subject
`CN=Acme Skills Signing`. The pin compared subjects only, so a skill pinned to acme's
certificate, edited and re-signed under the other root, pulled again with `--force` with no
"signer changed", `verify-install` said ok, and `info` named whichever anchor's subject matched
an issuer first. Now a chain is verified against each trusted anchor alone, the one that holds
names the signature, and the pin is the subject and that anchor's certificate fingerprint.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from registry.config import Settings
from registry.format.skill import content_hash
from registry.signing import SIGNATURE_FILE, anchors, verify_folder
from registry.signing.status import signature_status
from tests import test_signing
from tests.test_hostile_repos import skill_md
from tests.test_install import run_main
from tests.test_signing import _cert, _write, incoming

_held_clock = test_signing._held_clock  # the signing tests' fixtures: their clock (autouse),
server = test_signing.server  # their git server and project
project = test_signing.project

SUBJECT = "CN=Acme Skills Signing"


def _fp(cert) -> str:
    from cryptography.hazmat.primitives import hashes

    return cert.fingerprint(hashes.SHA256()).hex()


def _two_roots(tmp_path: Path, capsys, subjects: tuple[str, str]):
    """Two roots (named `subjects`), both trusted, each with a signing certificate
    `CN=Acme Skills Signing`: {trust name: (root certificate, folder of its files)}."""
    from cryptography.hazmat.primitives.asymmetric import ec

    made = {}
    for name, subject in zip(("acme-root", "other-root"), subjects, strict=True):
        root_key, leaf_key = (ec.generate_private_key(ec.SECP256R1()) for _ in range(2))
        root = _cert(subject, subject, root_key, root_key, ca=True, days=(-1, 30))
        leaf = _cert("Acme Skills Signing", subject, leaf_key, root_key, ca=False,
                     days=(-1, 30))
        folder = tmp_path / name
        folder.mkdir()
        _write(folder / "root.pem", root)
        _write(folder / "leaf.pem", leaf)
        _write(folder / "leaf.key", leaf_key)
        assert run_main(capsys, "trust", "add", name, folder / "root.pem")[0] == 0
        made[name] = (root, folder)
    return made


@pytest.fixture
def two_roots(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    """The red team's two roots: `Acme Root` and `Other Root`."""
    return _two_roots(tmp_path, capsys, ("Acme Root", "Other Root"))


def _sign(capsys, skill: Path, with_: Path) -> None:
    code, _, err = run_main(capsys, "sign", skill, "--key", with_ / "leaf.key",
                            "--certificate", with_ / "leaf.pem", "--chain", with_ / "root.pem")
    assert code == 0, err


def test_another_trusted_root_cannot_sign_as_the_pinned_publisher(
        project: Path, two_roots, capsys: pytest.CaptureFixture[str]):
    (acme_root, acme), (_, other) = two_roots["acme-root"], two_roots["other-root"]
    mine = incoming(project)
    _sign(capsys, mine, acme)
    code, _, err = run_main(capsys, "pull", "./incoming/acme-skill", "--project", project)
    assert code == 0, err
    pinned = f"{SUBJECT}; root sha256:{_fp(acme_root)}"
    lock_path = project / "skills.lock"
    assert json.loads(lock_path.read_text())["skills"]["acme-skill"]["signer"] == pinned

    (mine / "SKILL.md").write_bytes(skill_md("acme-skill", body="Now do something else.\n"))
    _sign(capsys, mine, other)

    before = lock_path.read_text()
    code, _, err = run_main(capsys, "pull", "./incoming/acme-skill", "--force",
                            "--project", project)
    flat = " ".join(err.split())
    assert code == 1 and f"skills.lock pins {pinned} as the signer of acme-skill" in flat, flat
    assert "--accept-new-signer" in flat
    assert lock_path.read_text() == before

    # the same swap made by hand (a pull request's edit): verify-install and install see it
    folder = project / ".agents/skills/acme-skill"
    for name in ("SKILL.md", SIGNATURE_FILE):
        shutil.copy(mine / name, folder / name)
    data = json.loads(before)
    data["skills"]["acme-skill"]["content_hash"] = content_hash(folder)
    lock_path.write_text(json.dumps(data))
    code, out, _ = run_main(capsys, "verify-install", "--project", project, "--json")
    [audit] = json.loads(out)
    assert code == 1 and audit["state"] == "signer changed", audit
    code, _, err = run_main(capsys, "install", "--project", project)
    assert code == 1 and f"skills.lock pins {pinned}" in " ".join(err.split())


def test_a_lock_that_pinned_the_subject_alone_is_upgraded_on_the_next_pull(
        project: Path, two_roots, capsys: pytest.CaptureFixture[str]):
    acme_root, acme = two_roots["acme-root"]
    mine = incoming(project)
    _sign(capsys, mine, acme)
    assert run_main(capsys, "pull", "./incoming/acme-skill", "--project", project)[0] == 0
    lock_path = project / "skills.lock"
    data = json.loads(lock_path.read_text())
    data["skills"]["acme-skill"]["signer"] = SUBJECT  # as hubskills wrote it before
    lock_path.write_text(json.dumps(data))
    code, out, _ = run_main(capsys, "verify-install", "--project", project, "--json")
    assert code == 0 and json.loads(out)[0]["state"] == "ok"  # read as before
    (mine / "SKILL.md").write_bytes(skill_md("acme-skill", body="Version two.\n"))
    _sign(capsys, mine, acme)
    code, out, err = run_main(capsys, "pull", "./incoming/acme-skill", "--force",
                              "--project", project)
    assert code == 0, err
    pinned = f"{SUBJECT}; root sha256:{_fp(acme_root)}"
    said = " ".join((out + err).split())
    assert f"acme-skill by its subject alone ({SUBJECT}); now pinned with the root" in said
    assert json.loads(lock_path.read_text())["skills"]["acme-skill"]["signer"] == pinned


def test_key_mode_pins_the_key_fingerprint(project: Path, tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]):
    from cryptography.hazmat.primitives import serialization

    from registry.signing.trust import key_fingerprint

    key = tmp_path / "acme.key"
    assert run_main(capsys, "keys", "new", key)[0] == 0
    assert run_main(capsys, "trust", "add", "acme", f"{key}.pub")[0] == 0
    mine = incoming(project)
    assert run_main(capsys, "sign", mine, "--key", key)[0] == 0
    assert run_main(capsys, "pull", "./incoming/acme-skill", "--project", project)[0] == 0
    public = serialization.load_pem_public_key(Path(f"{key}.pub").read_bytes())
    entry = json.loads((project / "skills.lock").read_text())["skills"]["acme-skill"]
    assert entry["signer"] == key_fingerprint(public)


def test_the_anchor_named_is_the_one_that_verified_the_chain(
        project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    """A root renewed under the same name (both trusted): the anchor was guessed by issuer name,
    the first match, and the chain checked against both at once, where OpenSSL took the first
    `CN=Acme Root` it held and refused a signature made under the other."""
    roots = _two_roots(tmp_path, capsys, ("Acme Root", "Acme Root"))
    for name, (root, folder) in roots.items():
        mine = incoming(project, f"skill-{name}")
        _sign(capsys, mine, folder)
        signed = verify_folder(mine, anchors(Settings.from_env().home), name=mine.name)
        assert signed is not None and signed.anchor == name
        assert signed.signer == f"{SUBJECT}; root sha256:{_fp(root)}"
        status = signature_status(mine, anchors(Settings.from_env().home), name=mine.name)
        assert status.label() == f"signed by {SUBJECT} (trusted: {name})"
