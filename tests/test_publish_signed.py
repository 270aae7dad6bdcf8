"""`publish --sign`: the published revision carries a skill.oms.sig over exactly its files
(key and certificate modes), which round-trips through the local registry and the fake Hub
(publish, pull back) and verifies with `model_signing`'s own command-line tool, the second
oracle besides hubskills' pull."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from registry.signing import SIGNATURE_FILE
from registry.signing.verify import MAX_SIGNATURE_BYTES
from tests.fakes.hub_server import FakeHub
from tests.hub_setup import require_online
from tests.test_hostile_repos import skill_md
from tests.test_install import run_main
from tests.test_signing import _ca_and_leaf

pytest.importorskip("model_signing")


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HUBSKILLS_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    (tmp_path / "user").mkdir()
    (tmp_path / "proj" / ".claude").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "proj")
    return tmp_path


def _skill(root: Path, name: str = "acme-tool") -> Path:
    folder = root / "src" / name
    (folder / "scripts").mkdir(parents=True)
    (folder / "SKILL.md").write_bytes(skill_md(name, extra='metadata:\n  version: "1.0.0"\n'))
    (folder / "scripts" / "run.sh").write_text("echo hi\n")
    (folder / "scripts" / "run.sh").chmod(0o755)
    (folder / ".DS_Store").write_bytes(b"noise, never published")  # must not be signed
    return folder


def _model_signing(*args: str | Path) -> str:
    done = subprocess.run([sys.executable, "-m", "model_signing", "verify", *map(str, args)],
                          capture_output=True, text=True, timeout=300)
    return done.stdout + done.stderr


def _pulled(env: Path, capsys: pytest.CaptureFixture[str], ref: str, *extra: str) -> Path:
    code, _, err = run_main(capsys, "pull", ref, "--project", env / "proj", *extra)
    assert code == 0, err
    folder = env / "proj" / ".agents" / "skills" / ref.split("/")[-1].split("@")[0]
    assert (folder / SIGNATURE_FILE).is_file()
    return folder


def _verify_key(folder: Path, public: Path) -> str:
    """model_signing's CLI over what pull installed; the install marker is hubskills' own."""
    return _model_signing("key", folder, "--signature", folder / SIGNATURE_FILE, "--public_key",
                          public, "--ignore-paths", folder / ".hubskills.json")


def test_key_mode_round_trips_through_the_local_registry(env: Path,
                                                         capsys: pytest.CaptureFixture[str]):
    key = env / "acme.key"
    assert run_main(capsys, "keys", "new", key)[0] == 0
    folder = _skill(env)
    code, out, err = run_main(capsys, "publish", folder, "--sign", "--key", key, "--force",
                              "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["signature"]["status"] == "signed" and data["signature"]["mode"] == "key"
    assert SIGNATURE_FILE in data["plan"]["files"]
    assert (folder / SIGNATURE_FILE).is_file()  # the folder is the published revision
    code, out, _ = run_main(capsys, "info", "local/acme-tool", "--json")
    assert json.loads(out)["signature"]["status"] == "signed"
    assert run_main(capsys, "pull", "local/acme-tool", "--project", env / "proj")[0] == 1
    assert run_main(capsys, "trust", "add", "acme", f"{key}.pub")[0] == 0
    pulled = _pulled(env, capsys, "local/acme-tool")
    assert not (pulled / ".DS_Store").exists()
    assert "Verification succeeded" in _verify_key(pulled, Path(f"{key}.pub"))
    assert "Verification succeeded" in _model_signing(
        "key", folder, "--signature", folder / SIGNATURE_FILE, "--public_key", f"{key}.pub",
        "--ignore-paths", folder / ".DS_Store")


def test_certificate_mode_round_trips_and_the_card_says_who(env: Path,
                                                            capsys: pytest.CaptureFixture[str]):
    ca, leaf, key = _ca_and_leaf(env)
    folder = _skill(env, "acme-cert")
    code, out, err = run_main(capsys, "publish", folder, "--sign", "--key", key,
                              "--certificate", leaf, "--chain", ca, "--force")
    assert code == 0, err
    assert "signature certificate mode, signer CN=Acme Skills Signing" in " ".join(out.split())
    card = next((env / "home" / "registry" / "skills").glob("*/acme-cert/README.md")).read_text()
    assert "## Signature" in card, card
    assert "signed by CN=Acme Skills Signing" in card
    assert "not that they are safe" in card
    assert run_main(capsys, "trust", "add", "acme-root", ca)[0] == 0
    pulled = _pulled(env, capsys, "local/acme-cert")
    said = _model_signing("certificate", pulled, "--signature", pulled / SIGNATURE_FILE,
                          "--certificate_chain", ca, "--ignore-paths", pulled / ".hubskills.json")
    assert "Verification succeeded" in said, said
    (pulled / "SKILL.md").write_bytes(b"changed")  # the oracle itself can say no
    assert "Verification failed" in _model_signing(
        "certificate", pulled, "--signature", pulled / SIGNATURE_FILE, "--certificate_chain", ca,
        "--ignore-paths", pulled / ".hubskills.json")
    # signed again as it was signed: with its certificate (a walk: the note named --key alone)
    with (folder / "SKILL.md").open("a") as body:
        body.write("\nOne more line.\n")
    code, out, _ = run_main(capsys, "validate", folder)
    assert f"hubskills publish {folder} --sign --key KEY --certificate CERT.pem --chain CA.pem" \
        in " ".join(out.split()), out


def test_key_mode_round_trips_through_the_fake_hub(env: Path, capsys: pytest.CaptureFixture[str],
                                                   monkeypatch: pytest.MonkeyPatch):
    require_online()
    key = env / "acme.key"
    assert run_main(capsys, "keys", "new", key)[0] == 0
    assert run_main(capsys, "trust", "add", "acme", f"{key}.pub")[0] == 0
    with FakeHub() as hub:
        monkeypatch.setenv("HF_HUB_OFFLINE", "0")
        monkeypatch.setenv("HF_ENDPOINT", hub.url)
        monkeypatch.setenv("HF_TOKEN", hub.token)
        monkeypatch.setenv("HUBSKILLS_REGISTRY", "hub")
        folder = _skill(env, "hub-tool")
        code, _, err = run_main(capsys, "publish", folder, "--sign", "--key", key, "--force",
                                "--repo", "tester/hub-tool")
        assert code == 0, err
        pulled = _pulled(env, capsys, "tester/hub-tool@v1.0.0")
        code, out, _ = run_main(capsys, "search", "--json")
    assert "Verification succeeded" in _verify_key(pulled, Path(f"{key}.pub"))
    shown = {d["repo"]: d["signature"] for d in json.loads(out)}
    assert shown["tester/hub-tool"]["trusted_by"] == "acme"


def test_sign_options_are_checked_before_anything_is_written(env: Path,
                                                             capsys: pytest.CaptureFixture[str]):
    folder = _skill(env)
    code, _, err = run_main(capsys, "publish", folder, "--sign", "--key", env / "nothing.key")
    assert code == 1 and "--key" in err and "no such file" in err and "keys new" in err
    key = env / "acme.key"
    assert run_main(capsys, "keys", "new", key)[0] == 0
    code, _, err = run_main(capsys, "publish", folder, "--key", key)
    assert code == 2 and "add --sign" in err
    code, _, err = run_main(capsys, "publish", folder, "--sign")
    assert code == 2 and "--sign needs --key" in err
    code, _, err = run_main(capsys, "publish", folder, "--sign", "--key", key, "--with-run",
                            "20261122-103000-a1b2c3")
    assert code == 1 and "cannot attach --with-run" in err and "Traceback" not in err
    code, _, err = run_main(capsys, "publish", folder, "--sign", "--key", key, "--force",
                            "--dry-run")
    assert code == 0, err
    assert not (folder / SIGNATURE_FILE).exists()  # a dry run writes nothing
    code, _, err = run_main(capsys, "publish", folder, "--sign", "--key", f"{key}.pub",
                            "--force")
    assert code == 1 and "Traceback" not in err  # a public key cannot sign
    assert not (folder / SIGNATURE_FILE).exists()
    code, _, _ = run_main(capsys, "info", "local/acme-tool")
    assert code == 1  # nothing was published


def test_a_folder_changed_since_it_was_signed_is_refused_before_anything_is_published(
        env: Path, capsys: pytest.CaptureFixture[str]):
    """Signed, then edited: every pull of that version would refuse it, and a version cannot
    be published twice, so publish refuses first (a walk published one: `info` then said
    'signature invalid' and no pull took it). Also a signature over a file publish leaves
    out (`hubskills sign` signs every file, `.DS_Store` too)."""
    key = env / "acme.key"
    assert run_main(capsys, "keys", "new", key)[0] == 0
    folder = _skill(env)
    assert run_main(capsys, "sign", folder, "--key", key)[0] == 0
    code, _, err = run_main(capsys, "publish", folder, "--force", "--dry-run")
    assert code == 1 and "signed, but never published: .DS_Store" in err, err
    (folder / ".DS_Store").unlink()
    assert run_main(capsys, "sign", folder, "--key", key)[0] == 0
    (folder / ".DS_Store").write_bytes(b"noise again, never signed or published")
    assert run_main(capsys, "publish", folder, "--force", "--dry-run")[0] == 0
    with (folder / "SKILL.md").open("a") as body:
        body.write("\nOne more line.\n")
    # validate and eval say so first (a walk: both stayed green, and so did the CI gate)
    code, out, _ = run_main(capsys, "validate", folder)
    assert code == 0 and "stale-signature" in out, out
    assert "the files changed since skill.oms.sig was made" in " ".join(out.split())
    from registry.publishing.checks import refusal

    assert "stale-signature" in (refusal(folder) or "")  # eval's "publish would refuse"
    code, _, err = run_main(capsys, "publish", folder, "--force")
    said = " ".join(err.split())
    assert code == 1 and "the files changed since skill.oms.sig was made (changed: SKILL.md)" \
        in said, err
    assert f"Hint: hubskills publish {folder} --sign --key KEY" in said
    assert run_main(capsys, "info", "local/acme-tool")[0] == 1  # nothing was published
    code, _, err = run_main(capsys, "publish", folder, "--force", "--sign", "--key", key)
    assert code == 0, err  # signed again, it goes


def test_an_oversized_or_malformed_signature_is_refused_before_anything_is_published(
        env: Path, capsys: pytest.CaptureFixture[str]):
    """Every pull refuses a signature over 1 MiB unread; publish refuses it the same way
    (before, it parsed the whole file, past the scan's finding with --allow-risky) and says
    what is wrong with a malformed one."""
    folder = _skill(env)
    (folder / SIGNATURE_FILE).write_bytes(b" " * (MAX_SIGNATURE_BYTES + 1))
    code, _, err = run_main(capsys, "publish", folder, "--force", "--dry-run", "--allow-risky")
    said = " ".join(err.split())
    assert code == 1 and f"{SIGNATURE_FILE} is over 1024 KiB, so every pull would refuse" \
        in said, err
    (folder / SIGNATURE_FILE).write_text("{not json")
    code, _, err = run_main(capsys, "publish", folder, "--force")
    said = " ".join(err.split())
    assert code == 1 and f"{SIGNATURE_FILE} is malformed" in said and "Traceback" not in err
    assert run_main(capsys, "info", "local/acme-tool")[0] == 1  # nothing was published


def test_info_names_an_untrusted_key_as_keys_new_said_it(env: Path,
                                                          capsys: pytest.CaptureFixture[str]):
    """`keys new` printed sha256:… (the key's DER) and `info` showed pem-sha256:… (the hash
    a key-mode signature carries): a user handed the key could not match them. `keys new`
    says both."""
    key = env / "acme.key"
    code, out, _ = run_main(capsys, "keys", "new", key)
    said = " ".join(out.split())
    hint = re.search(r"pem-sha256:[0-9a-f]{64}", said)
    assert code == 0 and hint, out
    folder = _skill(env)
    assert run_main(capsys, "publish", folder, "--sign", "--key", key, "--force")[0] == 0
    code, out, _ = run_main(capsys, "info", "local/acme-tool", "--json")
    assert json.loads(out)["signature"]["signer"] == hint[0]


def test_a_mistyped_or_wrong_half_key_gets_the_right_file_in_its_hint(
        env: Path, capsys: pytest.CaptureFixture[str]):
    """A walk: `--key acm.key` hinted `keys new …/acm.key` (a second key, whose signer the
    lock would later refuse), `trust add` of the private key named the trust store's file,
    not the one given, and `--key acme.key.pub` showed a temp path and the library's words."""
    key = env / "acme.key"
    assert run_main(capsys, "keys", "new", key)[0] == 0
    folder = _skill(env)

    def refused(*args: str | Path) -> str:
        code, _, err = run_main(capsys, *args)
        assert code == 1 and "Traceback" not in err, err
        return " ".join(err.split())

    said = refused("publish", folder, "--sign", "--key", env / "acm.key", "--force")
    assert f"Hint: hubskills publish {folder} --sign --key {key} # the closest name" in said
    said = refused("publish", folder, "--sign", "--key", f"{key}.pub", "--force")
    assert f"--key {key}.pub is a public key; signing takes the private one" in said
    assert f"Hint: hubskills publish {folder} --sign --key {key}" in said
    said = refused("trust", "add", "acme", key)
    assert f"Error: {key} is a private key" in said and f"trust add acme {key}.pub" in said
    said = refused("trust", "add", "acme", env / "acme.ke")
    assert f"Hint: hubskills trust add acme {key}.pub # the closest name there" in said
    assert not (env / "home" / "trust").exists() or not any((env / "home" / "trust").iterdir())
