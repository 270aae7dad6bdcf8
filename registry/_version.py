"""The package version, in a base module so that any layer may read it, and the versions of
what can change a run's results."""

__version__ = "0.1.0"


def tool_versions() -> dict[str, str]:
    """Versions that can change results: ours, Python's, and the model SDKs'."""
    import platform
    from importlib import metadata  # here: every `import registry` reads `__version__`

    versions = {"hubskills": __version__, "python": platform.python_version()}
    for package in ("openai", "anthropic", "llama_cpp_python", "huggingface_hub"):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            continue
    return versions
