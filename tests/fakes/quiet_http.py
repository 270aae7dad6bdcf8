"""The HTTP plumbing the fake model servers share: a stdlib request handler that keeps the
connection alive (HTTP/1.1), sends without Nagle's delay, logs nothing, and answers once."""

from __future__ import annotations

from http.server import BaseHTTPRequestHandler
from typing import Any


class QuietHandler(BaseHTTPRequestHandler):
    """A request handler for a fake server: `read_body` reads the request, `reply` answers it."""

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out in separate writes

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass

    def read_body(self) -> bytes:
        """The request's body (by its content-length; empty without one)."""
        length = int(self.headers.get("content-length") or 0)
        return self.rfile.read(length) if length else b""

    def reply(self, status: int, headers: dict[str, str], body: bytes) -> None:
        """Send one answer; a client that gave up (a timeout test) gets none."""
        try:
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except ConnectionError:
            self.close_connection = True
