"""Errors shown to users. Each carries a hint naming the next command to run."""

from __future__ import annotations

import shlex


def hint_command(*words: str) -> str:
    """`hubskills WORDS...` as a hint or a next-step line prints it: each word quoted for a
    shell (`shlex`), so a source with a space or a `#` (`'mcp+stdio:hubskills mcp#x'`, a
    folder `'/tmp/my skills/x'`) pastes as the one argument it is; a plain word stays as is."""
    return shlex.join(["hubskills", *words])


class HubskillsError(Exception):
    """Base for errors shown to users; `hint` names the next command to run."""

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


class InvalidSkill(HubskillsError):
    """A skill folder that cannot be loaded or fails validation."""


class InvalidSuite(HubskillsError):
    """A test suite file that cannot be read or converted."""


class SkillNotFound(HubskillsError):
    """No skill of that name in the registry."""


class VersionNotFound(HubskillsError):
    """The skill exists but not at the requested version, tag or sha."""


class VersionExists(HubskillsError):
    """Publishing would re-tag a version that already exists."""


class MissingCredentials(HubskillsError):
    """A key or token is needed and not set; `variable` names the environment variable."""

    def __init__(self, message: str, *, variable: str, hint: str | None = None) -> None:
        super().__init__(message, hint=hint or f"export {variable}=...")
        self.variable = variable


class UnknownModel(HubskillsError):
    """A model reference hubskills cannot resolve."""


class ProviderError(HubskillsError):
    """A model provider failed (after retries) or refused the request."""

    def __init__(
        self, message: str, *, hint: str | None = None, status: int | None = None
    ) -> None:
        super().__init__(message, hint=hint)
        self.status = status


class ContextOverflow(ProviderError):
    """The prompt does not fit the model's context window."""


class RegistryError(HubskillsError):
    """The registry (Hub or local store) failed or is unreachable."""


class RegistryUnavailable(RegistryError):
    """The registry cannot answer now (offline, unreachable, not cached); a fallback may."""


class UnsafeSkill(HubskillsError):
    """A skill with high-severity security findings or an unsafe file layout."""


class RunNotFound(HubskillsError):
    """No evaluation run with that id."""


class GenerationError(HubskillsError):
    """The teacher's output could not be turned into a skill or a suite."""
