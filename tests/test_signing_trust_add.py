"""`hubskills trust add` refuses a certificate that can never vouch for a signer.

A team lead's walk: `trust add leaf leaf.pem`, a signing certificate a CA issued with
`CA:FALSE`, was accepted with no warning. OpenSSL (which `model_signing` verifies with) never
ends a chain at such a certificate: it looks on for its issuer. A self-signed certificate is
another matter: OpenSSL takes it, CA or not, as the whole chain of a signature made with it,
so it stays an anchor (a pinned certificate), as a root does. The pull is the oracle.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from registry.config import Settings
from registry.signing import anchors
from tests import test_signing
from tests.test_install import run_main
from tests.test_signing import _cert, _write, incoming, nothing_installed

pytest.importorskip("model_signing")

_held_clock = test_signing._held_clock  # the signing tests' clock (autouse), git server, project
server = test_signing.server
project = test_signing.project

_keys = test_signing.ec_keys


def test_a_leaf_a_ca_issued_is_refused_with_the_root_to_trust(
        project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    root_key, leaf_key = _keys(2)
    root = _write(tmp_path / "root.pem",
                  _cert("Acme Root", "Acme Root", root_key, root_key, ca=True, days=(-1, 30)))
    leaf = _write(tmp_path / "leaf.pem",
                  _cert("Acme Signing", "Acme Root", leaf_key, root_key, ca=False, days=(-1, 30)))
    code, out, err = run_main(capsys, "trust", "add", "leaf", leaf)
    flat = " ".join(err.split())
    assert code == 1 and "Trusted" not in out, out + err
    assert "CN=Acme Signing is not a CA certificate (CA:FALSE)" in flat
    assert "Hint: hubskills trust add leaf ROOT.pem # the certificate of CN=Acme Root" in flat
    assert anchors(Settings.from_env().home) == []

    # the oracle: trusted anyway (a store written before this check), it vouches for nothing
    mine = incoming(project)
    assert run_main(capsys, "sign", mine, "--key", _write(tmp_path / "leaf.key", leaf_key),
                    "--certificate", leaf, "--chain", root)[0] == 0
    store = Settings.from_env().home / "trust"
    store.mkdir(parents=True, exist_ok=True)
    (store / "leaf.pem").write_bytes(leaf.read_bytes())
    code, _, err = run_main(capsys, "pull", "./incoming/acme-skill", "--project", project)
    assert code == 1 and "does not chain to a trusted certificate" in " ".join(err.split())
    assert nothing_installed(project)
    # the leaf with its root in one file holds: the root vouches
    both = _write(tmp_path / "both.pem", *[_load(leaf), _load(root)])
    assert run_main(capsys, "trust", "add", "leaf", both)[0] == 0


def _load(path: Path):
    from cryptography import x509

    return x509.load_pem_x509_certificate(path.read_bytes())


def test_a_self_signed_certificate_is_a_pinned_anchor_ca_or_not(
        project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    [key] = _keys(1)
    alone = _write(tmp_path / "self.pem",
                   _cert("Acme Signing", "Acme Signing", key, key, ca=False, days=(-1, 30)))
    code, out, err = run_main(capsys, "trust", "add", "acme", alone)
    assert code == 0 and "pinned" in " ".join(out.split()), err
    mine = incoming(project)
    code, _, err = run_main(capsys, "sign", mine, "--key", _write(tmp_path / "self.key", key),
                            "--certificate", alone, "--chain", alone)
    assert code == 0, err
    code, _, err = run_main(capsys, "pull", "./incoming/acme-skill", "--project", project)
    assert code == 0, err
