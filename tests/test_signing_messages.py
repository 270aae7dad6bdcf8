"""What a signature refusal says, and what it asks next (a team lead's walk):

- a certificate-signed skill pulled where only keys are trusted said "no certificate is
  trusted here", read as "nothing is trusted": it names the keys and the root to add;
- `install --require-signed` refusing a lock with two unsigned skills hinted `hubskills remove`
  of the first only: the hint removes each;
- a skill pulled from a folder on this machine was told to be got "again from its publisher":
  the hint signs that folder again (or copies it again).
"""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

import pytest

from registry.errors import UnsafeSkill
from registry.install import install, pull
from registry.stores import LocalStore
from tests import test_signing
from tests.test_hostile_repos import skill_md
from tests.test_install import run_main
from tests.test_install_trust import keys, publish  # noqa: F401  (the keys fixture)
from tests.test_signing import NVIDIA_SUBJECT, copy_of, incoming, nothing_installed, trusted_key

pytest.importorskip("model_signing")

_held_clock = test_signing._held_clock  # the signing tests' clock (autouse), git server, project
server = test_signing.server
project = test_signing.project


def test_a_certificate_signature_where_only_keys_are_trusted_names_them_and_the_root(
        project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    trusted_key(tmp_path, capsys)  # "acme", a public key
    copy_of("mcore-linting-and-formatting", project)
    code, _, err = run_main(capsys, "pull", "./incoming/mcore-linting-and-formatting",
                            "--project", project)
    flat = " ".join(err.split())
    assert code == 1 and nothing_installed(project)
    assert (f"is signed by {NVIDIA_SUBJECT}, and no certificate is trusted here (only public "
            "keys: acme; a key vouches only for key signatures)") in flat
    assert ("Hint: hubskills trust add NAME ROOT.pem # the root certificate of "
            "CN=NVIDIA Agent Capabilities CA") in flat


def test_require_signed_removes_every_unsigned_skill_the_lock_pins(
        tmp_path: Path, keys: dict[str, Path], monkeypatch: pytest.MonkeyPatch):  # noqa: F811
    folder = tmp_path / "proj"
    (folder / ".claude").mkdir(parents=True)
    monkeypatch.delenv("HUBSKILLS_REQUIRE_SIGNED", raising=False)
    store = LocalStore(tmp_path / "store")
    for name in ("csv-clean", "agent-skill-md"):
        publish(store, tmp_path, f"acme/{name}", None)
        pull(f"acme/{name}", project=folder, store=store)
    with pytest.raises(UnsafeSkill) as refused:
        install(folder, stores=lambda _: store, require_signed=True)
    assert "pins 2 unsigned skills (agent-skill-md, csv-clean)" in refused.value.message
    loop = str(refused.value.hint).split("  #")[0]
    # the oracle: the hint, run by a shell with `hubskills` echoing, removes each
    done = subprocess.run(["bash", "-c", f"hubskills() {{ echo \"$@\"; }}; {loop}"],
                          capture_output=True, text=True, timeout=30, check=True)
    assert done.stdout.splitlines() == ["remove agent-skill-md", "remove csv-clean"]
    assert shlex.split(loop)  # one line a shell reads


def test_a_folder_that_fails_its_signature_is_told_to_be_signed_or_copied_again(
        project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    key = trusted_key(tmp_path, capsys)
    mine = incoming(project)
    assert run_main(capsys, "sign", mine, "--key", key)[0] == 0
    (mine / "SKILL.md").write_bytes(skill_md("acme-skill", body="Now do something else.\n"))
    code, _, err = run_main(capsys, "pull", "./incoming/acme-skill", "--project", project)
    flat = " ".join(err.split())
    assert code == 1 and "changed: SKILL.md" in flat and nothing_installed(project)
    assert "from its publisher" not in flat
    assert "Hint: hubskills sign ./incoming/acme-skill --key KEY" in flat
    assert "copy the folder again" in flat
