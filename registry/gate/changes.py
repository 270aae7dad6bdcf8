"""Which skill folders changed since a git ref: what `hubskills ci` evaluates.

A skill folder is a folder holding a `SKILL.md` that git tracks or would track (untracked but
not ignored). A skill changed when any file under its folder differs between `base` and the
working tree (committed, staged or not) or is new and untracked, a skill nested in its folder
included (its files are the outer skill's too). Only git plumbing is asked, so
nothing here reads a skill's content or calls a model; the renames (`git diff -M`) are asked
once per gate run, by `find_changes`, and kept in `Changes`.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from registry.errors import HubskillsError

DEFAULT_BASES = ("origin/main", "HEAD~1")
CHECKOUT_HINT = ("run it in a git checkout with history (GitHub Actions: actions/checkout with "
                 "fetch-depth: 0)")


@dataclass(frozen=True)
class Changes:
    """The skills under the searched paths, split by whether they changed since ``base``."""

    root: Path
    base: str
    changed: list[Path]
    unchanged: list[Path]
    removed: list[str] = field(default_factory=list)  # skill folders the change deleted
    renamed: dict[str, str] = field(default_factory=dict)  # a moved file's path: where it was


def _git(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True,
                              check=False)
    except FileNotFoundError as err:
        raise HubskillsError("git is not installed, and `hubskills ci` compares git revisions",
                             hint="install git, then: hubskills ci") from err


def repo_root(where: Path) -> Path:
    """The top folder of the git work tree holding ``where``.

    Raises:
        HubskillsError: ``where`` is in no git work tree.
    """
    found = _git(where, "rev-parse", "--show-toplevel")
    if found.returncode != 0:
        raise HubskillsError(f"{where} is not inside a git repository, so there is no change "
                             "to evaluate", hint=CHECKOUT_HINT)
    return Path(found.stdout.strip())


def resolve_base(root: Path, base: str | None) -> str:
    """The commit ``base`` names (default: origin/main, else HEAD~1), as given.

    Raises:
        HubskillsError: the ref is unknown (or, without one, neither default exists).
    """
    for ref in [base] if base else DEFAULT_BASES:
        if _git(root, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}").returncode == 0:
            return ref
    tried = f"'{base}'" if base else " or ".join(DEFAULT_BASES)
    raise HubskillsError(f"git knows no commit {tried} in {root}",
                         hint=f"git fetch origin, or name one: hubskills ci --base REF  "
                              f"({CHECKOUT_HINT})")


def _listed(root: Path, *args: str) -> list[str]:
    listed = _git(root, args[0], "-z", *args[1:])
    if listed.returncode != 0:
        raise HubskillsError(f"git {args[0]} failed in {root}: {listed.stderr.strip()}",
                             hint=CHECKOUT_HINT)
    return [p for p in listed.stdout.split("\0") if p]


def _within(path: str, scopes: list[PurePosixPath]) -> bool:
    pure = PurePosixPath(path)
    return not scopes or any(s == PurePosixPath(".") or pure == s or s in pure.parents
                             for s in scopes)


def find_changes(paths: list[Path], base: str | None, *, cwd: Path) -> Changes:
    """The skills under ``paths`` (default: the whole work tree) changed since ``base``.

    Raises:
        HubskillsError: not in a git work tree, an unknown ref, or a path outside the tree.
    """
    root = repo_root(cwd)
    ref = resolve_base(root, base)
    scopes: list[PurePosixPath] = []
    for path in paths:
        full = (cwd / path).resolve()
        if not full.is_relative_to(root.resolve()):
            raise HubskillsError(f"{path} is outside the git work tree {root}",
                                 hint="hubskills ci PATH  # a folder inside the checkout")
        scopes.append(PurePosixPath(full.relative_to(root.resolve()).as_posix() or "."))
    present = _listed(root, "ls-files", "--cached", "--others", "--exclude-standard")
    skills = sorted({str(PurePosixPath(p).parent) for p in present
                     if PurePosixPath(p).name == "SKILL.md" and _within(p, scopes)
                     and (root / p).is_file()}, key=lambda s: (-s.count("/"), s))
    touched = [*_listed(root, "diff", "--name-only", ref, "--"),
               *_listed(root, "ls-files", "--others", "--exclude-standard")]
    changed: set[str] = set()
    for file in touched:
        # Every skill folder holding the file changed: a skill inside another's folder is
        # among the outer skill's files too (it ships them), so a pull request cannot take a
        # change away from the outer skill by adding a SKILL.md beside it.
        changed.update(s for s in skills if s == "." or PurePosixPath(s) in
                       PurePosixPath(file).parents)
    ordered = sorted(skills)
    deleted, renamed = _moves(root, ref)
    gone = sorted({str(PurePosixPath(p).parent) for p in deleted
                   if PurePosixPath(p).name == "SKILL.md" and _within(p, scopes)} - set(skills))
    return Changes(root, ref, [root / s for s in ordered if s in changed],
                   [root / s for s in ordered if s not in changed], gone, renamed)


def _moves(root: Path, ref: str) -> tuple[list[str], dict[str, str]]:
    """The files deleted since ``ref`` (a renamed one is not: it moved) and each renamed
    file's new path mapped to its old one, from one `git diff -M` (records of `-z
    --name-status`: a status, then a path, or two for a rename or a copy)."""
    fields = _listed(root, "diff", "-M", "--name-status", ref, "--")
    deleted: list[str] = []
    renamed: dict[str, str] = {}
    index = 0
    while index + 1 < len(fields):
        status = fields[index]
        if status[:1] in ("R", "C") and index + 2 < len(fields):
            if status[:1] == "R":
                renamed[fields[index + 2]] = fields[index + 1]
            index += 3
            continue
        if status == "D":
            deleted.append(fields[index + 1])
        index += 2
    return deleted, renamed


def name_at(changes: Changes, folder: Path) -> str | None:
    """The `name` the skill in ``folder`` had at the changes' base (None: no SKILL.md there
    then, or one that does not parse): what its published versions are filed under, whatever
    the change renamed it to."""
    from registry.format.skill import parse_frontmatter, split_frontmatter

    shown = _git(changes.root, "show",
                 f"{changes.base}:{_path_at(changes, folder, folder / 'SKILL.md')}")
    if shown.returncode != 0:
        return None
    try:
        data, _ = parse_frontmatter(split_frontmatter(shown.stdout)[0])
    except HubskillsError:
        return None
    name = data.get("name")
    return name if isinstance(name, str) and name else None


def cases_removed(changes: Changes, folder: Path, suite: Path) -> tuple[list[str], int]:
    """The case ids the suite file ``suite`` of the skill in ``folder`` held at the changes'
    base that it holds no more, and how many it held then (([], 0): no such file then, or one
    that does not parse). The change controls the suite: a reviewer should see what it took
    out."""
    import json

    shown = _git(changes.root, "show",
                 f"{changes.base}:{_path_at(changes, folder, suite)}")
    try:
        before = [str(c["id"]) for c in json.loads(shown.stdout)["cases"]] \
            if shown.returncode == 0 else []
        now = {str(c["id"]) for c in json.loads(suite.read_text(encoding="utf-8"))["cases"]}
    except (ValueError, KeyError, TypeError, OSError):
        return [], 0
    return [case for case in before if case not in now], len(before)


def _path_at(changes: Changes, folder: Path, file: Path) -> str:
    """The path ``file`` had at the changes' base, by its own name: a link is not followed (a
    suite file the change turned into a link to a shorter one is still compared with the file
    of that name at the base), and a skill whose change moved its folder (a rename moves it,
    as a skill's folder is its name) is found where it was (a walk: a renamed skill was
    compared with nothing)."""
    root = changes.root
    try:
        inner = file.relative_to(folder)
    except ValueError:  # a suite given from elsewhere
        return file.resolve().relative_to(root.resolve()).as_posix()
    now = (folder.resolve().relative_to(root.resolve()) / inner).as_posix()
    if _git(root, "cat-file", "-e", f"{changes.base}:{now}").returncode == 0:
        return now
    return changes.renamed.get(now, now)
