"""hubskills as a library: the public API that the CLI and the Space use.

    import registry

    skill = registry.load_skill("skills/agent-skill-md")
    problems = registry.validate_skill(skill.path)
    run = registry.run_evaluation(skill.path, registry.EvalConfig(models=["local/m"], runs=1),
                                  registry.Settings.from_env())

Every name is imported from its module on first use (PEP 562 `__getattr__`), so `import
registry` loads nothing heavy and `hubskills --help` stays fast; the `TYPE_CHECKING` block
gives type checkers and editors the same names. Names not listed here are internal and may
change. No logic lives here: `tests/test_public_api.py` checks that the table, `__all__` and
the `TYPE_CHECKING` imports agree and that every name resolves.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from registry._version import __version__

#: public name -> "module:attribute", or "module" for a module exported as a namespace
_EXPORTS: dict[str, str] = {
    # errors and settings
    "HubskillsError": "registry.errors:HubskillsError",
    "InvalidSkill": "registry.errors:InvalidSkill",
    "InvalidSuite": "registry.errors:InvalidSuite",
    "MissingCredentials": "registry.errors:MissingCredentials",
    "ProviderError": "registry.errors:ProviderError",
    "SkillNotFound": "registry.errors:SkillNotFound",
    "UnsafeSkill": "registry.errors:UnsafeSkill",
    "Settings": "registry.config:Settings",
    # format: load and validate a skill and its suite
    "Skill": "registry.format.skill:Skill",
    "Problem": "registry.format.skill:Problem",
    "load_skill": "registry.format.skill:load_skill",
    "validate_skill": "registry.format.validate:validate_skill",
    "has_errors": "registry.format.validate:has_errors",
    "Case": "registry.format.suite:Case",
    "Suite": "registry.format.suite:Suite",
    "load_suite": "registry.format.suite:load_suite",
    "suite_path": "registry.format.suite:suite_path",
    "SkillVersionRef": "registry.format.version_ref:SkillVersionRef",
    # untrusted text shown on a page: the one sanitiser
    "safe_html": "registry.format.untrusted:safe_html",
    "named_bidi": "registry.format.untrusted:named_bidi",
    "code_span": "registry.format.untrusted:code_span",
    "code_block": "registry.format.untrusted:code_block",
    # scan
    "Finding": "registry.scan:Finding",
    "scan_folder": "registry.scan:scan_folder",
    # models
    "EMBEDDED_REF": "registry.providers:EMBEDDED_REF",
    "ask": "registry.providers:ask",
    "default_model_ref": "registry.providers:default_model_ref",
    "known_models": "registry.providers:known_models",
    "price_for": "registry.providers:price_for",
    "check_public_url": "registry.providers.public_url:check_public_url",
    # evaluate
    "EvalConfig": "registry.evaluation.config:EvalConfig",
    "EvalRun": "registry.evaluation.engine:EvalRun",
    "run_evaluation": "registry.evaluation.engine:run_evaluation",
    "Started": "registry.evaluation.engine:Started",
    "StopSignal": "registry.evaluation.stopping:StopSignal",
    "latest_rows": "registry.results.runs:latest_rows",
    "ResultRow": "registry.results.runs:ResultRow",
    "RunManifest": "registry.results.runs:RunManifest",
    "list_runs": "registry.results.runs:list_runs",
    "read_manifest": "registry.results.runs:read_manifest",
    "read_rows": "registry.results.runs:read_rows",
    "read_transcripts": "registry.results.runs:read_transcripts",
    "note_start_failure": "registry.results.runs:note_start_failure",
    "samples_planned": "registry.results.runs:samples_planned",
    "call_arguments": "registry.agent.outcome:call_arguments",
    "agent_suite_path": "registry.evaluation.agent_mode:agent_suite_path",
    "ModelSummary": "registry.results.report:ModelSummary",
    "summarize": "registry.results.report:summarize",
    "per_case_table": "registry.results.report:per_case_table",
    "compare_runs": "registry.results.compare:compare_runs",
    # leaderboard: `leaderboard.entries(store.results_frame())`, `table_rows`, `skill_history`;
    # `Board.build(frame)` for a reader answering many views of the same results
    "leaderboard": "registry.results.leaderboard",
    "LeaderboardEntry": "registry.results.leaderboard:Entry",
    "leaderboard_label": "registry.results.leaderboard_table:label",
    "leaderboard_table_rows": "registry.results.leaderboard_table:table_rows",
    "Board": "registry.results.board:Board",
    "board_entries": "registry.results.board:to_entries",
    "TriggerEntry": "registry.results.trigger_board:TriggerEntry",
    "trigger_rate_text": "registry.results.trigger_board:rate_text",
    "display": "registry.results.display",
    "estimate": "registry.evaluation.estimate",
    "TimeLeft": "registry.evaluation.time_left:TimeLeft",
    # stores: open one, publish to it, and the path and size rules of anything written
    "SkillStore": "registry.stores:SkillStore",
    "SkillInfo": "registry.stores:SkillInfo",
    "get_store": "registry.registries:get_store",
    "results_dataset": "registry.registries:results_dataset",
    "publish_skill": "registry.publishing.publish:publish_skill",
    "PublishResult": "registry.publishing.publish:PublishResult",
    "check_relpath": "registry.scan:check_relpath",
    "check_repo_id": "registry.stores.refs:check_repo_id",
    "tag_for": "registry.stores.refs:tag_for",
    "write_file": "registry.scan:write_file",
    # generate
    "generate_skill": "registry.generate.pipeline:generate_skill",
    "GenerateReport": "registry.generate.report:GenerateReport",
    "add_tests": "registry.generate.cases:add_tests",
    # pull
    "pull": "registry.install.pull:pull",
    "PullResult": "registry.install:PullResult",
    # sandbox and secrets: what runs supplied code, and the one scrubber
    "SandboxUnavailable": "registry.sandbox:SandboxUnavailable",
    "SecretScope": "registry.secrets:SecretScope",
    "SizeLimits": "registry.scan:SizeLimits",
    "current_scope": "registry.secrets:current_scope",
    "get_sandbox": "registry.sandbox:get_sandbox",
    "has_code_checks": "registry.evaluation.checks:has_code_checks",
    "hold": "registry.secrets:hold",
    "holding": "registry.secrets:holding",
    "push_saved_run": "registry.publishing.push:push_saved_run",
    "scrub": "registry.secrets:scrub",
    "scrub_data": "registry.secrets:scrub_data",
    "scrub_logs": "registry.secrets:scrub_logs",
    "scrubber": "registry.secrets:scrubber",
    "pending_frame": "registry.verify.pending:pending_frame",
    "pending_view": "registry.verify.pending:pending_view",
    "forged_claims": "registry.verify.pending:forged_claims",
    "verification_badges": "registry.stores.verifications:badges",
    "pending_badges": "registry.stores.verifications:pending_badges",
    "replay_pending": "registry.verify.admission:replay_pending",
    "merge_submission": "registry.verify.admission:merge_submission",
    # at scale: an evaluation split into shards that run as Hugging Face Jobs
    "run_on_jobs": "registry.jobs:run_on_jobs",
    "run_logs": "registry.jobs:run_logs",
    # spot checks on the caller's Jobs
    "start_spot_job": "registry.jobs.spot_remote:start_spot_job",
    "follow_spot_job": "registry.jobs.spot_remote:follow_spot_job",
    "owns_results": "registry.jobs.spot_remote:owns_results",
    # what a published revision ships besides instructions: its signature, its publisher's
    # claims (skill-card.md, BENCHMARK.md), read once per revision
    "revision_facts": "registry.stores.revision_facts:revision_facts",
    "RevisionFacts": "registry.stores.revision_facts:RevisionFacts",
    "CLAIMS_LABEL": "registry.format.claims:CLAIMS_LABEL",
    # people's blind review of a run's answers (never a measured result)
    "Review": "registry.review:Review",
    "open_local_review": "registry.review:open_local_review",
    "open_registry_review": "registry.review:open_registry_review",
    "review_summary": "registry.review:runs_feedback",
    # the registry as an MCP server (the Skills extension), for the Space's /mcp
    "mcp_server": "registry.mcp:build_server",
    "mcp_snapshot_catalog": "registry.mcp.snapshot:snapshot_catalog",
    "mcp_limit_body": "registry.mcp.transport:limit_body",
    "EvalDependencies": "registry.install.eval_deps:EvalDependencies",
    "MIN_SPOT_K": "registry.results.leaderboard_badges:MIN_SPOT_K",
    "skill_requirements": "registry.format.requires:requirements",
}

__all__ = [
    "__version__", "HubskillsError", "InvalidSkill", "InvalidSuite", "MissingCredentials",
    "ProviderError", "SkillNotFound", "UnsafeSkill", "Settings", "Skill", "Problem", "load_skill",
    "validate_skill", "has_errors", "Case", "Suite", "load_suite", "suite_path",
    "SkillVersionRef", "safe_html", "named_bidi", "code_span", "code_block", "Finding",
    "scan_folder", "EMBEDDED_REF", "ask", "default_model_ref", "known_models", "price_for",
    "check_public_url", "EvalConfig",
    "EvalRun", "run_evaluation", "Started", "StopSignal", "latest_rows", "ResultRow", "RunManifest",
    "list_runs", "read_manifest", "read_rows", "read_transcripts", "note_start_failure",
    "samples_planned", "call_arguments",
    "agent_suite_path",
    "ModelSummary",
    "summarize", "per_case_table", "compare_runs",
    "leaderboard", "LeaderboardEntry", "leaderboard_label", "leaderboard_table_rows", "Board",
    "board_entries", "TriggerEntry", "trigger_rate_text", "display",
    "estimate", "TimeLeft",
    "SkillStore", "SkillInfo", "get_store", "results_dataset", "publish_skill", "PublishResult",
    "check_relpath",
    "check_repo_id", "tag_for", "write_file", "generate_skill", "GenerateReport", "add_tests",
    "pull", "PullResult", "SandboxUnavailable", "SecretScope", "SizeLimits", "current_scope",
    "get_sandbox", "has_code_checks", "hold", "holding", "push_saved_run", "scrub", "scrub_data",
    "scrub_logs", "scrubber", "pending_frame", "pending_view", "forged_claims",
    "verification_badges", "pending_badges", "replay_pending", "merge_submission", "run_on_jobs",
    "run_logs", "start_spot_job", "follow_spot_job", "owns_results",
    "revision_facts", "RevisionFacts", "CLAIMS_LABEL", "Review", "open_local_review",
    "open_registry_review", "review_summary", "mcp_server", "mcp_snapshot_catalog",
    "mcp_limit_body", "EvalDependencies", "MIN_SPOT_K", "skill_requirements",
]

if TYPE_CHECKING:
    from registry.agent.outcome import call_arguments
    from registry.config import Settings
    from registry.errors import (
        HubskillsError,
        InvalidSkill,
        InvalidSuite,
        MissingCredentials,
        ProviderError,
        SkillNotFound,
        UnsafeSkill,
    )
    from registry.evaluation import estimate
    from registry.evaluation.agent_mode import agent_suite_path
    from registry.evaluation.checks import has_code_checks
    from registry.evaluation.config import EvalConfig
    from registry.evaluation.engine import EvalRun, Started, run_evaluation
    from registry.evaluation.stopping import StopSignal
    from registry.evaluation.time_left import TimeLeft
    from registry.format.claims import CLAIMS_LABEL
    from registry.format.requires import requirements as skill_requirements
    from registry.format.skill import Problem, Skill, load_skill
    from registry.format.suite import Case, Suite, load_suite, suite_path
    from registry.format.untrusted import code_block, code_span, named_bidi, safe_html
    from registry.format.validate import has_errors, validate_skill
    from registry.format.version_ref import SkillVersionRef
    from registry.generate.cases import add_tests
    from registry.generate.pipeline import generate_skill
    from registry.generate.report import GenerateReport
    from registry.install import PullResult
    from registry.install.eval_deps import EvalDependencies
    from registry.install.pull import pull
    from registry.jobs import run_logs, run_on_jobs
    from registry.jobs.spot_remote import follow_spot_job, owns_results, start_spot_job
    from registry.mcp import build_server as mcp_server
    from registry.mcp.snapshot import snapshot_catalog as mcp_snapshot_catalog
    from registry.mcp.transport import limit_body as mcp_limit_body
    from registry.providers import EMBEDDED_REF, ask, default_model_ref, known_models, price_for
    from registry.providers.public_url import check_public_url
    from registry.publishing.publish import PublishResult, publish_skill
    from registry.publishing.push import push_saved_run
    from registry.registries import get_store, results_dataset
    from registry.results import display, leaderboard
    from registry.results.board import Board
    from registry.results.board import to_entries as board_entries
    from registry.results.compare import compare_runs
    from registry.results.leaderboard import Entry as LeaderboardEntry
    from registry.results.leaderboard_badges import MIN_SPOT_K
    from registry.results.leaderboard_table import label as leaderboard_label
    from registry.results.leaderboard_table import table_rows as leaderboard_table_rows
    from registry.results.report import ModelSummary, per_case_table, summarize
    from registry.results.runs import (
        ResultRow,
        RunManifest,
        latest_rows,
        list_runs,
        note_start_failure,
        read_manifest,
        read_rows,
        read_transcripts,
        samples_planned,
    )
    from registry.results.trigger_board import TriggerEntry
    from registry.results.trigger_board import rate_text as trigger_rate_text
    from registry.review import Review, open_local_review, open_registry_review
    from registry.review import runs_feedback as review_summary
    from registry.sandbox import SandboxUnavailable, get_sandbox
    from registry.scan import Finding, SizeLimits, check_relpath, scan_folder, write_file
    from registry.secrets import (
        SecretScope,
        current_scope,
        hold,
        holding,
        scrub,
        scrub_data,
        scrub_logs,
        scrubber,
    )
    from registry.stores import SkillInfo, SkillStore
    from registry.stores.refs import check_repo_id, tag_for
    from registry.stores.revision_facts import RevisionFacts, revision_facts
    from registry.stores.verifications import badges as verification_badges
    from registry.stores.verifications import pending_badges
    from registry.verify.admission import merge_submission, replay_pending
    from registry.verify.pending import forged_claims, pending_frame, pending_view


def __getattr__(name: str) -> Any:
    """Import a public name from its module on first use, then keep it."""
    target = _EXPORTS.get(name)
    if target is None:
        raise AttributeError(f"module 'registry' has no attribute {name!r}")
    module, _, attribute = target.partition(":")
    value = importlib.import_module(module)
    if attribute:
        value = getattr(value, attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})
