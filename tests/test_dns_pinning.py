"""DNS rebinding: a name that answers a public address to the check and 127.0.0.1 when the
client connects never reaches 127.0.0.1; each connection goes to an address that was checked,
with the host's name kept in the Host header."""

from __future__ import annotations

import asyncio
import ipaddress
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

from registry.errors import HubskillsError
from registry.providers.public_url import PinnedTransport, check_public_url

PUBLIC = "93.184.216.34"


class Rebinding:
    """Answers a public address first, then 127.0.0.1 (the attacker's DNS)."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def __call__(self, host: str, port: int) -> list[str]:
        self.asked.append(host)
        return [PUBLIC] if len(self.asked) == 1 else ["127.0.0.1"]


class Internal:
    """A server only this machine can reach: it records each request's Host header."""

    def __init__(self) -> None:
        self.hosts: list[str] = []
        seen = self.hosts

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802
                seen.append(self.headers["host"])
                body = b'{"secret": "internal"}'
                self.send_response(200)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]

    def __enter__(self) -> Internal:
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


async def fetch(url: str, transport: PinnedTransport) -> httpx.Response:
    async with httpx.AsyncClient(transport=transport, follow_redirects=False) as client:
        return await client.get(url)


def test_a_name_rebound_to_loopback_after_the_check_is_never_connected_to():
    resolver = Rebinding()
    with Internal() as internal:
        check_public_url(f"https://rebind.test:{internal.port}/v1", resolver)  # public: passes
        with pytest.raises(httpx.ConnectError, match=r"rebind.test \(127.0.0.1\): not a public"):
            asyncio.run(fetch(f"http://rebind.test:{internal.port}/v1/models",
                              PinnedTransport(resolver=resolver)))
    assert internal.hosts == []  # nothing reached the internal server
    assert resolver.asked == ["rebind.test", "rebind.test"]


def test_every_address_is_checked_not_only_the_first():
    def mixed(host: str, port: int) -> list[str]:
        return [PUBLIC, "10.0.0.7"]

    with pytest.raises(HubskillsError, match=r"10\.0\.0\.7\): not a public address"):
        check_public_url("https://mixed.test/v1", mixed)
    with Internal() as internal, pytest.raises(httpx.ConnectError, match="10.0.0.7"):
        asyncio.run(fetch(f"http://mixed.test:{internal.port}/", PinnedTransport(resolver=mixed)))


def test_the_connection_goes_to_the_checked_address_and_keeps_the_hosts_name():
    """With loopback allowed (a test's rule), the one resolution is the address connected to;
    the request still names the host."""
    asked: list[str] = []

    def resolver(host: str, port: int) -> list[str]:
        asked.append(host)
        return ["127.0.0.1"]

    loopback = ipaddress.ip_network("127.0.0.0/8")
    transport = PinnedTransport(resolver=resolver, is_allowed=lambda a: a in loopback)
    with Internal() as internal:
        response = asyncio.run(fetch(f"http://model.test:{internal.port}/v1/models", transport))
    assert response.status_code == 200
    assert internal.hosts == [f"model.test:{internal.port}"] and asked == ["model.test"]


def test_a_name_that_does_not_resolve_is_refused():
    def nothing(host: str, port: int) -> list[str]:
        raise OSError("no such host")

    with pytest.raises(HubskillsError, match="does not resolve"):
        check_public_url("https://nowhere.test/v1", nothing)


def test_on_a_space_every_model_call_goes_through_the_pinned_transport(monkeypatch):
    """Wired in: a model resolved on a Space for an endpoint a visitor chose connects only to
    checked public addresses, so one that names a loopback server (or a name rebound to one) is
    never reached; the same reference off a Space reaches it."""
    from fakes.openai_server import FakeOpenAIServer

    from registry.config import Settings
    from registry.errors import HubskillsError
    from registry.providers import resolve
    from registry.providers.base import Message

    with FakeOpenAIServer(responder=lambda body: "hi") as server:
        url = server.url.replace("127.0.0.1", "localhost")
        here = Settings.from_env({})
        space = here.with_(space_id="someone/space")

        async def ask(settings: Settings) -> str:
            model = resolve("local/pinned-check", settings, base_url=url)
            try:
                return (await model.complete([Message("user", "x")])).text
            finally:
                await model.provider.aclose()

        assert asyncio.run(ask(here)) == "hi"
        before = len(server.bodies)
        with pytest.raises(HubskillsError):
            asyncio.run(ask(space))
        assert len(server.bodies) == before  # the loopback server never got the request


def test_an_evaluation_and_a_generation_pin_the_endpoint_their_request_names():
    """The Space's Evaluate and Generate handed the visitor's URL over as `settings.base_url`,
    which `resolve` took for the owner's own: unpinned, a rebound name reached a loopback
    server (a red-team walk). Now the run's models, a generation's teacher and students are
    pinned too."""
    from fakes.openai_server import FakeOpenAIServer

    from registry.config import Settings
    from registry.evaluation.calls import ModelCalls
    from registry.evaluation.config import EvalConfig
    from registry.providers import resolve

    with FakeOpenAIServer(responder=lambda body: "hi") as server:
        url = server.url.replace("127.0.0.1", "localhost")
        space = Settings.from_env({}).with_(space_id="someone/space")
        calls = ModelCalls(EvalConfig(models=["local/pinned-run"], base_url=url), space)
        assert [m.provider.public_only for m in calls.models] == [True]
        here = ModelCalls(EvalConfig(models=["local/pinned-run"], base_url=url),
                          Settings.from_env({}))
        assert [m.provider.public_only for m in here.models] == [False]  # off a Space
        given = space.with_(base_url=url, base_url_given=True)  # what generate passes on
        assert resolve("local/teacher", given).provider.public_only is True
        owners = space.with_(base_url=url)  # the owner's HUBSKILLS_BASE_URL: not pinned
        assert resolve("local/owners", owners).provider.public_only is False
