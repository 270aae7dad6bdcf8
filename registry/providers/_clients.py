"""One SDK client per event loop: an httpx pool cannot outlive the loop that opened it."""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Callable
from typing import Any


class LoopClients:
    """Creates an SDK client with `factory` on first use in each running loop, and closes it."""

    def __init__(self, factory: Callable[[], Any]) -> None:
        self._factory = factory
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = (
            weakref.WeakKeyDictionary())

    def get(self) -> Any:
        """The running loop's client, created on first use."""
        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is None:
            client = self._clients[loop] = self._factory()
        return client

    async def aclose(self) -> None:
        """Close the running loop's client (its connection pool dies with the loop)."""
        client = self._clients.pop(asyncio.get_running_loop(), None)
        if client is not None:
            await client.close()
