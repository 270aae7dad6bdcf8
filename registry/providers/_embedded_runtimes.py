"""The two llama.cpp runtimes the embedded model runs on, behind one small interface.

`xllamacpp` (what the `[local]` extra installs: a prebuilt manylinux wheel, nothing to compile)
is preferred; `llama-cpp-python` (an sdist that compiles llama.cpp at install) is used where it
is the one installed. Both load the same GGUF, apply the chat template stored in it, and answer
an OpenAI-style chat request with an OpenAI-style dict, so the provider does not care which
one runs.
"""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Any, Protocol

from registry._version import EMBEDDED_RUNTIMES, embedded_runtime

# In order of preference: the first one installed runs (run manifests record it: _version).
RUNTIMES = EMBEDDED_RUNTIMES


class PromptTooLong(Exception):
    """The prompt and the answer's room do not fit the loaded context."""


class Runtime(Protocol):
    """A loaded model: one chat completion at a time, OpenAI-style dicts in and out."""

    package: str
    threads: int

    def create_chat_completion(self, messages: list[dict[str, str]],
                               **options: Any) -> dict[str, Any]:
        """Answer `messages` (options: temperature, max_tokens, seed, stop), as
        `llama_cpp.Llama.create_chat_completion` does."""
        ...

    def set_threads(self, threads: int) -> None:
        """Generate with `threads` threads from the next call on."""
        ...

    def close(self) -> None:
        """Free the model."""
        ...


def installed() -> str | None:
    """The distribution name of the runtime that would run (None: neither is installed)."""
    return embedded_runtime()


def open_runtime(path: Path, *, n_ctx: int, threads: int, package: str | None = None) -> Runtime:
    """Load the GGUF at `path` on `package` (a name in `RUNTIMES`; default: `installed()`)."""
    if (package or installed()) == "xllamacpp":
        return _Xllamacpp(path, n_ctx=n_ctx, threads=threads)
    return _LlamaCppPython(path, n_ctx=n_ctx, threads=threads)


class _Xllamacpp:
    """llama.cpp's own server engine, called in-process (no HTTP round trip)."""

    package = "xllamacpp"

    def __init__(self, path: Path, *, n_ctx: int, threads: int) -> None:
        self._path, self._n_ctx = path, n_ctx
        self.threads = threads
        self._server: Any = self._load(threads)

    def _load(self, threads: int) -> Any:
        import xllamacpp

        params = xllamacpp.CommonParams()
        params.model.path = str(self._path)
        params.n_ctx = self._n_ctx
        params.n_parallel = 1
        params.cpuparams.n_threads = threads
        params.cpuparams_batch.n_threads = threads
        params.verbosity = 0  # errors only: llama.cpp's load log is ~30 lines on stderr
        # Its default (auto: on, on CPUs) changes the numbers enough to change answers at
        # temperature 0 ("What is 2 + 2?" then runs on past "4."); off, as in llama-cpp-python.
        params.flash_attn_type = xllamacpp.llama_flash_attn_type.LLAMA_FLASH_ATTN_TYPE_DISABLED
        params.warmup = False
        # The engine also listens on an ephemeral 127.0.0.1 port, open to every local process
        # and web page by default; hubskills never uses it, so it gets a key nobody knows.
        params.api_keys = [secrets.token_urlsafe(32)]
        return xllamacpp.Server(params)

    def create_chat_completion(self, messages: list[dict[str, str]],
                               **options: Any) -> dict[str, Any]:
        request = {"messages": messages, **options}
        response: dict[str, Any] = self._server.handle_chat_completions(request)
        error = response.get("error")
        if error:
            message = str(error.get("message") or error)
            if error.get("type") == "exceed_context_size_error":
                raise PromptTooLong(message)
            raise RuntimeError(f"xllamacpp: {message}")
        return response

    def set_threads(self, threads: int) -> None:
        # The engine fixes its threads when it loads; a reload takes about a second.
        _retire(self._server)
        self._server = self._load(threads)
        self.threads = threads

    def close(self) -> None:
        _retire(self._server)
        self._server = None


#: Engines replaced or closed, kept until the process ends: xllamacpp's `Server` destructor
#: joins its HTTP listener, and one destroyed soon after it started (or by a collection that
#: runs while a new thread starts, holding the GIL) waited forever on a listener still
#: blocked in accept(), which hung the whole test suite at a `to_thread` call.
_RETIRED: list[Any] = []


def _retire(server: Any) -> None:
    if server is not None:
        _RETIRED.append(server)


class _LlamaCppPython:
    """`llama_cpp.Llama`, for installs that have llama-cpp-python and not xllamacpp."""

    package = "llama-cpp-python"

    def __init__(self, path: Path, *, n_ctx: int, threads: int) -> None:
        import llama_cpp

        self.threads = threads
        # Any: llama-cpp-python is optional (not in the dev install), so its types cannot be
        # relied on; its TypedDict messages and responses are the plain dicts used here.
        self._llama: Any = llama_cpp.Llama(model_path=str(path), n_ctx=n_ctx, n_threads=threads,
                                      n_threads_batch=threads, verbose=False)

    def create_chat_completion(self, messages: list[dict[str, str]],
                               **options: Any) -> dict[str, Any]:
        try:
            response: dict[str, Any] = self._llama.create_chat_completion(messages, **options)
        except ValueError as err:  # llama-cpp-python's only error for a prompt over n_ctx
            raise PromptTooLong(str(err)) from err
        return response

    def set_threads(self, threads: int) -> None:
        import llama_cpp

        llama_cpp.llama_set_n_threads(self._llama.ctx, threads, threads)
        self.threads = threads

    def close(self) -> None:
        self._llama.close()
