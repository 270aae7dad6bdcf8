"""Visitors *arriving* at the Space at once, as a browser arrives (issue 38); used by
`bench/space_load.py`, which runs it on each registry right after the first page.

A browser that opens the Space gets the page (`GET /`: the HTML with Gradio's whole config in
it), loads the front end's scripts, then joins the queue with each of the page's `load` events
(`POST /gradio_api/queue/join`: since issue 38's second round, the leaderboard's `/page_load`
alone) and reads their results from one stream (`GET /gradio_api/queue/data`, server-sent
events) until each completes; the leaderboard is filled when `/page_load`'s completes (seen in
chromium's network log, where no other call follows unless the visitor came with `?skill=` or
the skills, models or tags changed since the page was built). Each arriving visitor here does
the same over raw HTTP with a client of its own (a new connection, a new session), all
released at once after a barrier: the time to the page, and to the leaderboard's data. Not
sent: the front end's scripts and styles (106 static files, cached by a returning browser;
`space_load.py`'s first paint times one visitor with them) and the heartbeat stream a browser
holds open. The load events and their inputs are
read from the page's config once, before the burst, as the browser reads them from the page.
"""

from __future__ import annotations

import json
import re
import secrets
import statistics
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import httpx
import numpy as np

_CONFIG = re.compile(r"window\.gradio_config\s*=\s*(\{.*?\});\s*</script>", re.S)
LEADERBOARD = "page_load"  # the load event whose data fills the leaderboard


@dataclass(frozen=True)
class LoadEvent:
    """One `load` event the page's front end joins on arrival."""

    fn_index: int
    trigger_id: int
    data: list[Any]
    api_name: str


def load_events(url: str) -> list[LoadEvent]:
    """The page's `load` events, with the inputs' values as the front end sends them."""
    found = _CONFIG.search(httpx.get(url, timeout=60).text)
    if found is None:
        raise RuntimeError("the page holds no window.gradio_config")
    config = json.loads(found.group(1))
    components = {c["id"]: c for c in config["components"]}
    events = []
    for index, dependency in enumerate(config["dependencies"]):
        loads = [target for target, event in dependency["targets"] if event == "load"]
        if loads and dependency.get("backend_fn", True):  # js alone never reaches the server
            events.append(LoadEvent(dependency.get("id", index), loads[0],
                                    [_sent(components[i]) for i in dependency["inputs"]],
                                    dependency.get("api_name") or ""))
    return events


def _sent(component: dict) -> Any:
    """What the front end sends for a component's initial value (an empty textbox: "")."""
    value = component.get("props", {}).get("value")
    return "" if value is None and component.get("type") == "textbox" else value


def arrive(url: str, events: list[LoadEvent], start: threading.Barrier) -> tuple[float, float]:
    """One new visitor: (seconds to the page, seconds to the leaderboard's data)."""
    session = secrets.token_hex(6)
    with httpx.Client(base_url=url, timeout=120, verify=False) as http:  # no CA bundle load
        start.wait()
        began = time.perf_counter()
        http.get("/").raise_for_status()
        page = time.perf_counter() - began
        waiting = {}
        for event in events:
            joined = http.post("/gradio_api/queue/join", json={
                "data": event.data, "event_data": None, "fn_index": event.fn_index,
                "trigger_id": event.trigger_id, "session_hash": session})
            joined.raise_for_status()
            waiting[joined.json()["event_id"]] = event.api_name
        filled = None
        with http.stream("GET", "/gradio_api/queue/data",
                         params={"session_hash": session}) as stream:
            for line in stream.iter_lines():
                message = json.loads(line[5:]) if line.startswith("data:") else {}
                if message.get("msg") != "process_completed":
                    continue
                if not message.get("success", True):
                    raise RuntimeError(f"{waiting.get(message.get('event_id'))} failed")
                if waiting.pop(message.get("event_id"), None) == LEADERBOARD:
                    filled = time.perf_counter() - began
                if not waiting:
                    break
    if filled is None:
        raise RuntimeError("the stream ended before the leaderboard's data came")
    return page, filled


def arrivals(url: str, visitors: int = 100) -> dict[str, Any]:
    """`visitors` arriving at once: the page's and the data's median and p95, the errors,
    the visitors' own CPU."""
    events = load_events(url)
    barrier = threading.Barrier(visitors)

    def visit(_: int) -> tuple[float, float] | str:
        try:
            return arrive(url, events, barrier)
        except Exception as err:  # noqa: BLE001 - every failure is counted, whatever it is
            return str(err)[:120]

    cpu = time.process_time()
    with ThreadPoolExecutor(visitors) as pool:
        found = list(pool.map(visit, range(visitors)))
    done = [f for f in found if isinstance(f, tuple)]
    pages, data = [p for p, _ in done] or [0.0], [d for _, d in done] or [0.0]
    return {"events": [e.api_name for e in events], "errors": [f for f in found
                                                             if isinstance(f, str)],
            "page_median": statistics.median(pages), "page_p95": float(np.percentile(pages, 95)),
            "median": statistics.median(data), "p95": float(np.percentile(data, 95)),
            "max": max(data), "client_cpu": time.process_time() - cpu}


if __name__ == "__main__":
    print("measured by bench/space_load.py (100 visitors arriving on each registry)")
