"""Every pointer to the documentation that a user can see works from a tool install.

A `pipx install hubskills` has no docs/ folder: a hint or a `--help` text that says
"see docs/pulling.md" leads nowhere there. They name the page's address instead
(`registry._docs.doc`); these tests fail on a relative mention in any message or help text, and
on an address whose page or heading does not exist.
"""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

from click.testing import CliRunner
from conftest import REPO_ROOT
from markdown.extensions.toc import slugify

from registry._docs import SOURCE, doc
from registry.cli import _reference, cli
from registry.errors import HubskillsError

RELATIVE = re.compile(r"(?<![/\w])docs/[\w-]+\.md")
ADDRESS = re.compile(re.escape(f"{SOURCE}/blob/main/docs/") + r"([\w-]+)\.md(?:#([\w-]+))?")
SOURCES = sorted([*(REPO_ROOT / "registry").rglob("*.py"), *(REPO_ROOT / "space").rglob("*.py")])


def headings(page: str) -> set[str]:
    """The anchors MkDocs gives the headings of docs/`page`.md."""
    text = (REPO_ROOT / "docs" / f"{page}.md").read_text(encoding="utf-8")
    return {slugify(line.lstrip("#").strip(), "-")
            for line in text.splitlines() if re.match(r"#{1,6} ", line)}


def strings_users_read(path: Path) -> list[str]:
    """Every string constant in `path` except module, class and function docstrings (a click
    command's docstring is its help: the help walk reads those)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef,
                                       ast.AsyncFunctionDef))
                  and node.body and isinstance(node.body[0], ast.Expr)
                  and isinstance(node.body[0].value, ast.Constant)}
    return [node.value for node in ast.walk(tree) if isinstance(node, ast.Constant)
            and isinstance(node.value, str) and id(node) not in docstrings]


def test_the_address_is_the_package_pages_source():
    pyproject = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())
    assert pyproject["project"]["urls"]["Source"] == SOURCE
    assert doc("pulling", "dependencies") == f"{SOURCE}/blob/main/docs/pulling.md#dependencies"


def test_no_message_names_a_docs_file_by_a_relative_path():
    relative = [(path.relative_to(REPO_ROOT), text) for path in SOURCES
                for text in strings_users_read(path) if RELATIVE.search(text)]
    assert relative == []


def test_no_help_text_names_a_docs_file_by_a_relative_path():
    for ctx, command in _reference.commands():
        text = command.get_help(ctx)
        assert not RELATIVE.search(text), (ctx.command_path, RELATIVE.findall(text))
    pulled = CliRunner().invoke(cli, ["pull", "--help"], env={"COLUMNS": "200"})
    assert f"{SOURCE}/blob/main/docs/mcp.md" in pulled.output  # the walk reads real help


def test_every_address_in_the_code_is_a_page_and_heading_that_exist():
    found = {match.groups() for path in SOURCES
             for match in ADDRESS.finditer(path.read_text(encoding="utf-8"))}
    calls = {(node.args[0].value, node.args[1].value if len(node.args) > 1 else None)
             for path in SOURCES for node in ast.walk(ast.parse(path.read_text()))
             if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "doc"
             and all(isinstance(arg, ast.Constant) for arg in node.args)}
    assert ("pulling", "dependencies") in calls and ("mcp", None) in found
    for page, anchor in found | calls:
        assert (REPO_ROOT / "docs" / f"{page}.md").is_file(), page
        assert anchor is None or anchor in headings(page), (page, anchor)


def test_a_refusal_hint_names_the_address():
    from registry.install.sources import parse_source

    try:
        parse_source("github:")
    except HubskillsError as error:
        assert f"{SOURCE}/blob/main/docs/pulling.md" in (error.hint or "")
    else:
        raise AssertionError("a malformed git source was accepted")
