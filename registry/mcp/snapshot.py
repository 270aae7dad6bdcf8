"""A catalog that answers from reads someone else already made and keeps: the Space's.

`snapshot_catalog` lists what a snapshot holds (its skills, its leaderboard `Board`, read back
into `_meta` figures once per snapshot by `meta.board_figures`) and serves files from folders
already fetched, so an MCP client costs the Space no store read its pages have not made. Each
revision's frontmatter and scan summary are kept on disk under the Space's home
(`<home>/cache/revision-facts/`, as `hubskills mcp` keeps them) when it is given one: a
restarted Space answers its first walk from them instead of parsing and scanning every skill
again (a home it cannot write keeps them in memory alone).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from pathlib import Path
from typing import Any

from registry.mcp.catalog import Catalog
from registry.mcp.meta import Figures, board_figures
from registry.mcp.revision import read_folder
from registry.results.board import Board
from registry.stores.base import SkillInfo, SkillStore


class SnapshotReads:
    """The listing from a snapshot: `token()` names it, `load()` gives its skills and board."""

    def __init__(self, token: Callable[[], Hashable],
                 load: Callable[[], tuple[list[SkillInfo], Board]]) -> None:
        self._token, self._load = token, load

    def token(self) -> Hashable:
        """The snapshot's key: it moves when the skills or the results do."""
        return self._token()

    def load(self) -> tuple[list[SkillInfo], Figures, str | None]:
        """The snapshot's skills and its board's figures."""
        skills, board = self._load()
        return list(skills), board_figures(board), None


class FolderCatalog(Catalog):
    """A catalog whose files are read from folders fetched elsewhere (`folder(repo, sha)`)."""

    def __init__(self, store: SkillStore, folder: Callable[[str, str], Path],
                 **options: Any) -> None:
        super().__init__(store, **options)
        self.folder = folder

    def files(self, repo: str, sha: str) -> tuple[dict[str, bytes], frozenset[str]]:
        """Every regular file of the fetched folder (links are never followed)."""
        root = self.folder(repo, sha)
        paths = sorted(p.relative_to(root).as_posix() for p in root.rglob("*")
                       if p.is_file() and not p.is_symlink())
        return read_folder(root, paths)


def snapshot_catalog(store: SkillStore, *, token: Callable[[], Hashable],
                     load: Callable[[], tuple[list[SkillInfo], Board]],
                     folder: Callable[[str, str], Path], listing: str = "latest",
                     home: Path | None = None) -> Catalog:
    """A catalog listing a snapshot's skills and figures, serving files from `folder`; with
    `home`, the revisions' facts are kept under it (`stores.revision_facts.cache_dir`)."""
    from registry.stores.revision_facts import cache_dir

    return FolderCatalog(store, folder, listing=listing, reads=SnapshotReads(token, load),
                         facts=cache_dir(home) if home is not None else None)
