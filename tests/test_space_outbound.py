"""A Space visitor cannot make the server call addresses they choose, nor read a model server's
error body.

A simulated Space (`SPACE_ID` set) on a local store; the address a visitor aims at is a fake
model server on 127.0.0.1, which records every request: it must never receive one. Redirects
are checked against a real redirecting server: the providers do not follow them.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import gradio as gr
import pytest
from fakes.openai_server import FakeOpenAIServer
from space_pages import handler as space_handler

from registry import HubskillsError, ProviderError, ask, check_public_url
from registry.config import Settings
from space import build_demo

SECRET_BODY = "db at 10.0.0.5, password=hunter2"
VISITOR = gr.OAuthToken(token="hf_visitor_oauth_token_0123", scope="read", expires_at=0)


def small_skill(root: Path) -> list[str]:
    """SKILL.md and a one-case suite without code checks (so it runs on the Space itself)."""
    (root / "evals").mkdir(parents=True)
    (root / "SKILL.md").write_text("---\nname: zorblax-ports\ndescription: \"Ports of the "
                                   "zorblax daemon. Use when configuring zorblax.\"\n---\n\n"
                                   "Zorblax listens on port 4417.\n")
    (root / "evals" / "evals.json").write_text(json.dumps({"skill_name": "zorblax-ports", "cases": [
        {"id": "q1", "prompt": "Which port?", "checks": [{"type": "contains", "value": "4417"}]}]}))
    return [str(root / "SKILL.md"), str(root / "evals" / "evals.json")]


def on_space(tmp_path: Path, **extra: str) -> gr.Blocks:
    return build_demo(Settings.from_env({"HUBSKILLS_HOME": str(tmp_path / "home"),
                                         "HF_HUB_OFFLINE": "1", "SPACE_ID": "owner/hubskills",
                                         **extra}))


def evaluate(demo: gr.Blocks, upload: list[str], models: list[str], base_url: str,
             oauth: gr.OAuthToken | None) -> tuple:
    handler = space_handler(demo, "evaluate")
    return handler(None, upload, models, base_url, 1, "inline", "user", 0, 64, 0, "", "", "",
                   progress=None, oauth=oauth)


@pytest.fixture
def target():
    with FakeOpenAIServer() as server:
        yield server


def test_an_anonymous_visitor_cannot_aim_the_space_at_a_local_server(target, tmp_path):
    demo = on_space(tmp_path)
    upload = small_skill(tmp_path / "skill")
    with pytest.warns(UserWarning, match="needs Hugging Face sign-in"):
        status, summary, *_, run_id = evaluate(demo, upload, ["local/x"], target.url, None)
    assert "needs Hugging Face sign-in on this Space" in status and run_id is None
    with pytest.warns(UserWarning, match="sign-in"):
        status, *_ = evaluate(demo, upload, ["local/x"], "", None)  # the owner's local server
    assert "local/x needs Hugging Face sign-in" in status
    assert target.requests == []


@pytest.mark.parametrize("url", [
    "{url}",  # http, loopback
    "{https}",  # https, but loopback
    "https://localhost:{port}/v1",
    "https://169.254.169.254/latest/meta-data",
    "https://[::ffff:127.0.0.1]:{port}/v1",
    "https://0x7f000001:{port}/v1",
])
def test_a_signed_in_visitors_base_url_must_be_a_public_https_host(target, tmp_path, url):
    port = target.url.split(":")[2].split("/")[0]
    chosen = url.format(url=target.url, https=target.url.replace("http:", "https:"), port=port)
    upload = small_skill(tmp_path / "skill")
    with pytest.warns(UserWarning, match="refusing the model server URL"):
        status, summary, *_, run_id = evaluate(on_space(tmp_path), upload, ["openai/gpt-4o-mini"],
                                               chosen, VISITOR)
    assert "not a public address" in status or "only https URLs" in status, status
    assert run_id is None and target.requests == []


@pytest.mark.parametrize(("url", "allowed"), [
    ("https://8.8.8.8/v1", True), ("https://[2606:4700:4700::1111]/v1", True),
    ("http://8.8.8.8/v1", False), ("https://10.1.2.3/v1", False),
    ("https://172.16.0.1/v1", False), ("https://192.168.1.1/v1", False),
    ("https://100.64.0.1/v1", False), ("https://169.254.169.254/", False),
    ("https://[::1]/v1", False), ("https://[fd00::1]/v1", False),
    ("https://[fe80::1]/v1", False), ("https://[::ffff:10.0.0.1]/v1", False),
    ("https://[64:ff9b::a00:1]/v1", False), ("https://[2002:a00:1::]/v1", False),
    ("https://0/v1", False), ("https://224.0.0.1/v1", False), ("file:///etc/passwd", False),
])
def test_check_public_url(url, allowed):
    if allowed:
        check_public_url(url)
        return
    with pytest.raises(HubskillsError, match="refusing the model server URL") as refused:
        check_public_url(url)
    assert refused.value.hint


class _Redirect(BaseHTTPRequestHandler):
    location = ""

    def do_POST(self) -> None:  # noqa: N802 - the http.server hook
        self.rfile.read(int(self.headers.get("content-length") or 0))
        self.send_response(307)
        self.send_header("Location", self.location + self.path.removeprefix("/v1"))
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


def test_a_redirect_is_not_followed(target, tmp_path):
    _Redirect.location = target.url
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Redirect)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        settings = Settings.from_env({"HUBSKILLS_HOME": str(tmp_path)})
        with pytest.raises(ProviderError, match="HTTP 307"):
            ask("local/x", "hi", settings, base_url=f"http://127.0.0.1:{server.server_port}/v1")
    finally:
        server.shutdown()
        server.server_close()
    assert target.requests == []


class _Leaky(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 - the http.server hook
        self.rfile.read(int(self.headers.get("content-length") or 0))
        body = json.dumps({"error": {"message": SECRET_BODY, "type": "invalid_request"}})
        self.send_response(400)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body.encode())

    def log_message(self, *args: object) -> None:
        pass


def test_a_model_servers_error_body_is_not_shown_to_visitors(tmp_path):
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Leaky)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:  # the owner's own server (configured, not chosen by the visitor) answers 400
        demo = on_space(tmp_path, OPENAI_API_KEY="sk-owner", HUBSKILLS_SPACE_LEND_KEYS="1",
                        OPENAI_BASE_URL=f"http://127.0.0.1:{server.server_port}/v1")
        out = evaluate(demo, small_skill(tmp_path / "skill"), ["openai/gpt-4o-mini"], "", None)
    finally:
        server.shutdown()
        server.server_close()
    shown = " ".join(o if isinstance(o, str) else o.to_json() for o in out if o is not None)
    assert "HTTP 400" in shown and "not shown on this Space" in shown, shown
    assert "hunter2" not in shown and "10.0.0.5" not in shown
