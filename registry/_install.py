"""How this hubskills was installed, and the command that adds an extra to *that* install.

A hint that says `make run` helps only a clone; `pip install 'hubskills[local]'` helps only an
environment pip manages, and only once a release is on the index. Here the hint is written for
the install the user has: a clone (an editable install beside its Makefile), a pipx or uv tool
(their own virtual environments), or a plain environment, and it names the extra's
requirements as this very installation's metadata lists them, so it works before a release
too (`pipx inject hubskills 'gradio[oauth]>=6.31,<7'`).
"""

from __future__ import annotations

import re
import shlex
import sys
from functools import cache
from importlib.metadata import PackageNotFoundError, distribution, requires
from pathlib import Path
from typing import Literal

Kind = Literal["clone", "pipx", "uv", "pip"]
_CHECKOUT = Path(__file__).resolve().parent.parent  # the folder holding `registry/`


@cache
def install_kind() -> Kind:
    """`clone` (a checkout with its Makefile), `pipx`, `uv` (a uv tool) or `pip`."""
    if (_CHECKOUT / "Makefile").is_file() and (_CHECKOUT / "pyproject.toml").is_file():
        return "clone"
    prefix = Path(sys.prefix)
    if (prefix / "pipx_metadata.json").is_file() or "pipx" in prefix.parts:
        return "pipx"
    if (prefix / "uv-receipt.toml").is_file():
        return "uv"
    return "pip"


def extra_requirements(extra: str) -> list[str]:
    """The requirements of `hubskills[extra]`, as the installed metadata lists them."""
    try:
        listed = requires("hubskills") or []
    except PackageNotFoundError:
        return []
    marker = re.compile(r"""extra\s*==\s*["']""" + re.escape(extra) + r"""["']""")
    return [req.split(";", 1)[0].strip() for req in listed if ";" in req
            and marker.search(req.split(";", 1)[1])]


def make_here(target: str) -> str | None:
    """`make TARGET` where it works: in a clone, run from the checkout (the folder holding the
    Makefile, which has that target); None elsewhere. A walk: doctor in an editable install,
    run from a project folder, said `make agent-clis`, and make found no Makefile there."""
    if install_kind() != "clone":
        return None
    try:
        here = Path.cwd().resolve() == _CHECKOUT
        makefile = (_CHECKOUT / "Makefile").read_text(encoding="utf-8") if here else ""
    except OSError:  # the current folder was removed, or the Makefile is unreadable
        return None
    found = re.search(rf"^{re.escape(target)}\s*:", makefile, re.M)
    return f"make {target}" if found else None


def add_extra(extra: str) -> str:
    """The command that adds `hubskills[extra]` to this install (`make run` only where it
    works: `make_here`)."""
    kind = install_kind()
    if kind == "clone":
        return ((make_here("run") if extra in ("local", "space") else None)
                or f"{shlex.quote(sys.executable)} -m pip install -e "
                   f"{shlex.quote(f'{_CHECKOUT}[{extra}]')}")
    wanted = " ".join(shlex.quote(r) for r in extra_requirements(extra))
    if not wanted:
        return f"pip install 'hubskills[{extra}]'"
    if kind == "pipx":
        return f"pipx inject hubskills {wanted}"
    return f"{pip_install()} {wanted}"


def pip_install() -> str:
    """The command that installs into this environment (a uv tool's or a plain one): its own
    `python -m pip install`, or `uv pip install --python PYTHON` for a uv tool and for an
    environment uv made and installed hubskills into (a `uv venv` has no pip: `-m pip` there
    answered `No module named pip`)."""
    python = shlex.quote(sys.executable)
    if install_kind() == "uv" or (not _has_pip() and installer() == "uv"):
        return f"uv pip install --python {python}"
    return f"{python} -m pip install"


def _has_pip() -> bool:
    """Whether pip is installed here, by its metadata: `find_spec("pip")` would make
    setuptools' distutils shim (Python < 3.12) step aside for pip, and a later
    `import setuptools` in this process then fails on the standard library's distutils."""
    try:
        distribution("pip")
    except PackageNotFoundError:
        return False
    return True


def installer() -> str:
    """What installed hubskills here, as its metadata's INSTALLER file says (`pip`, `uv`)."""
    try:
        return (distribution("hubskills").read_text("INSTALLER") or "").strip()
    except PackageNotFoundError:
        return ""


def upgrade() -> str:
    """The command that brings this install to the newest hubskills (a record written by a
    newer version names something this one does not know).

    From a git URL the version stays 0.1.0 from commit to commit, and pip (so `pipx upgrade`)
    keeps an installed version it sees as the same: tried with pip 26.3 and pipx 1.18.4, both
    left the newer commit out. `pipx reinstall` fetches the spec anew (and drops what `pipx
    runpip` added: doctor names it again), pip is told to reinstall hubskills itself, and
    `uv tool upgrade` does fetch the newest commit (and drops what `uv pip` added)."""
    kind = install_kind()
    if kind == "clone":
        checkout = shlex.quote(str(_CHECKOUT))
        return f"git -C {checkout} pull && make -C {checkout} install"
    source = _installed_from()
    if kind == "pipx":
        return "pipx reinstall hubskills && hubskills doctor" if source else \
            "pipx upgrade hubskills"
    if kind == "uv":
        return "uv tool upgrade hubskills && hubskills doctor"
    pip = pip_install()
    if source is None:
        return f"{pip} -U hubskills"
    source = shlex.quote(source)
    return f"{pip} -U {source} && {pip} --force-reinstall --no-deps {source}"


def hf_command() -> str:
    """huggingface_hub's `hf` as this install can run it: `hf` where it is on PATH, else the
    one beside this Python (a pipx or uv tool puts only `hubskills` on PATH, so a hint of
    `hf auth login` answered `command not found` there), as `~/…` under HOME. A clone's is
    run from its activated `.venv` or by make: `hf`."""
    import shutil

    beside = Path(sys.executable).parent / "hf"
    if install_kind() == "clone" or shutil.which("hf") or not beside.is_file():
        return "hf"
    home = str(Path.home()).rstrip("/")
    where = str(beside)
    if home and where.startswith(home + "/"):
        return "~/" + shlex.quote(where[len(home) + 1:])
    return shlex.quote(where)


def login_hint() -> str:
    """The hint of a missing Hugging Face token."""
    return f"{hf_command()} auth login  or  export HF_TOKEN=..."


def _installed_from() -> str | None:
    """The URL pip installed hubskills from (PEP 610's direct_url.json), None from an index."""
    try:
        return source_of(distribution("hubskills").read_text("direct_url.json"))
    except PackageNotFoundError:
        return None


def source_of(direct_url: str | None) -> str | None:
    """What `pip install -U` takes to fetch anew from where a PEP 610 record says the install
    came from: `git+URL` for a VCS, the URL of an archive; None for an index or a local folder
    (nothing newer to fetch from it)."""
    import json

    try:
        record = json.loads(direct_url) if direct_url else {}
        url, vcs = record.get("url"), (record.get("vcs_info") or {}).get("vcs")
    except (ValueError, AttributeError):
        return None
    if not isinstance(url, str) or not url or (url.startswith("file:") and not vcs):
        return None
    return f"{vcs}+{url}" if vcs and not url.startswith(f"{vcs}+") else url
