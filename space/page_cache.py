"""The Space's page (`GET /`) served from memory once rendered (issue 38).

Gradio renders the page for every visitor: it deep-copies the whole config (every block of
the five tabs), sets its root URL in it, copies its API description and writes code snippets
for every endpoint, then renders the template (~240 KB of HTML on the seeded registry). That
was a third of the server's CPU when 100 visitors arrived at once. What the page holds depends
only on the config (fixed once launched), the root URL (from the request's scheme, host,
`X-Forwarded-Host`, `X-Gradio-Server`, `X-Forwarded-Proto` and root path), the signed-in user
(only with Gradio's own `auth`) and the query parameters Gradio's page reads (`page`,
`deep_link`, `all_endpoints`); everything else in the URL (`?skill=`, a Space's `__sign`) is read
by the page's front end or its load event, not by the server. So the page is kept per root
(`ENTRIES` at most, least recently used dropped) and sent as Gradio rendered it, byte for byte;
a request that carries one of those parameters, an app with `auth`, a HEAD or an answer other
than a 200 without cookies goes to Gradio as before. Visitors arriving together while a page is
rendered wait for that one render.

It is a route placed in front of Gradio's own `/` in the app's lifespan (`attach`): no Gradio
code is changed, and the route falls back to Gradio's when it cannot answer.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable
from typing import Any

ENTRIES = 32  # pages kept: one per root URL the Space is reached at
ROOT_HEADERS = (b"host", b"x-forwarded-host", b"x-gradio-server", b"x-forwarded-proto")
READ_BY_GRADIO = {"all_endpoints"}  # read from the request inside the page's handler


class CachedPage:
    """An ASGI endpoint for `GET /` that answers from memory, else through `original` (Gradio's
    route for `/`)."""

    def __init__(self, app: Any, original: Any, entries: int = ENTRIES) -> None:
        self.app, self.original, self.entries = app, original, entries
        declared = getattr(getattr(original, "dependant", None), "query_params", None) or []
        self.uncached_params = READ_BY_GRADIO | {p.name for p in declared}
        self.pages: OrderedDict[tuple, tuple[dict[str, Any], bytes]] = OrderedDict()
        self.rendering = asyncio.Lock()
        self.rendered = 0  # pages Gradio rendered through this route (for tests)

    def key(self, scope: dict[str, Any]) -> tuple | None:
        """What the page depends on, or None when it is not to be kept."""
        if scope.get("method") != "GET" or self.app.auth or self.app.auth_dependency:
            return None
        from urllib.parse import parse_qsl

        query = parse_qsl(scope.get("query_string", b"").decode("latin-1"),
                          keep_blank_values=True)
        if any(name in self.uncached_params for name, _ in query):
            return None
        headers = tuple(sorted((n, v) for n, v in scope.get("headers") or []
                               if n in ROOT_HEADERS))
        config = getattr(self.app.get_blocks(), "config", None)
        return (id(config), scope.get("scheme"), scope.get("server"), scope.get("root_path"),
                scope.get("path"), headers)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        key = self.key(scope)
        if key is None:
            await self._gradio(scope, receive, send)
            return
        page = self._kept(key)
        if page is None:
            async with self.rendering:  # the others arriving now wait for this one render
                page = self._kept(key)
                if page is None:
                    start, body = await self._render(scope, receive)
                    if start["status"] == 200 and not any(
                            n.lower() == b"set-cookie" for n, _ in start.get("headers", [])):
                        self._keep(key, (start, body))
                    page = (start, body)
        start, body = page
        await send(start)
        await send({"type": "http.response.body", "body": body})

    def _kept(self, key: tuple) -> tuple[dict[str, Any], bytes] | None:
        page = self.pages.get(key)
        if page is not None:
            self.pages.move_to_end(key)
        return page

    def _keep(self, key: tuple, page: tuple[dict[str, Any], bytes]) -> None:
        self.pages[key] = page
        while len(self.pages) > self.entries:
            self.pages.popitem(last=False)

    async def _gradio(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        _, child = self.original.matches(scope)  # the scope Gradio's route expects
        await self.original.handle({**scope, **child}, receive, send)

    async def _render(self, scope: dict[str, Any], receive: Any) -> tuple[dict[str, Any], bytes]:
        """Gradio's answer, held: (its start message, its whole body)."""
        start: dict[str, Any] = {}
        body = bytearray()

        async def hold(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                start.update(message)
            elif message["type"] == "http.response.body":
                body.extend(message.get("body", b""))

        await self._gradio(scope, receive, hold)
        self.rendered += 1
        return start, bytes(body)


def install(app: Any) -> CachedPage | None:
    """Put the cached page in front of Gradio's `GET /` on `app`; the route's endpoint, or
    None when the app has no such route."""
    from starlette.routing import Route

    original = next((r for r in app.router.routes if getattr(r, "path", None) == "/"
                     and "GET" in (getattr(r, "methods", None) or ())), None)
    if original is None:
        return None
    page = CachedPage(app, original)
    route = Route("/", endpoint=page, methods=["GET"])
    route.methods = {"GET"}  # not HEAD, which Starlette adds: Gradio's own answers it
    app.router.routes.insert(0, route)
    app.hubskills_page = page  # for tests and benchmarks
    return page


def attach(launch_kwargs: dict[str, Any]) -> None:
    """Install the cached page when the app starts: wraps the lifespan in
    `launch_kwargs["app_kwargs"]` (any other, e.g. `/mcp`'s, still runs)."""
    app_kwargs = dict(launch_kwargs.get("app_kwargs") or {})
    inner: Callable[[Any], Any] | None = app_kwargs.get("lifespan")

    @contextlib.asynccontextmanager
    async def run(app: Any) -> AsyncIterator[None]:
        install(app)
        if inner is None:
            yield
        else:
            async with inner(app):
                yield

    app_kwargs["lifespan"] = run
    launch_kwargs["app_kwargs"] = app_kwargs
