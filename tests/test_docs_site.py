"""The documentation: the MkDocs site builds with --strict (a broken link, anchor or snippet
fails it), its API page lists every public name, and the README stays one screen of links."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import registry

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"


def _build(root: Path, site: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(site)],
                          cwd=root, capture_output=True, text=True, timeout=300,
                          env={"PATH": "/usr/bin:/bin", "NO_MKDOCS_2_WARNING": "1"})


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    site = tmp_path_factory.mktemp("site")
    done = _build(ROOT, site)
    assert done.returncode == 0, done.stdout + done.stderr
    return site


def _text(site: Path, page: str) -> str:
    html = (site / page / "index.html").read_text(encoding="utf-8")
    return re.sub(r"<[^>]+>", "", html)


@pytest.mark.slow  # a site build: 5-10 s
def test_every_page_in_docs_is_built(site):
    pages = sorted(p.stem for p in (ROOT / "docs").glob("*.md"))
    assert "index" in pages and len(pages) >= 19  # a page left out of `nav` fails the build
    for page in pages:
        built = site / ("" if page == "index" else page) / "index.html"
        assert built.is_file(), page


@pytest.mark.slow  # a site build: 5-10 s
def test_the_api_page_documents_every_public_name(site):
    sys.path.insert(0, str(ROOT / "docs"))
    try:
        import hooks
    finally:
        sys.path.remove(str(ROOT / "docs"))
    listed = [name for _, _, names in hooks._groups() for name, _ in names]
    assert sorted(listed) == sorted(registry._EXPORTS)
    html = (site / "api" / "index.html").read_text(encoding="utf-8")
    headings = set(re.findall(r'<h3 id="[^"]+" class="doc doc-heading">\s*registry\.(\w+)', html))
    assert headings == set(registry._EXPORTS), set(registry._EXPORTS) ^ headings
    first_line = registry.load_skill.__doc__.strip().splitlines()[0]
    assert first_line in _text(site, "api")  # from the docstring


@pytest.mark.slow  # a site build: 5-10 s
def test_the_pages_show_the_readme_blocks_the_readme_tests_run(site):
    """The CLI tour and the Python example are included from the README (tested there)."""
    tour, api = _text(site, "getting-started"), _text(site, "api")
    assert "hubskills suite show hubskills/agent-skill-md" in tour
    assert "registry.run_evaluation(skill.path, config, settings)" in api
    for page in (tour, api):
        assert "--8&lt;--" not in page and "```" not in page  # included as code, not as text
    assert "kernel-builder-cuda-kernels" in _text(site, "skills")


@pytest.mark.slow  # a site build: 5-10 s
def test_a_broken_link_fails_the_build(tmp_path):
    for name in ("mkdocs.yml", "README.md"):
        shutil.copy(ROOT / name, tmp_path / name)
    shutil.copytree(ROOT / "docs", tmp_path / "docs")
    (tmp_path / "registry").symlink_to(ROOT / "registry")
    page = tmp_path / "docs" / "models.md"
    page.write_text(page.read_text() + "\nSee [the missing page](no-such-page.md#nowhere).\n")
    done = _build(tmp_path, tmp_path / "site")
    assert done.returncode != 0
    assert "no-such-page.md" in done.stdout + done.stderr


def test_the_readme_fits_on_a_screen_and_links_into_the_docs():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 250
    assert text.startswith("---\ntitle: hubskills\n")  # the Space's card keeps its front matter
    targets = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text)
    local = [t for t in targets if not t.startswith("http")]
    assert "docs/images/space.png" in local and "docs/getting-started.md" in local
    assert [t for t in local if not (ROOT / t).exists()] == []
