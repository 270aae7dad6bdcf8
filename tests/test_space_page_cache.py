"""The Space's page from memory (space/page_cache.py), against the launched Space: byte for
byte what Gradio renders for the same request (plain, another host, behind a proxy, with a
query the server does not read), rendered once for a crowd arriving together, and handed to
Gradio whenever the page could differ (`deep_link`, `page`, `all_endpoints`) or for a HEAD.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from registry import Settings
from tests.test_space import seeded_space

pytestmark = pytest.mark.timeout(600)


@pytest.fixture
def space(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Any, str]]:
    demo, url = seeded_space(Settings.from_env())
    try:
        yield demo, url.rstrip("/")
    finally:
        demo.close()


def _page(url: str, query: str = "", **headers: str) -> bytes:
    answer = httpx.get(f"{url}/{query}", headers=headers, timeout=120)
    assert answer.status_code == 200
    return answer.content


def test_the_kept_page_is_gradios_byte_for_byte_per_root(space) -> None:
    demo, url = space
    cached = demo.server_app.hubskills_page
    plain = _page(url)
    assert cached.rendered == 1 and b"window.gradio_config" in plain
    assert _page(url, "?skill=hubskills/agent-skill-md&__sign=x") == plain  # kept
    assert cached.rendered == 1
    # `?deep_link=` (empty: the same page) goes to Gradio every time: its own rendering
    assert _page(url, "?deep_link=") == plain and cached.rendered == 1
    proxied = {"x-forwarded-host": "boss-hubskills.hf.space", "x-forwarded-proto": "https"}
    for headers in ({"host": "example.org:8080"}, proxied):
        kept = _page(url, **headers)
        assert kept != plain and kept == _page(url, "?deep_link=", **headers)
        assert _page(url, **headers) == kept
    assert b"https://boss-hubskills.hf.space" in _page(url, **proxied)
    assert cached.rendered == 3  # one page per root


def test_a_crowd_arriving_together_waits_for_one_rendering(space) -> None:
    demo, url = space
    cached = demo.server_app.hubskills_page
    headers = {"host": "crowd.example"}  # a root nobody asked for yet
    with ThreadPoolExecutor(20) as pool:
        pages = list(pool.map(lambda _: _page(url, **headers), range(20)))
    assert len(set(pages)) == 1 and cached.rendered == 1


def test_requests_the_page_could_differ_for_go_to_gradio(space) -> None:
    demo, url = space
    cached = demo.server_app.hubskills_page
    for query in ("?deep_link=nope", "?page=", "?all_endpoints=true"):
        httpx.get(f"{url}/{query}", timeout=120)
    assert httpx.head(f"{url}/", timeout=120).status_code == 200
    assert cached.rendered == 0 and not cached.pages
