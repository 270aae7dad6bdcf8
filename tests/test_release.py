"""A release: `make release`'s files, and the package page setup.py writes from README.md.

README.md is also the Space's card, so as a long description it would open with the Space's
YAML front matter as text and link to docs by relative paths. setup.py cuts the one and makes
the other absolute under `[project.urls] Source`. The build test runs `make package` (what
`make release` runs once the dev venv is there) with `--no-isolation`, so it needs no network,
only `build`, `twine` and setuptools>=77 in this venv (the dev extra has them); where
HUBSKILLS_TEST_WHEEL=1 (CI) a venv without them fails it rather than skips it.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import sys
import tarfile
import tomllib
import zipfile
from email import message_from_bytes
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import pytest
from conftest import REPO_ROOT
from source_tree import git_repository, run, succeeded

SOURCE = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]["urls"]["Source"]
#: every link and image target of a Markdown text, `[text](target)` or `[label]: target`
_TARGETS = re.compile(r"\]\(\s*<?([^)\s>]+)|^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?$", re.MULTILINE)


def _setup_module():
    """setup.py's functions, without running setup() (it runs only as __main__)."""
    spec = importlib.util.spec_from_file_location("hubskills_setup", REPO_ROOT / "setup.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _relative(markdown: str) -> list[str]:
    """Link and image targets outside fenced code that are neither URLs nor anchors."""
    prose = re.sub(r"^```.*?^```", "", markdown, flags=re.MULTILINE | re.DOTALL)
    targets = [a or b for a, b in _TARGETS.findall(prose)]
    return [t for t in targets if not re.match(r"^(https?://|#|mailto:)", t)]


def _assert_a_package_page(description: str) -> None:
    assert description.startswith("# hubskills\n"), description[:200]
    assert "sdk: gradio" not in description and "hf_oauth" not in description
    assert _relative(description) == []
    assert f"]({SOURCE}/resolve/main/docs/images/space.png)" in description
    assert f"]({SOURCE}/blob/main/docs/getting-started.md#install-as-a-tool)" in description


def test_the_long_description_is_the_readme_without_front_matter_or_relative_links():
    setup = _setup_module()
    assert setup.source_url() == SOURCE
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    assert readme.startswith("---\n") and _relative(readme)  # what the package page must not show
    page = setup.long_description(readme, SOURCE)
    _assert_a_package_page(page)
    # Code blocks are as written; only links and images change.
    blocks = re.findall(r"^```.*?^```", readme, flags=re.MULTILINE | re.DOTALL)
    assert blocks and all(block in page for block in blocks)


def test_links_are_made_absolute_wherever_markdown_puts_them():
    setup = _setup_module()
    text = ("---\ntitle: x\n---\n\nSee [the\nguide](docs/a.md#b), ![shot](./img/s.png),\n"
            "[site](https://example.com), [top](#install) and [ref].\n\n"
            "```md\n[kept](relative.md)\n```\n\n[ref]: <docs/c.md>\n")
    page = setup.long_description(text, "https://github.com/o/r")
    assert page == ("See [the\nguide](https://github.com/o/r/blob/main/docs/a.md#b), "
                    "![shot](https://github.com/o/r/raw/main/img/s.png),\n"
                    "[site](https://example.com), [top](#install) and [ref].\n\n"
                    "```md\n[kept](relative.md)\n```\n\n"
                    "[ref]: https://github.com/o/r/blob/main/docs/c.md\n")
    with pytest.raises(ValueError, match="never closes"):
        setup.long_description("---\ntitle: x\n", SOURCE)


def _has_release_tools() -> bool:
    try:
        setuptools = int(version("setuptools").split(".")[0])
        return setuptools >= 77 and all(version(n) for n in ("build", "twine"))
    except PackageNotFoundError:
        return False


@pytest.mark.slow  # a copy of the tree, an sdist and a wheel: about 10 s
def test_make_package_builds_an_sdist_and_a_wheel_that_twine_check_strict_passes(tmp_path):
    if not _has_release_tools() or shutil.which("make") is None:
        if os.environ.get("HUBSKILLS_TEST_WHEEL"):
            pytest.fail("make, build, twine and setuptools>=77 are needed: pip install -e '.[dev]'")
        pytest.skip("needs make, and build, twine and setuptools>=77: pip install -e '.[dev]'")
    tree, dist = git_repository(tmp_path / "source"), tmp_path / "dist"
    done = run(["make", "--no-print-directory", "-C", tree, "package",
                f"BIN={Path(sys.executable).parent}", "BUILD_FLAGS=--no-isolation",
                f"DIST={dist}"], env={**os.environ, "NO_COLOR": "1"})
    succeeded("make package", done)
    wheel, sdist = next(dist.glob("hubskills-*.whl")), next(dist.glob("hubskills-*.tar.gz"))
    said = re.sub(r"\x1b\[[0-9;]*m", "", done.stdout)  # twine colours PASSED
    assert re.findall(r"Checking (\S+): PASSED", said) == [str(wheel), str(sdist)]
    assert f"  {wheel}\n" in said and f"  {sdist}\n" in said  # where they are
    with zipfile.ZipFile(wheel) as archive:
        meta = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        wheel_meta = message_from_bytes(archive.read(meta))
    with tarfile.open(sdist) as archive:
        member = next(m for m in archive.getmembers() if m.name.count("/") == 1
                      and m.name.endswith("/PKG-INFO"))
        sdist_meta = message_from_bytes(archive.extractfile(member).read())  # type: ignore[union-attr]
    for meta in (wheel_meta, sdist_meta):
        assert meta["Description-Content-Type"] == "text/markdown"
        assert f"Source, {SOURCE}" in meta.get_all("Project-URL")
        _assert_a_package_page(meta.get_payload())
    assert wheel_meta.get_payload() == sdist_meta.get_payload()
