"""The Chat Completions wire over httpx: the part of the `openai` SDK's client hubskills uses.

`OpenAICompat` sends two requests, `POST /chat/completions` with a body it builds itself and
`GET /models` (the probe), and reads the answer as JSON. This module does exactly that with
httpx and raises the SDK's exceptions in shape (`APIStatusError` with `status_code`,
`response`, `body`: the answer's `error` object, `code`, `message`; `APITimeoutError`,
`APIConnectionError`, `APIResponseValidationError`), so `SDKProvider` classifies, retries and
translates a failure here as it does the SDK's. Importing the SDK costs ~0.4 s, mostly its
`types` package building hundreds of pydantic models; this module costs httpx alone, which the
SDK loads too. `tests/test_openai_wire.py` runs both against the same fake servers.
"""

from __future__ import annotations

import json
from typing import Any

import httpx

from registry._version import __version__

#: The SDK's pool: up to 1,000 connections, 100 kept alive (httpx's own default is 100 / 20).
LIMITS = httpx.Limits(max_connections=1000, max_keepalive_connections=100)


class APIError(Exception):
    """A failed request: `message`; `body` and `code` when the server answered JSON."""

    def __init__(self, message: str, *, body: object | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.body = body
        code = body.get("code") if isinstance(body, dict) else None
        self.code = None if code is None else str(code)


class APIStatusError(APIError):
    """A 4xx or 5xx answer (any status outside 2xx: redirects are not followed)."""

    def __init__(self, message: str, *, response: httpx.Response, body: object | None) -> None:
        super().__init__(message, body=body)
        self.response = response
        self.status_code = response.status_code


class APIConnectionError(APIError):
    """No answer: the connection failed or dropped (the cause is chained)."""

    def __init__(self, message: str = "Connection error.") -> None:
        super().__init__(message)


class APITimeoutError(APIConnectionError):
    """No answer within the timeout."""

    def __init__(self) -> None:
        super().__init__("Request timed out.")


class APIResponseValidationError(APIError):
    """A 2xx answer whose body is not JSON."""


def DefaultAsyncHttpxClient(**options: Any) -> httpx.AsyncClient:  # noqa: N802 - the SDK's name
    """An httpx client with the SDK's connection pool; `options` as `httpx.AsyncClient`'s."""
    return httpx.AsyncClient(limits=LIMITS, **options)


class AsyncOpenAI:
    """A client for one endpoint and key: `post` and `get` a path, JSON (or text) back."""

    def __init__(self, *, base_url: str, api_key: str, timeout: float,
                 http_client: httpx.AsyncClient | None = None, max_retries: int = 0) -> None:
        if max_retries:
            raise ValueError("the wire never retries: Model.complete is the one retry loop")
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self._http = http_client or DefaultAsyncHttpxClient(follow_redirects=False)
        self._headers = {"Authorization": f"Bearer {api_key}", "Accept": "application/json",
                         "User-Agent": f"hubskills/{__version__}"}

    async def post(self, path: str, *, body: object, cast_to: type = dict,
                   options: dict[str, Any] | None = None) -> Any:
        """POST `body` as JSON; the answer as `cast_to` (`dict`: parsed JSON, `str`: text)."""
        return await self._send("POST", path, body, cast_to, options or {})

    async def get(self, path: str, *, cast_to: type = dict,
                  options: dict[str, Any] | None = None) -> Any:
        """GET `path`; the answer as `cast_to`."""
        return await self._send("GET", path, None, cast_to, options or {})

    def is_closed(self) -> bool:
        """Whether `close` ran."""
        return self._http.is_closed

    async def close(self) -> None:
        """Close the connection pool (a given `http_client` too, as the SDK does)."""
        await self._http.aclose()

    async def _send(self, method: str, path: str, body: object, cast_to: type,
                    options: dict[str, Any]) -> Any:
        url = f"{self.base_url}/{path.lstrip('/')}"
        timeout = httpx.Timeout(options.get("timeout", self.timeout))
        try:
            response = await self._http.request(method, url, json=body, headers=self._headers,
                                                timeout=timeout)
        except httpx.TimeoutException as exc:
            raise APITimeoutError() from exc
        except Exception as exc:  # as the SDK: whatever stopped the answer is a connection error
            raise APIConnectionError() from exc
        if not response.is_success:
            raise _status_error(response)
        if cast_to is str:
            return response.text
        try:
            return response.json()
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise APIResponseValidationError("the answer is not JSON",
                                             body=response.text) from exc


def _status_error(response: httpx.Response) -> APIStatusError:
    """The SDK's error for an answer outside 2xx: "Error code: N", then " - " and the error's
    `message` when the body is JSON with one; `body` the `error` object, else all of it."""
    text = response.text.strip()
    message = f"Error code: {response.status_code}"
    try:
        body: object = json.loads(text)
    except json.JSONDecodeError:
        return APIStatusError(message, response=response, body=text)
    data = body.get("error", body) if isinstance(body, dict) else body
    said = data.get("message") if isinstance(data, dict) and isinstance(body, dict) else None
    if isinstance(said, str) and said:
        message += f" - {said}"
    return APIStatusError(message, response=response, body=data)
