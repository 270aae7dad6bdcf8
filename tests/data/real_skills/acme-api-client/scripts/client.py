"""A small client for the ACME orders API with pagination and retries."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from typing import Any

import requests

BASE_URL = "https://api.acme.example/v2"


class Client:
    def __init__(self, api_key: str, base_url: str = BASE_URL) -> None:
        self.base_url = base_url
        self.session_headers = {"Authorization": f"Bearer {api_key}"}

    @classmethod
    def from_env(cls) -> Client:
        key = os.environ.get("ACME_API_KEY")
        if not key:
            raise SystemExit("set ACME_API_KEY (see .env.example)")
        return cls(key)

    def _get(self, url: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        for attempt in range(5):
            response = requests.get(url, params=params, headers=self.session_headers, timeout=30)
            if response.status_code not in (429, 500, 502, 503, 504):
                response.raise_for_status()
                return response.json()
            time.sleep(2**attempt)
        response.raise_for_status()
        return response.json()

    def orders(self, **filters: Any) -> Iterator[dict[str, Any]]:
        url: str | None = f"{self.base_url}/orders"
        params: dict[str, Any] | None = filters
        while url:
            page = self._get(url, params)
            yield from page["data"]
            url, params = page.get("next"), None
