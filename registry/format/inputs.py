"""An input file a case lists by path: held as bytes, described to a model, given to checks.

Kept apart from `suite` so the foreign-shape readers (`suite_import`) can build one without
importing the suite model that uses them.
"""

from __future__ import annotations

import mimetypes
from collections.abc import Mapping
from pathlib import PurePosixPath

from pydantic import BaseModel, ConfigDict, PrivateAttr, field_validator


def is_relative(name: str) -> bool:
    """Whether `name` is a plain relative POSIX path (no `..`, no backslash, not absolute)."""
    path = PurePosixPath(name)
    return bool(name) and "\\" not in name and not path.is_absolute() and ".." not in path.parts


class InputFile(BaseModel):
    """An input file kept in the skill folder, listed by its `path` there and held as bytes."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    path: str
    _data: bytes = PrivateAttr(default=b"")
    _loaded: bool = PrivateAttr(default=False)

    @classmethod
    def of(cls, path: str, data: bytes) -> InputFile:
        """The file at `path` (relative to the skill folder) with its bytes."""
        file = cls(path=path)
        file._data, file._loaded = data, True
        return file

    @field_validator("path")
    @classmethod
    def _relative(cls, path: str) -> str:
        if not is_relative(path):
            raise ValueError(f"{path!r} must be a relative path inside the skill folder")
        return path

    @property
    def data(self) -> bytes:
        """The file's bytes."""
        return self._data

    def text(self) -> str | None:
        """The file as UTF-8 text, or None for a binary file (NUL bytes or not UTF-8)."""
        if b"\0" in self._data:
            return None
        try:
            return self._data.decode("utf-8")
        except UnicodeDecodeError:
            return None

    def media_type(self) -> str:
        """The MIME type guessed from the name; a generic one when unknown."""
        guessed = mimetypes.guess_type(self.path)[0]
        return guessed or ("text/plain" if self.text() is not None else "application/octet-stream")


def listed_paths(case_id: str, case_files: Mapping[str, InputFile | str],
                 out: dict[str, bytes]) -> list[str]:
    """The paths a file-listing shape (skill-creator's, NVIDIA's) lists a case's files under:
    an `InputFile` keeps its path, inline text goes to `evals/files/<case id>/<name>`. Each
    file's bytes go into `out` (path -> bytes), for the writer to put in the skill folder."""
    paths = []
    for name, file in case_files.items():
        rel = file.path if isinstance(file, InputFile) else f"evals/files/{case_id}/{name}"
        out[rel] = file.data if isinstance(file, InputFile) else file.encode("utf-8")
        paths.append(rel)
    return paths
