"""Build hook: the wheel carries the example skills, and README.md becomes the package page.

The one copy of the example skills lives in the repository's `skills/` (three example skills,
their `evals/`, and their recorded runs in `skills/.runs/`); `build_py` copies it into the built
package as `registry/examples/`, so the local registry seeds itself from an installed wheel
exactly as from a clone (see `registry/stores/seed.py: default_seed_dir`). An editable install
reads `skills/` in place.

README.md is also the Space's card: it opens with the Space's YAML front matter, and it links
to `docs/` and shows `docs/images/` by paths relative to the repository, which a package
index page would show as text and as broken links. The long description is README.md with
the front matter cut and every relative link and image made absolute under the project's
`Source` URL (`[project.urls]` in pyproject.toml, the one place it is written).
"""

from __future__ import annotations

import re
import shutil
import tomllib
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
EXAMPLES = ROOT / "skills"
BRANCH = "main"  # the branch the package page's links open

# `[text](target "title")` and `![alt](target)`; `<target>` too. Group 3 is the target.
_INLINE = re.compile(r"(!?)(\[(?:[^\[\]\\]|\\.|\[[^\[\]]*\])*\])\(\s*(<[^>\n]*>|[^\s()]+)")
# `[label]: target` (a link reference definition), up to three spaces in.
_REFERENCE = re.compile(r"^( {0,3}\[[^\]]+\]:[ \t]*)(<[^>\n]*>|\S+)", re.MULTILINE)
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_ABSOLUTE = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]*:|#|//)")  # a scheme, an anchor, a host


class BuildPyWithExamples(build_py):
    """`build_py`, then `skills/` (dot-folders included) copied to `registry/examples/`."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False) or not EXAMPLES.is_dir():
            return
        target = Path(self.build_lib) / "registry" / "examples"
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(EXAMPLES, target,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".hubskills"))


def source_url(pyproject: Path = ROOT / "pyproject.toml") -> str:
    """The project's `Source` URL, from `[project.urls]`."""
    with pyproject.open("rb") as file:
        return tomllib.load(file)["project"]["urls"]["Source"].rstrip("/")


def absolute(target: str, source: str, *, image: bool) -> str:
    """`target` as a URL under `source`: a page for a link, the file's bytes for an image.

    A path is read from the repository's root (as README.md sits there); URLs, `//host/...`
    and anchors (`#x`) are left as they are.
    """
    if _ABSOLUTE.match(target):
        return target
    path = target.removeprefix("./").lstrip("/")
    # The Hub serves a file's bytes under /resolve/ (images are LFS there); GitHub and most
    # forges under /raw/. Pages are under /blob/ on both.
    raw = "resolve" if "huggingface.co" in source else "raw"
    return f"{source}/{raw if image else 'blob'}/{BRANCH}/{path}"


def _rewrite(text: str, source: str) -> str:
    def inline(found: re.Match[str]) -> str:
        bang, label, target = found.groups()
        bare = target[1:-1] if target.startswith("<") else target
        return f"{bang}{label}({absolute(bare, source, image=bool(bang))}"

    text = _INLINE.sub(inline, text)
    return _REFERENCE.sub(lambda m: m[1] + absolute(m[2].strip("<>"), source, image=False), text)


def long_description(readme: str, source: str) -> str:
    """README.md for a package page: no front matter, every link and image absolute."""
    if readme.startswith("---\n"):
        end = readme.find("\n---\n", 3)
        if end < 0:
            raise ValueError("README.md opens a front matter block that never closes")
        readme = readme[end + len("\n---\n"):]
    parts: list[str] = []  # prose (rewritten a paragraph at a time: a link may wrap) and code
    prose: list[str] = []
    fence = ""
    for line in readme.lstrip("\n").splitlines():
        opened = _FENCE.match(line)
        if fence:  # a code block stays as written, up to the fence that closes it
            parts.append(line)
            if opened and opened[1].startswith(fence) and not line.strip().strip(fence[0]):
                fence = ""
            continue
        if opened:
            fence = opened[1]
            parts.extend([_rewrite("\n".join(prose), source)] if prose else [])
            parts.append(line)
            prose = []
        else:
            prose.append(line)
    parts.extend([_rewrite("\n".join(prose), source)] if prose else [])
    return "\n".join(parts) + "\n"


if __name__ == "__main__":  # setuptools runs this file as __main__; tests import its functions
    setup(cmdclass={"build_py": BuildPyWithExamples},
          long_description=long_description((ROOT / "README.md").read_text(encoding="utf-8"),
                                            source_url()),
          long_description_content_type="text/markdown")
