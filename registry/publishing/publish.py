"""Publishing a skill: validate, scan, choose the version, publish, attach recorded runs.

The order is the contract: validation errors block (with `strict`, the CLI's default, so does
anything else `hubskills validate` reports: a placeholder, a thin suite); a committed secret
blocks even with `allow_risky`; other high-severity findings block unless `allow_risky`; an
existing version is never re-tagged; `with_runs` must have evaluated exactly this folder
(same content hash), and they are appended only after the publish succeeded, linked to the
new repo, version and sha (a run already in the dataset is attached again under
`<run_id>.v<version>`). A version other than the SKILL.md's `metadata.version` (`--bump`,
`--version`) is published, the tag winning, and said before anything is written. A dry run
does every check and writes nothing.
`publishing.push.push_run` is the one way a run is pushed.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from registry.config import Settings
from registry.errors import HubskillsError, InvalidSkill, SkillNotFound, VersionExists
from registry.format.requires import requirements
from registry.format.skill import Problem, Skill, content_hash, load_skill
from registry.publishing.checks import ValidationFailed, check_skill, refusal
from registry.publishing.signed import SignWith, sign_for_publish

__all__ = ["PublishPlan", "PublishResult", "SignWith", "ValidationFailed", "check_skill",
           "choose_version", "load_runs", "publish_skill", "refusal", "version_note"]
from registry.publishing.push import check_finished, record_replay, run_producer
from registry.results.runs import (
    ResultRow,
    RunManifest,
    latest_rows,
    read_manifest,
    read_rows,
)
from registry.scan import Finding
from registry.scan.paths import WINDOWS_DEVICES
from registry.signing import SIGNATURE_FILE
from registry.signing.status import SignatureStatus
from registry.signing.verify import changed_since_signing
from registry.stores.base import Appended, Published, SkillStore, VersionInfo
from registry.stores.files import skill_files
from registry.stores.refs import bump_version, check_repo_id, normalize_version, tag_for


@dataclass(frozen=True)
class PublishPlan:
    """What a publish will do (and, for a dry run, all it does)."""

    skill_dir: Path
    repo: str
    version: str
    version_source: str
    files: list[str]
    content_hash: str
    registry: str
    problems: list[Problem] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    runs: list[str] = field(default_factory=list)
    version_note: str | None = None  # the version differs from SKILL.md's (`version_note`)

    @property
    def tag(self) -> str:
        """The tag this version gets: `v<version>`."""
        return tag_for(self.version)


@dataclass(frozen=True)
class PublishResult:
    """The plan, and what publishing produced (`published` is None for a dry run)."""

    plan: PublishPlan
    published: Published | None = None
    results: list[Appended] = field(default_factory=list)
    signature: SignatureStatus | None = None  # `sign`: the signature the revision carries

    @property
    def pull_command(self) -> str:
        """The command that installs exactly this version."""
        return f"hubskills pull {self.plan.repo}@{self.plan.tag}"


def choose_version(store: SkillStore, repo: str, skill: Skill, *, version: str | None,
                   bump: str | None) -> tuple[str, str]:
    """(version, where it came from): `--version`, a bump of the latest, or metadata.version.

    With `bump` and nothing published yet, the skill's own `metadata.version` is used as is.

    Raises:
        VersionExists: that version is already published.
        InvalidSkill: no version anywhere.
    """
    if version and bump:
        raise HubskillsError("--version and --bump cannot be used together",
                             hint=f"hubskills publish {skill.path} --version {version}  # or: "
                                  f"--bump {bump}")
    try:
        published = store.versions(repo)
    except SkillNotFound:
        published = []
    if version:
        chosen, source = normalize_version(version), "--version"
    elif bump and published:
        chosen = bump_version(published[0].version, bump)
        source = f"--bump {bump} of {published[0].version}, the latest published"
        check_changed(store, repo, published[0], skill, chosen)
    elif skill.version:
        chosen, source = normalize_version(skill.version), "metadata.version"
        if bump:
            source += ", as nothing is published yet to bump"
    else:
        raise InvalidSkill(f"{skill.path} has no metadata.version",
                           hint=f"hubskills publish {skill.path} --version 0.1.0")
    if any(v.version == chosen for v in published):
        raise VersionExists(f"{repo} {tag_for(chosen)} already exists; versions are immutable",
                            hint=f"hubskills publish {skill.path} --bump patch")
    return chosen, source


def version_note(skill: Skill, chosen: str, source: str) -> str | None:
    """What to say before publishing `chosen` (from `source`) when the SKILL.md's
    `metadata.version` says another: the tag wins, yet every pull of it reads the other number
    in its SKILL.md (an author's walk: `--bump` said so only once it had published). None when
    they agree or the SKILL.md names no version."""
    if not skill.version or _as_version(skill.version) == chosen:
        return None
    return (f"{skill.path}/SKILL.md says metadata.version {skill.version}, but this publishes "
            f"{tag_for(chosen)} ({source}): the tag wins, and every pull of it reads "
            f"{skill.version} in its SKILL.md (to match, set metadata.version to {chosen} "
            "before publishing)")


def _as_version(text: str) -> str | None:
    try:
        return normalize_version(text)
    except HubskillsError:
        return None


def missing_dependencies(store: SkillStore, skill_dir: Path) -> list[Problem]:
    """A `missing-dependency` warning for each skill the folder requires that the registry has
    no version of that it accepts: every pull of it would fail (a walk published one before
    its dependency). Publish in order, or `--force`."""
    found = []
    for req in requirements(load_skill(skill_dir).frontmatter):
        try:
            versions = [v.version for v in store.versions(req.repo)]
        except SkillNotFound:
            versions = []
        if not any(req.constraint.allows(v) for v in versions):
            have = f"has {', '.join(versions[:3])}" if versions else "has no version of it"
            found.append(Problem("missing-dependency", "warning", f"requires {req}; the "
                                 f"{store.kind} registry {have}, so every pull would fail: "
                                 f"publish {req.repo} first"))
    return found


def check_changed(store: SkillStore, repo: str, latest: VersionInfo, skill: Skill,
                  chosen: str) -> None:
    """Refuse a `--bump` of a folder that holds exactly the latest version's files: a copy
    under a new number, whose results would stay on the older one (its files are fetched,
    uncounted, and hashed as a pull does; a registry that cannot send them skips the check).

    Raises:
        HubskillsError: nothing changed since `latest`.
    """
    with tempfile.TemporaryDirectory(prefix=".hubskills-bump-") as tmp:
        try:
            fetched = store.fetch(repo, latest.sha, Path(tmp) / "latest", count=False)
        except HubskillsError:
            return
        same = content_hash(fetched.folder) == content_hash(skill.path)
    if same:
        raise HubskillsError(f"{skill.path} holds exactly the files of {repo} "
                             f"{tag_for(latest.version)}: --bump would publish a copy of it as "
                             f"{tag_for(chosen)}, and its results would stay on "
                             f"{tag_for(latest.version)}",
                             hint=f"change the skill first; to tag the same files anyway: "
                                  f"hubskills publish {skill.path} --version {chosen}")


def load_runs(runs_dir: Path, run_ids: Sequence[str], skill: Skill,
              digest: str) -> list[tuple[RunManifest, list[ResultRow]]]:
    """Read local runs and check each evaluated exactly this skill folder, to the end.

    Raises:
        RunNotFound: no such run.
        HubskillsError: the run evaluated another skill or other content, or is partial.
    """
    runs = []
    for run_id in run_ids:
        manifest = read_manifest(runs_dir, run_id)
        if manifest.skill_name != skill.name or manifest.content_hash != digest:
            raise HubskillsError(
                f"run {run_id} evaluated {manifest.skill_name} ({manifest.content_hash[:19]}), "
                f"not this folder ({skill.name}, {digest[:19]})",
                hint=f"hubskills eval {skill.path}, then publish --with-run NEW_RUN_ID")
        check_finished(manifest, skill.path)
        runs.append((manifest, latest_rows(read_rows(runs_dir, run_id))))
    return runs


def _pushed_run_ids(store: SkillStore) -> set[str]:
    frame = store.results_frame()
    return set(frame["run_id"].dropna().astype(str)) if "run_id" in frame else set()


def _attached(manifest: RunManifest, rows: list[ResultRow], link: dict[str, str],
              pushed: set[str]) -> tuple[RunManifest, list[ResultRow]]:
    """The run linked to the new version; a run already in the dataset (pushed before, or
    attached to an earlier version) is attached again as `<run_id>.v<version>`."""
    linked = manifest.model_copy(update=link)
    if manifest.run_id not in pushed:
        return linked, rows
    run_id = f"{manifest.run_id}.v{link['skill_version']}"
    return (linked.model_copy(update={"run_id": run_id}),
            [row.model_copy(update={"run_id": run_id}) for row in rows])


def check_still_signed(skill_dir: Path, files: Sequence[str]) -> None:
    """Refuse a folder whose `skill.oms.sig` would not verify over its `files` (the ones a
    publish sends): they changed since it was made, or it is malformed or too large.

    Raises:
        HubskillsError: what changed, and the commands that sign it again.
    """
    if changed := changed_since_signing(skill_dir, files):
        from registry.signing.status import sign_options

        raise HubskillsError(f"{skill_dir}: {changed}, so every pull would refuse this version",
                             hint=f"hubskills publish {skill_dir} --sign "
                                  f"{sign_options(skill_dir)}  # signs exactly the files it "
                                  "sends")


def publish_skill(store: SkillStore, skill_dir: Path, *, runs_dir: Path,
                  repo: str | None = None, version: str | None = None, bump: str | None = None,
                  private: bool = False, with_runs: Sequence[str] = (), dry_run: bool = False,
                  allow_risky: bool = False, message: str | None = None,
                  settings: Settings | None = None, strict: bool = False,
                  sign: SignWith | None = None,
                  say: Callable[[str], None] | None = None) -> PublishResult:
    """Validate, scan, version, publish and attach runs (see the module docstring); with
    `settings`, each attached run is replayed from the dataset and its verification recorded
    (`push.record_replay`); with `strict`, whatever `hubskills validate` reports blocks (the
    CLI's default; `--force` lifts it); with `sign`, the revision carries a `skill.oms.sig`
    over its files, written into `skill_dir` just before the publish (`publishing.signed`);
    `say` is told the `version_note`, if any, before anything is signed or written.

    Raises:
        HubskillsError: `sign` with `with_runs` (the runs measured the folder unsigned: sign
            first, evaluate, then publish the signed folder), besides the checks above.
    """
    if sign is not None and with_runs:
        raise HubskillsError("--sign changes the folder the runs measured (its content hash "
                             "includes skill.oms.sig), so it cannot attach --with-run runs",
                             hint=f"hubskills sign {skill_dir} --key KEY, then hubskills eval "
                                  f"{skill_dir}, then hubskills publish {skill_dir} --with-run "
                                  "RUN_ID")
    problems, findings = check_skill(skill_dir, allow_risky=allow_risky, strict=strict,
                                     also=lambda: missing_dependencies(store, skill_dir))
    skill = load_skill(skill_dir)
    if skill.name in WINDOWS_DEVICES:  # pull refuses it: no folder on Windows can be named so
        raise InvalidSkill(f"{skill_dir}: the skill name '{skill.name}' is a Windows device "
                           "name", hint=f"rename the skill and its folder, then hubskills "
                           f"publish {skill_dir}")
    files = [rel for rel, _ in skill_files(skill)]
    if sign is None:  # a signature the files no longer match: every pull would refuse it
        check_still_signed(skill_dir, files)
    repo = repo or f"{store.default_namespace()}/{skill.name}"
    check_repo_id(repo)
    chosen, source = choose_version(store, repo, skill, version=version, bump=bump)
    digest = content_hash(skill_dir)
    runs = load_runs(runs_dir, with_runs, skill, digest)
    note = version_note(skill, chosen, source)
    if note and say is not None:
        say(note)
    plan = PublishPlan(skill_dir, repo, chosen, source, files, digest, store.kind, problems,
                       findings, list(with_runs), note)
    if sign is not None and SIGNATURE_FILE not in files:
        plan = replace(plan, files=sorted([*files, SIGNATURE_FILE]))
    if dry_run:
        return PublishResult(plan)
    signature = sign_for_publish(skill, sign) if sign is not None else None
    if signature is not None:
        plan = replace(plan, content_hash=content_hash(skill_dir))
    published = store.publish(skill_dir, repo=repo, version=chosen, private=private,
                              message=message)
    link = {"skill_repo": repo, "skill_revision": published.sha, "skill_version": chosen,
            "produced_by": run_producer(store)}
    pushed = _pushed_run_ids(store) if runs else set()
    attached = [_attached(manifest, rows, link, pushed) for manifest, rows in runs]
    paths = [store.append_results(manifest, rows) for manifest, rows in attached]
    if settings is not None:
        for manifest, _ in attached:
            record_replay(store, manifest, settings)
    if paths:
        store.refresh_card(repo)
    return PublishResult(plan, published, paths, signature)
