"""The TLS roots an SDK client trusts: certifi's bundle, or the certificates `SSL_CERT_FILE`
names, as httpx has always chosen them (built once per process, so each client runs in one).

A real HTTPS server on 127.0.0.1 with a certificate made for the test (by `openssl`) answers
the real `openai` SDK: trusted only when `SSL_CERT_FILE` names that certificate.
"""

from __future__ import annotations

import json
import os
import ssl
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ANSWER = {"id": "c1", "object": "chat.completion", "created": 0, "model": "m",
          "choices": [{"index": 0, "finish_reason": "stop",
                       "message": {"role": "assistant", "content": "over TLS"}}],
          "usage": {"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3}}
_ASK = """
import asyncio, sys
from registry.config import Settings
from registry.providers import Message, RetryPolicy, resolve
model = resolve("local/m", Settings.from_env({"HUBSKILLS_HOME": sys.argv[2]}),
                base_url=sys.argv[1], retry=RetryPolicy(attempts=1))
try:
    print(asyncio.run(model.complete([Message("user", "hi")])).text)
except Exception as exc:
    print(type(exc).__name__, exc)
"""


class _Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        self.rfile.read(int(self.headers.get("content-length", 0)))
        body = json.dumps(ANSWER).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def https_url(tmp_path) -> Iterator[tuple[str, Path]]:
    """An HTTPS chat server's base URL and the certificate it presents."""
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                    "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    try:
        yield f"https://127.0.0.1:{server.server_address[1]}/v1", cert
    finally:
        server.shutdown()
        server.server_close()


def _ask(url: str, home: Path, **env: str) -> str:
    """What a fresh process asking `url` gets: the answer, or the error's type and message."""
    inherited = {k: v for k, v in os.environ.items() if k not in ("SSL_CERT_FILE", "SSL_CERT_DIR")}
    done = subprocess.run([sys.executable, "-c", _ASK, url, str(home)],
                          env={**inherited, "PYTHONPATH": str(ROOT), **env},
                          capture_output=True, text=True, check=True)
    return done.stdout.strip()


def test_a_certificate_named_by_ssl_cert_file_is_trusted(https_url, tmp_path):
    url, cert = https_url
    assert _ask(url, tmp_path / "home", SSL_CERT_FILE=str(cert)) == "over TLS"


def test_certifi_roots_refuse_a_certificate_they_do_not_hold(https_url, tmp_path):
    url, _ = https_url
    answer = _ask(url, tmp_path / "home")
    assert answer.startswith("ProviderError") and "cannot connect" in answer, answer
