"""What `publish` checks before anything is written: validation, the suite, the scan.

Kept apart from `publish.py` (which needs the stores) so `eval` can say, before it calls any
model, that publish would refuse the folder (`refusal`) without loading a store.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from registry.errors import InvalidSkill
from registry.format.skill import Problem
from registry.format.suite_check import check_suite
from registry.format.validate import has_errors, validate_skill
from registry.scan import Finding, check_findings, scan_folder


class ValidationFailed(InvalidSkill):
    """The skill has validation errors (or, publishing strictly, warnings: `overridable`);
    `problems` holds every finding."""

    def __init__(self, message: str, *, problems: list[Problem], hint: str | None = None,
                 overridable: bool = False):
        super().__init__(message, hint=hint)
        self.problems, self.overridable = problems, overridable


def check_skill(skill_dir: Path, *, allow_risky: bool = False, strict: bool = False,
                also: Callable[[], list[Problem]] | None = None
                ) -> tuple[list[Problem], list[Finding]]:
    """Validate (SKILL.md and its suite, as `hubskills validate` does, and what `also` finds
    once SKILL.md loads: publish's look at the registry) and scan; return the problems and
    findings that did not block.

    Raises:
        ValidationFailed: a validation error in SKILL.md; with `strict`, anything else
            `hubskills validate` reports too (`overridable`: `--force` publishes anyway).
        ScanFailed: a committed secret (always), or a high finding without `allow_risky`.
    """
    problems = validate_skill(skill_dir)
    if has_errors(problems):
        errors = sum(p.severity == "error" for p in problems)
        raise ValidationFailed(f"{skill_dir} has {errors} validation error"
                               f"{'s' * (errors != 1)}",
                               problems=problems, hint=f"hubskills validate {skill_dir}")
    problems += check_suite(skill_dir)
    registry = also() if also is not None else []  # not validate's: a walk ran it to find
    problems += registry                            # the missing dependency publish named
    if strict and problems:
        who = "publish's look at the registry finds" if registry and len(registry) == len(
            problems) else "hubskills validate and the registry report" if registry else \
            "hubskills validate reports"
        raise ValidationFailed(f"{skill_dir}: {who} {_counted(problems)} "
                               f"({', '.join(dict.fromkeys(p.code for p in problems))})",
                               problems=problems, overridable=True,
                               hint=f"fix them, or publish anyway: hubskills publish {skill_dir} "
                                    "--force")
    findings = scan_folder(skill_dir)
    check_findings(findings, subject=str(skill_dir), action="published", allow_risky=allow_risky,
                   secret_hint="remove the secret (and rotate it), then publish again",
                   risky_hint=f"review them; to publish anyway: hubskills publish {skill_dir} "
                              "--allow-risky")
    return problems, findings


def _counted(problems: list[Problem]) -> str:
    errors = sum(p.severity == "error" for p in problems)
    warnings = len(problems) - errors
    parts = [f"{n} {word}{'s' * (n != 1)}" for n, word in ((errors, "error"),
                                                         (warnings, "warning")) if n]
    return " and ".join(parts)


def refusal(skill_dir: Path) -> str | None:
    """Why `hubskills publish` (without `--force` or `--allow-risky`) would refuse the folder
    as it is, in one sentence, or None: what `eval` says before it spends anything."""
    from registry.scan import ScanFailed

    try:
        check_skill(skill_dir, strict=True, also=lambda: stale_signature(skill_dir))
    except (ValidationFailed, ScanFailed) as refused:
        return refused.message
    return None


def stale_signature(skill_dir: Path) -> list[Problem]:
    """A `stale-signature` warning when the folder's `skill.oms.sig` no longer covers the files
    a publish sends: publish refuses it, and every pull would (a walk: `validate`, `eval` and
    the CI gate stayed green on an edit that only publish then refused). Nothing when there is
    no signature, the folder does not load (validate says why), or the [sign] extra that reads
    one is not installed."""
    from registry.signing import SIGNATURE_FILE

    if not (skill_dir / SIGNATURE_FILE).is_file():  # the rest loads only for a signed folder
        return []
    from registry.errors import HubskillsError
    from registry.format.skill import load_skill
    from registry.signing.verify import changed_since_signing
    from registry.stores.files import skill_files

    try:
        files = [rel for rel, _ in skill_files(load_skill(skill_dir))]
        changed = changed_since_signing(skill_dir, files)
    except HubskillsError:
        return []
    if changed is None:
        return []
    from registry.signing.status import sign_options

    return [Problem("stale-signature", "warning", f"{changed}: publish refuses it, and every "
                    f"pull would; sign it again: hubskills publish {skill_dir} --sign "
                    f"{sign_options(skill_dir)}", file=SIGNATURE_FILE)]
