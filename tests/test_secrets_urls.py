"""A credential inside a URL (`HF_ENDPOINT=https://user:pass@hub`, a gateway's key in a
`--base-url`) is a secret like a key variable: masked in everything shown or written, and left
out of a link shown to a person. Before, only variables named like a key were known, and an
endpoint's password reached the terminal in the Hub's "cannot reach" error and a Job's link.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from registry.config import Settings
from registry.credentials import bare_url, carries_secret, names_credential
from registry.secrets import MASK, environment_secrets, scrub, url_secrets

PASSWORD = "Sup3rSecretPass"
KEY = "hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567"


@pytest.mark.parametrize(("url", "secrets"), [
    (f"https://bob:{PASSWORD}@hub.example/", {PASSWORD}),
    (f"https://{KEY}@github.com/acme/skills.git", {KEY}),  # a token as the user name
    ("https://gw.example/v1?api-key=abcdefgh12345&api-version=2024-02-01", {"abcdefgh12345"}),
    (f"https://gw.example/{KEY}/v1", {KEY}),
    ("https://u:p%40ss%2Fword99@h.example/", {"p%40ss%2Fword99", "p@ss/word99"}),
    ("https://huggingface.co", set()),
    ("http://127.0.0.1:8080/v1", set()),
    ("https://x.openai.azure.com/openai/deployments/gpt-4o-mini?api-version=2024-02-01", set()),
    ("https://git@github.com/acme/skills.git", set()),  # "git" is a user, too short to be a key
    ("https://alice-corp@hub.example/", set()),  # a name: its password is asked for
    ("https://[::1", set()),  # unparsable: nothing picked out
])
def test_the_credentials_a_url_holds(url: str, secrets: set[str]):
    """Exactly the credential: a date in `?api-version=` stays readable everywhere else."""
    assert set(url_secrets(url)) == secrets


def test_an_endpoint_variables_password_is_known_and_masked(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("HF_ENDPOINT", f"https://bob:{PASSWORD}@hub.example")
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy:Pr0xyPassw0rd@10.0.0.1:3128")
    monkeypatch.setenv("SOME_NOTE", f"https://bob:{PASSWORD}2@x.example")  # no place name
    assert {PASSWORD, "Pr0xyPassw0rd"} <= environment_secrets()
    assert f"{PASSWORD}2" not in environment_secrets()
    shown = scrub(f"cannot reach https://bob:{PASSWORD}@hub.example/api")
    assert PASSWORD not in shown and f"bob:{MASK}@hub.example" in shown


def test_a_settings_endpoint_credential_is_among_its_secrets():
    """A `--base-url` typed on the command line is in no environment variable: the run's
    scope holds its key through `Settings.secrets`."""
    settings = Settings.from_env({}).with_(base_url=f"https://gw.example/{KEY}/v1")
    assert KEY in settings.secrets()
    assert settings.with_(base_url="https://gw.example/v1").secrets() == []


@pytest.mark.parametrize(("url", "shown"), [
    (f"https://bob:{PASSWORD}@hub.example/jobs/boss/1?x=y#f", "https://hub.example/jobs/boss/1"),
    (f"http://{KEY}@127.0.0.1:8080/{KEY}/jobs", "http://127.0.0.1:8080/jobs"),
    ("http://[::1]:9/jobs/a/b", "http://[::1]:9/jobs/a/b"),
    ("https://huggingface.co/jobs/boss/abc", "https://huggingface.co/jobs/boss/abc"),
    ("https://[::1", ""),
])
def test_a_link_shown_to_a_person_has_no_credential(url: str, shown: str):
    assert bare_url(url) == shown
    assert not carries_secret(bare_url(url))


def test_the_clis_unreachable_hub_error_hides_the_endpoints_password(tmp_path: Path):
    """What a user saw before: `Error: cannot reach http://bob:PASSWORD@...`, piped or not."""
    env = {**os.environ, "HOME": str(tmp_path), "HUBSKILLS_HOME": str(tmp_path / "home"),
           "HUBSKILLS_REGISTRY": "hub", "HF_ENDPOINT": f"http://bob:{PASSWORD}@127.0.0.1:9"}
    for name in ("HF_TOKEN", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        env.pop(name, None)
    for extra in ([], ["--json"]):
        done = subprocess.run([sys.executable, "-m", "registry.cli", "search", "pdf", *extra],
                              env=env, capture_output=True, text=True, cwd=tmp_path)
        assert done.returncode == 1, done.stdout + done.stderr
        assert "cannot reach http://bob:" in done.stderr, done.stderr
        assert PASSWORD not in done.stdout + done.stderr


@pytest.mark.parametrize(("url", "held"), [
    ("https://bob:hunter2@git.example/x.git", True),  # under MIN_LENGTH: masked nowhere
    ("https://git.example/x.git?token=abc", True),
    ("https://u:p@[::1/x.git", True),  # does not parse, names a user: held to hold one
    ("https://alice@dev.azure.com/org/_git/x", False),  # a user name, its password asked for
    ("https://git.example/x.git", False),
    ("https://[::1/x.git", False),
])
def test_a_credential_of_any_length_is_named(url: str, held: bool):
    """Where a URL may be recorded goes by whether it holds a credential at all: a password
    too short to mask in every text (`url_secrets` leaves it out) is one."""
    assert names_credential(url) is held
