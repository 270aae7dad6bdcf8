"""Which published version of a skill a folder is: the value results are filed under.

A run's rows and manifest carry it as three fields (`skill_repo`, `skill_revision`,
`skill_version`); everything else passes one `SkillVersionRef`. `install.identity` finds it for
a folder (from a pulled folder's marker, or its content matched against a repo's card).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SkillVersionRef:
    """A published skill version: its registry `repo`, the `revision` (commit sha) and the
    `version` its card gives (None when it gives none); `source` says how it was found."""

    repo: str
    revision: str
    version: str | None = None
    source: str = ""

    @property
    def label(self) -> str:
        """`ns/name v1.2.0` (`ns/name@<sha prefix>` without a version)."""
        return f"{self.repo} v{self.version}" if self.version else \
            f"{self.repo}@{self.revision[:12]}"
