"""A path argument or option that must exist, refused as a `HubskillsError` (exit 1, a hint).

`click.Path(exists=True)` refuses a missing path as a usage error (exit 2, the usage text, no
next step). A path that is not there is bad input, not a misuse of the command: it says
"no such folder" with a hint at the closest name beside it (`skills/pdf-tool`: `pdf-tools`),
or else at what makes one (`hubskills new pdf`). Click's other checks (a file where a folder
was wanted, an unreadable path) become the same kind of error.
"""

from __future__ import annotations

import difflib
import shlex
from pathlib import Path
from typing import Any

import click

from registry.errors import HubskillsError

#: Where agents keep their session traces (`trace show`, `generate --from`), for `look_in`.
AGENT_TRACES = (("~/.claude/projects", "Claude Code"), ("~/.codex/sessions", "Codex"))


class ExistingPath(click.ParamType):
    """A `Path` that exists (`kind`: "folder", "file" or "path"), else a `HubskillsError`.

    Args:
        kind: what must be there; "path" takes a file or a folder.
        retry: the command line with `{path}`, shown with the closest existing name put in.
        otherwise: the hint when nothing close exists; `{new}` is filled in with
            `hubskills new NAME [--dir PARENT]`, which makes a skill folder there.
        look_in: folders (`~/...`) and what keeps them there: when nothing close exists,
            the hint lists those of them that exist here (`ls ~/.claude/projects`), and is
            `otherwise` only when none does (an `ls` of a missing folder fails).
    """

    def __init__(self, kind: str, *, retry: str, otherwise: str,
                 look_in: tuple[tuple[str, str], ...] = ()) -> None:
        self.kind, self.retry, self.otherwise, self.look_in = kind, retry, otherwise, look_in
        self.name = kind  # the metavar of an option: FOLDER, FILE, PATH
        self.what = "file or folder" if kind == "path" else kind

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> Any:
        """`value` as a `Path` if it is there and of the right kind."""
        if isinstance(value, Path) and value.exists():
            return value
        path = Path(value)
        if not path.exists():
            raise HubskillsError(f"{value}: no such {self.what}", hint=self._hint(path))
        if self.kind == "folder" and not path.is_dir():  # `skills/pdf/SKILL.md`: its folder
            raise HubskillsError(f"{value} is a file, not a folder",
                                 hint=self._retry(path.parent, "the folder that holds it"))
        if self.kind == "file" and path.is_dir():
            raise HubskillsError(f"{value} is a folder, not a file", hint=self._hint(path))
        try:  # what click checks beyond existence (readable), as our kind of error
            return click.Path(path_type=Path, exists=True).convert(value, param, ctx)
        except click.BadParameter as err:
            raise HubskillsError(err.message, hint=self._hint(path)) from None

    def shell_complete(self, ctx: click.Context, param: click.Parameter,
                       incomplete: str) -> list[Any]:
        """Complete as the shell completes paths, as `click.Path` does."""
        from click.shell_completion import CompletionItem

        return [CompletionItem(incomplete, type="dir" if self.kind == "folder" else "file")]

    def _hint(self, path: Path) -> str:
        close = closest_sibling(path, self.kind)
        if close is not None:
            return self._retry(close, "the closest name there")
        here = [(folder, who) for folder, who in self.look_in
                if Path(folder).expanduser().is_dir()]
        if here:
            return (f"ls {' '.join(folder for folder, _ in here)}  # where "
                    f"{' and '.join(who for _, who in here)} keep"
                    f"{'s' if len(here) == 1 else ''} them")
        parent = "" if path.parent == Path(".") else f" --dir {shlex.quote(str(path.parent))}"
        return self.otherwise.format(new=f"hubskills new {shlex.quote(path.name)}{parent}")

    def _retry(self, path: Path, why: str) -> str:
        return f"{self.retry.format(path=shlex.quote(str(path)))}  # {why}"


def closest_sibling(path: Path, kind: str = "path") -> Path | None:
    """The entry beside `path` whose name is closest to its name (a folder for "folder", a
    file for "file"), when one is close enough to be a typo; None otherwise."""
    parent = path.parent
    try:
        entries = [entry for entry in parent.iterdir() if entry != path
                   and (kind == "path" or entry.is_dir() == (kind == "folder"))]
    except OSError:  # no such parent, or not readable: nothing to offer
        return None
    # stems: `nope.jsonl` is not a typo of `notes.jsonl`, though the shared suffix makes
    # the whole names alike; `notes.json` is one of `notes.jsonl`
    same_suffix_last = sorted(entries, key=lambda entry: entry.suffix == path.suffix)
    stems = {entry.stem: entry for entry in same_suffix_last}
    close = difflib.get_close_matches(path.stem, list(stems), n=1, cutoff=0.75)
    return parent / stems[close[0]].name if close else None
