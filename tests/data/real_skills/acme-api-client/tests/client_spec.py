"""Unit tests for scripts/client.py against recorded responses (run with pytest)."""

from __future__ import annotations

import json
from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures"
FAKE_KEY = "sk-proj-FAKE000000000000000000000000000000"


def test_from_env_reads_only_the_acme_key(monkeypatch):
    from scripts.client import Client

    monkeypatch.setenv("ACME_API_KEY", "dummy-key-123")
    client = Client.from_env()
    assert client.session_headers == {"Authorization": "Bearer dummy-key-123"}


def test_fixture_keys_are_fake():
    settings = json.loads((FIXTURES / "settings.json").read_text())
    assert settings["openai_api_key"] == FAKE_KEY
