"""`hubskills sign` (and `publish --sign`) refuse a certificate chain no pull would accept,
before anything is written.

A team lead's walk: `sign --key evil.key --certificate evil.pem --chain leaf.pem --chain
root.pem`, where leaf.pem (used as an intermediate) is CA:FALSE, printed `Signed …` and
suggested `trust add NAME root.pem`; `openssl verify` says "invalid CA certificate" and every
pull refused the result, so the publisher learned at their users' pull time. Each case here is
one a verifier refuses (the pull of the same signature is the oracle where the library lets it
be written); a chain that builds still signs and pulls.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from registry.signing import SIGNATURE_FILE
from tests import test_signing
from tests.test_install import run_main
from tests.test_signing import _cert, _write, incoming, nothing_installed

pytest.importorskip("model_signing")

_held_clock = test_signing._held_clock  # the signing tests' clock (autouse), git server, project
server = test_signing.server
project = test_signing.project

_keys = test_signing.ec_keys


def _evil_under_a_leaf(tmp_path: Path):
    """The walk's files: root (CA), leaf.pem (CA:FALSE, issued by root) and evil.pem, issued
    by leaf's key; {name: path}."""
    root_key, leaf_key, evil_key = _keys(3)
    root = _cert("Acme Root", "Acme Root", root_key, root_key, ca=True, days=(-1, 30))
    leaf = _cert("Acme Leaf", "Acme Root", leaf_key, root_key, ca=False, days=(-1, 30))
    evil = _cert("Evil Signing", "Acme Leaf", evil_key, leaf_key, ca=False, days=(-1, 30))
    return {"root.pem": _write(tmp_path / "root.pem", root),
            "leaf.pem": _write(tmp_path / "leaf.pem", leaf),
            "evil.pem": _write(tmp_path / "evil.pem", evil),
            "evil.key": _write(tmp_path / "evil.key", evil_key)}


def _sign_refused(capsys, skill: Path, *args: str | Path) -> str:
    code, out, err = run_main(capsys, "sign", skill, *args)
    flat = " ".join(err.split())
    assert code == 1, out + err
    assert "Signed" not in out and "Traceback" not in flat and "Hint:" in flat
    assert not (skill / SIGNATURE_FILE).exists()
    return flat


def test_a_non_ca_intermediate_is_refused_before_the_signature_is_written(
        project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    made = _evil_under_a_leaf(tmp_path)
    mine = incoming(project)
    flat = _sign_refused(capsys, mine, "--key", made["evil.key"], "--certificate",
                         made["evil.pem"], "--chain", made["leaf.pem"], "--chain",
                         made["root.pem"])
    assert (f"CN=Acme Leaf ({made['leaf.pem']}) is not a CA certificate (CA:FALSE), so it "
            "cannot issue CN=Evil Signing") in flat
    assert "trust add" not in flat

    # the oracle: the same files, written by model_signing itself, fail at every pull
    test_signing.sign_unchecked(mine, key=made["evil.key"], certificate=made["evil.pem"],
                                chain=[made["leaf.pem"], made["root.pem"]])
    assert run_main(capsys, "trust", "add", "acme", made["root.pem"])[0] == 0
    code, _, err = run_main(capsys, "pull", "./incoming/acme-skill", "--project", project)
    assert code == 1 and "invalid CA certificate" in err and nothing_installed(project)


def _case(name: str, tmp_path: Path) -> tuple[list[str | Path], str]:
    """The `sign` options for one bad chain, and what the refusal must say."""
    root_key, ica_key, leaf_key, other_key = _keys(4)
    root = _cert("Acme Root", "Acme Root", root_key, root_key, ca=True, days=(-1, 30))
    ica = _cert("Acme ICA", "Acme Root", ica_key, root_key, ca=True, days=(-1, 30))
    leaf = _cert("Acme Signing", "Acme ICA", leaf_key, ica_key, ca=False, days=(-1, 30))
    key = _write(tmp_path / "leaf.key", leaf_key)
    files = {"root": _write(tmp_path / "root.pem", root), "ica": _write(tmp_path / "ica.pem", ica)}
    if name == "key not the certificate's":
        key = _write(tmp_path / "other.key", other_key)
        return ([key, _write(tmp_path / "leaf.pem", leaf), files["ica"], files["root"]],
                f"--key {key} is not the key of --certificate {tmp_path / 'leaf.pem'}")
    if name == "chain out of order":
        return ([key, _write(tmp_path / "leaf.pem", leaf), files["root"], files["ica"]],
                f"the signing certificate CN=Acme Signing was issued by CN=Acme ICA, not by "
                f"the next certificate in the chain, CN=Acme Root ({files['root']})")
    if name == "root left out":
        return ([key, _write(tmp_path / "leaf.pem", leaf), files["ica"]],
                f"the chain stops at CN=Acme ICA ({files['ica']}), which was issued by "
                "CN=Acme Root")
    if name == "intermediate of the same name, another key":
        fake = _cert("Acme ICA", "Acme Root", other_key, root_key, ca=True, days=(-1, 30))
        fake_path = _write(tmp_path / "fake-ica.pem", fake)
        return ([key, _write(tmp_path / "leaf.pem", leaf), fake_path, files["root"]],
                f"the signing certificate CN=Acme Signing is not signed by the key of "
                f"CN=Acme ICA ({fake_path})")
    if name == "expired intermediate":
        old = _cert("Acme ICA", "Acme Root", ica_key, root_key, ca=True, days=(-30, -1))
        old_path = _write(tmp_path / "old-ica.pem", old)
        return ([key, _write(tmp_path / "leaf.pem", leaf), old_path, files["root"]],
                f"CN=Acme ICA ({old_path}) expired on {old.not_valid_after_utc:%Y-%m-%d %H:%M}")
    assert name == "expired signing certificate"
    old = _cert("Acme Signing", "Acme ICA", leaf_key, ica_key, ca=False, days=(-30, -1))
    return ([key, _write(tmp_path / "leaf.pem", old), files["ica"], files["root"]],
            f"the signing certificate CN=Acme Signing expired on "
            f"{old.not_valid_after_utc:%Y-%m-%d %H:%M}")


CASES = ["key not the certificate's", "chain out of order", "root left out",
         "intermediate of the same name, another key", "expired intermediate",
         "expired signing certificate"]


@pytest.mark.parametrize("case", CASES)
def test_a_chain_no_pull_would_accept_is_refused_naming_what_is_wrong(
        case: str, project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    (key, leaf, *chain), said = _case(case, tmp_path)
    flat = _sign_refused(capsys, incoming(project), "--key", key, "--certificate", leaf,
                         *[arg for c in chain for arg in ("--chain", c)])
    assert said in flat


def test_a_chain_that_builds_signs_and_pulls(project: Path, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]):
    root_key, ica_key, leaf_key = _keys(3)
    root = _write(tmp_path / "root.pem",
                  _cert("Acme Root", "Acme Root", root_key, root_key, ca=True, days=(-1, 30)))
    ica = _write(tmp_path / "ica.pem",
                 _cert("Acme ICA", "Acme Root", ica_key, root_key, ca=True, days=(-1, 30)))
    leaf = _write(tmp_path / "leaf.pem",
                  _cert("Acme Signing", "Acme ICA", leaf_key, ica_key, ca=False, days=(-1, 30)))
    code, out, err = run_main(capsys, "sign", incoming(project), "--key",
                              _write(tmp_path / "leaf.key", leaf_key), "--certificate", leaf,
                              "--chain", ica, "--chain", root)
    assert code == 0 and "Signed" in out, err
    assert run_main(capsys, "trust", "add", "acme", root)[0] == 0
    code, _, err = run_main(capsys, "pull", "./incoming/acme-skill", "--project", project)
    assert code == 0, err


def test_publish_sign_refuses_the_same_chain_before_anything_is_published(
        project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("HUBSKILLS_HOME", str(tmp_path / "hub-home"))
    made = _evil_under_a_leaf(tmp_path)
    mine = incoming(project)
    code, _, err = run_main(capsys, "publish", mine, "--sign", "--key", made["evil.key"],
                            "--certificate", made["evil.pem"], "--chain", made["leaf.pem"],
                            "--chain", made["root.pem"], "--version", "0.1.0", "--force")
    assert code == 1 and "is not a CA certificate (CA:FALSE)" in " ".join(err.split())
    assert not (mine / SIGNATURE_FILE).exists()
    assert run_main(capsys, "info", "local/acme-skill")[0] == 1  # nothing was published


def test_a_certificate_without_chain_is_refused_naming_the_chain_it_needs(
        project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    """A walk: `sign --certificate self.pem` without --chain failed in the library ("Unable
    to load PEM file") with the hint `hubskills keys new KEY`, and a CA-issued leaf's hint was
    an `openssl verify` line. Each now names the --chain that signs, and that chain pulls."""
    root_key, leaf_key, own_key = _keys(3)
    root = _write(tmp_path / "root.pem",
                  _cert("Acme Root", "Acme Root", root_key, root_key, ca=True, days=(-1, 30)))
    leaf = _write(tmp_path / "leaf.pem",
                  _cert("Acme Signing", "Acme Root", leaf_key, root_key, ca=False,
                        days=(-1, 30)))
    own = _write(tmp_path / "self.pem", _cert("Me", "Me", own_key, own_key, ca=False,
                                              days=(-1, 30)))
    keys = {leaf: _write(tmp_path / "leaf.key", leaf_key),
            own: _write(tmp_path / "self.key", own_key)}
    mine = incoming(project, "draft-skill")
    flat = _sign_refused(capsys, mine, "--key", keys[leaf], "--certificate", leaf)
    assert f"--certificate {leaf}: CN=Acme Root issued it, and no --chain" in flat
    assert "Hint: add --chain ROOT.pem # the certificate of CN=Acme Root" in flat
    flat = _sign_refused(capsys, mine, "--key", keys[own], "--certificate", own)
    assert f"--certificate {own} is self-signed (CN=Me) and no --chain was given" in flat
    assert f"Hint: add --chain {own} # users then trust it: hubskills trust add NAME {own}" \
        in flat
    assert "keys new" not in flat and "Unable to load PEM" not in flat
    for certificate, chain, name in [(leaf, root, "acme-skill"), (own, own, "my-skill")]:
        code, out, err = run_main(capsys, "sign", incoming(project, name), "--key",
                                  keys[certificate], "--certificate", certificate, "--chain",
                                  chain)
        assert code == 0 and "Signed" in out, err
        assert run_main(capsys, "trust", "add", name, chain)[0] == 0
        code, _, err = run_main(capsys, "pull", f"./incoming/{name}", "--project", project)
        assert code == 0, err
