"""`hubskills tune`: rewrite a skill's description so agents open it when they should, and
keep a rewrite only on evidence from queries the teacher never saw.

Round 0 scores the current description with trigger evals on both splits of the trigger suite.
Each later round shows the teacher only the train split's misses of the previous candidate (the
queries that should have opened the skill and did not, with what was opened instead, and those
that opened it wrongly), never a holdout query; the teacher's rewrite is scored on train and
holdout. The best candidate is the one whose holdout accuracy has the highest lower bound (the
Wilson interval of the stats engine), not the highest point estimate, and it is compared with
the original on the holdout queries, paired (`stats.compare_arms`): unless that verdict is
"helps", the report says the best is not significantly better. A rewrite SKILL.md cannot hold
(over 1,024 characters, a control character: `unwritable`) is refused unscored. The cost is
estimated before the first call; `max_cost` and `max_calls` (the run's `providers.CostCap`,
teacher included: no call is sent whose worst case does not fit) stop the rounds, and a model
without a known price under `max_cost` needs `max_calls`.
Every call goes through the response cache, so running the same command again after a stop
repeats no call. Writing SKILL.md is `write_description`'s job, and only on request.
"""

from __future__ import annotations

import asyncio
import json
import re
import unicodedata
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import yaml

from registry._io import atomic_write_bytes, atomic_write_text
from registry.config import Settings
from registry.errors import HubskillsError, InvalidSkill
from registry.evaluation.config import EvalConfig
from registry.evaluation.distractors import distractors_for
from registry.evaluation.trigger import TriggerEvaluator
from registry.evaluation.trigger_report import Rate, rates
from registry.evaluation.trigger_rounds import alphas_of, make_design
from registry.evaluation.trigger_run import load_trigger_suite
from registry.format.folder_names import folder_name
from registry.format.skill import (
    SKILL_FILE,
    Skill,
    estimate_tokens,
    load_skill,
    parse_frontmatter,
    split_frontmatter,
)
from registry.format.triggers import TriggerQuery
from registry.format.validate import MAX_DESCRIPTION, validate_skill
from registry.providers import CapReached, Message, Usage, cost
from registry.results import stats
from registry.results.runs import ResultRow, RunManifest, new_run_id

Say = Callable[[str], None]
_ANSWER = re.compile(r"<description>(.*?)</description>", re.S)
TEACHER_PROMPT = """You improve the description of an Agent Skill. An agent sees only the \
skill's name and description, listed among other skills, and decides from them alone whether \
to open the skill for a user's request.

Skill: {name}
Current description: {description}

{misses}

Write a better description: say what the skill does and when to use it, so that it is opened \
for requests like the first list and not for requests like the second. Generalize: do not \
quote the requests. At most {limit} characters, no angle brackets. Answer with the \
description only, between <description> and </description>."""


@dataclass
class Scores:
    """One candidate on one split: accuracy, recall and false-trigger rate with intervals."""

    accuracy: Rate
    recall: Rate
    false_triggers: Rate


@dataclass
class Candidate:
    """One round's description, its scores (None when refused or stopped) and its cost."""

    round: int
    description: str
    train: Scores | None = None
    holdout: Scores | None = None
    refused: str | None = None
    cost_usd: float = 0.0
    rows: list[ResultRow] = field(default_factory=list, repr=False)
    stop: dict | None = None  # an adaptive design's stop: round, reason, queries settled
    level: float | None = None  # its figures' level (the stopping look's), None: 95%


@dataclass
class TuneResult:
    """Every round, the best candidate, whether it beats the original, and the money."""

    candidates: list[Candidate]
    best: Candidate
    comparison: stats.LiftStats | None  # best vs original on the holdout, paired
    status: str  # "complete" or "stopped" (max_cost, max_calls)
    estimate_usd: float | None
    spent_usd: float
    run_id: str = ""  # the tune run: its report and rows are kept under `saved`
    saved: Path | None = None
    stopped_by: str | None = None  # the limit that stopped the rounds, in words
    design: dict | None = None  # each candidate's trigger eval's design (`sequential_rates`)

    def to_dict(self) -> dict[str, object]:
        """JSON-ready: every field but each candidate's rows, and whether the best is better."""
        data = {f: getattr(self, f) for f in ("status", "estimate_usd", "spent_usd", "run_id",
                                              "stopped_by", "design")}
        candidates = [{k: v for k, v in asdict(c).items() if k != "rows"}
                      for c in self.candidates]
        return {**data, "candidates": candidates, "best": candidates[
            self.candidates.index(self.best)], "comparison": self.comparison and asdict(
            self.comparison), "significant": self.significant,
            "saved": str(self.saved) if self.saved else None}

    @property
    def significant(self) -> bool:
        """The best is better than the original on the holdout by the stats engine's verdict."""
        return self.comparison is not None and self.comparison.verdict == "helps"


def estimate_cost(model: str, teacher: str, description: str, queries: list[TriggerQuery],
                  runs: int, rounds: int, listing_tokens: int) -> float | None:
    """Dollars for every round at one model call per session (two when the agent looks around
    first: the estimate doubles the sessions' input for that) plus the teacher's calls; None
    when a price is unknown."""
    session_in = 2 * (listing_tokens + estimate_tokens(description)) + 200
    sessions = len(queries) * runs * (rounds + 1)
    student = cost(model, Usage(input_tokens=session_in * sessions, output_tokens=60 * sessions))
    teacher_in = estimate_tokens(TEACHER_PROMPT + " ".join(q.query for q in queries)) + 400
    taught = cost(teacher, Usage(input_tokens=teacher_in * rounds, output_tokens=400 * rounds))
    return None if student is None or taught is None else student + taught


def tune_description(skill_dir: str | Path, config: EvalConfig, settings: Settings, *,
                     teacher: str, rounds: int = 5,
                     say: Say | None = None) -> TuneResult:
    """Run the rounds (module docstring) for `config.models[0]`; `say(line)` gets progress."""
    skill = load_skill(skill_dir)
    suite = load_trigger_suite(skill)
    if not suite.split("holdout") or not suite.split("train"):
        raise HubskillsError("tune needs train and holdout queries in evals/triggers.json",
                             hint=f"hubskills suite show {skill_dir}  # shows the split")
    folder_name(skill)  # each session lists it as a folder: no path climbs out of one
    distractors = distractors_for(skill.name, config.distractors)
    command = f"hubskills tune {skill_dir} -m {config.models[0]}"
    design = make_design(replace(config, design=config.design or "auto"), len(suite.queries),
                         command=command)
    manifest = RunManifest(run_id=new_run_id(), skill_name=skill.name, content_hash="",
                           suite_hash=suite.suite_hash(), models=config.models[:1], mode="trigger")
    ev = TriggerEvaluator(skill.name, config, settings, distractors, manifest)
    ev.design = design
    listing_tokens = estimate_tokens(" ".join(f"{d.name} {d.description}" for d in distractors))
    estimate = estimate_cost(ev.models[0].ref, teacher, skill.description, suite.queries,
                             config.runs, rounds, listing_tokens)
    if say:
        say("estimated cost: " + ("unknown (a price is unknown)" if estimate is None
                                  else f"${estimate:.4f}"))
    try:
        teacher_model = ev.resolve(teacher)
        ev.refuse_unpriced([teacher_model], command)  # before any call
        result = asyncio.run(_rounds(ev, teacher_model, skill.name, skill.description,
                                     suite.queries, rounds, estimate, say))
    finally:
        ev.cache.close()
    result.design = design.to_dict() if design else {"kind": "fixed", "runs": config.runs}
    return _save(result, manifest.run_id, settings)


def _save(result: TuneResult, run_id: str, settings: Settings) -> TuneResult:
    """Keep the report (`report.json`) and every session (`rows.jsonl`) in
    `HUBSKILLS_HOME/tune/<run id>/`."""
    folder = settings.home / "tune" / run_id
    folder.mkdir(parents=True, exist_ok=True)
    result.run_id, result.saved = run_id, folder
    rows = "".join(row.model_dump_json() + "\n" for c in result.candidates for row in c.rows)
    atomic_write_text(folder / "rows.jsonl", rows)
    atomic_write_text(folder / "report.json", json.dumps(result.to_dict(), indent=2) + "\n")
    return result


async def _rounds(ev: TriggerEvaluator, teacher, name: str, original: str,
                  queries: list[TriggerQuery], rounds: int, estimate: float | None,
                  say: Say | None) -> TuneResult:
    candidates: list[Candidate] = []
    status, description = "complete", original
    try:
        for number in range(rounds + 1):
            if number:
                scored = [c for c in candidates if c.train is not None]
                description = await _propose(ev, teacher, name, scored[-1], queries, number)
            candidate = Candidate(number, description)
            candidates.append(candidate)
            candidate.refused = unwritable(description) if number else None  # a rewrite
            if candidate.refused is not None:
                continue
            before = ev.spent
            ev.history, ev.design_stops = {}, {}  # each candidate's eval: its own design
            status = await ev.run(description, queries, candidate.rows.append)
            candidate.cost_usd = ev.spent - before
            if status != "complete":
                candidate.refused = f"stopped before it was scored ({ev.cap.reached})"
                break
            alphas = _alphas(ev, candidate, queries)
            candidate.train, candidate.holdout = (_scores(candidate.rows, queries, split, alphas)
                                                  for split in ("train", "holdout"))
            if say:
                say(f"round {number}: holdout accuracy {candidate.holdout.accuracy.rate:.0%}")
    except CapReached:
        status = "stopped"
    finally:
        await ev.aclose([teacher])
    return _result(candidates, queries, status, estimate, ev.spent, ev.cap.reached)


def _alphas(ev: TriggerEvaluator, candidate: Candidate,
            queries: list[TriggerQuery]) -> dict[str, float]:
    """The level a candidate's figures are reported at: an adaptive design's stopping look's
    (`trigger_rounds.alphas_of`), and where it stopped (`Candidate.stop`)."""
    if ev.design is None or ev.design.kind != "adaptive":
        return {}
    candidate.stop = dict(next(iter(ev.design_stops.values()), {}))
    found = alphas_of(ev.design.to_dict(), [q.id for q in queries], [ev.models[0].ref],
                      candidate.rows)
    if found:
        candidate.level = 1 - next(iter(found.values()))
    return found


def _scores(rows: list[ResultRow], queries: list[TriggerQuery], split: str,
            alphas: dict[str, float] | None = None) -> Scores:
    ids = {q.id for q in queries if q.split == split}
    mine = [r for r in rows if r.case_id in ids]
    model = rows[0].model if rows else ""
    return Scores(*rates(mine, [(model, k) for k in ("accuracy", "recall", "false_triggers")],
                         alphas))


def _result(candidates: list[Candidate], queries: list[TriggerQuery], status: str,
            estimate: float | None, spent: float, reached: str | None = None) -> TuneResult:
    scored = [c for c in candidates if c.holdout is not None]
    if not scored:
        raise HubskillsError(f"the cost cap was reached before the original description was "
                             f"scored ({reached})", hint="hubskills tune SKILL --max-cost 1  "
                                                         "# a larger cap (or --max-calls)")
    lower = {c.round: c.holdout.accuracy.lo or 0.0 for c in candidates if c.holdout is not None}
    best = max(scored, key=lambda c: (lower[c.round], -c.round))
    holdout = {q.id for q in queries if q.split == "holdout"}

    def verdicts(candidate: Candidate) -> dict[str, list[bool | None]]:
        found: dict[str, list[bool | None]] = {}
        for row in candidate.rows:
            if row.case_id in holdout:
                found.setdefault(row.case_id, []).append(None if row.is_error else row.passed)
        return found

    comparison = None if best.round == 0 else stats.compare_arms(verdicts(scored[0]),
                                                                 verdicts(best))
    return TuneResult(candidates, best, comparison, status, estimate, spent,
                      stopped_by=reached)


async def _propose(ev: TriggerEvaluator, teacher, name: str, last: Candidate,
                   queries: list[TriggerQuery], number: int) -> str:
    """The teacher's rewrite of `last.description` from its train misses only."""
    train = {q.id: q for q in queries if q.split == "train"}
    missed, wrong = [], []
    # in file order: rows arrive as sessions finish, and the prompt is the teacher's cache key
    order = {q.id: i for i, q in enumerate(queries)}
    for row in sorted(last.rows, key=lambda r: (order.get(r.case_id, 0), r.repeat)):
        query = train.get(row.case_id)
        if query is None or row.is_error or row.passed or row.repeat:
            continue
        if query.should_trigger:
            instead = f" (opened {row.opened_skill} instead)" if row.opened_skill else ""
            missed.append(f"- {query.query}{instead}")
        else:
            wrong.append(f"- {query.query}")
    misses = ("Requests that should have opened the skill but did not:\n"
              + ("\n".join(missed) or "(none)")
              + "\n\nRequests that opened the skill but should not have:\n"
              + ("\n".join(wrong) or "(none)"))
    prompt = TEACHER_PROMPT.format(name=name, description=last.description, misses=misses,
                                   limit=MAX_DESCRIPTION)
    completion, _ = await ev.complete(teacher, [Message("user", prompt)], seed=number,
                                      repeat=number, max_tokens=1024)
    found = _ANSWER.search(completion.text)
    return (found.group(1) if found else completion.text).strip().strip('"').strip()


def unwritable(description: str) -> str | None:
    """Why `description` cannot go into SKILL.md as it is, or None: empty, over the Agent
    Skills limit, or holding a control character (YAML refuses most of them in a file and reads
    others as line breaks; none belongs in a description an agent reads)."""
    if not description.strip() or len(description) > MAX_DESCRIPTION:
        return f"{len(description)} characters (the limit is 1..{MAX_DESCRIPTION})"
    bad = next((c for c in description if c not in "\n\t" and (
        unicodedata.category(c) in ("Cc", "Cs") or c in "\u2028\u2029")), None)
    if bad is not None:
        return f"it holds the control character U+{ord(bad):04X} at {description.index(bad)}"
    return None


def write_description(skill_dir: str | Path, description: str) -> None:
    """Rewrite only the `description` value in SKILL.md: every other byte stays as it was.

    The new file is made in memory and checked first as `hubskills validate` checks a
    description (the frontmatter parses, the value reads back unchanged, no description error),
    then replaces SKILL.md atomically: on any failure SKILL.md is left byte for byte as it was.

    Raises:
        HubskillsError: the description is unwritable, or no description key to replace.
    """
    path = Path(skill_dir) / SKILL_FILE
    hint = f"hubskills tune {skill_dir} --rounds 5  # propose another"
    why = unwritable(description)
    if why is None:
        written = _with_description(path.read_bytes().decode("utf-8"), description, path)
        why = _description_problem(Path(skill_dir), written, description)
    if why is not None:
        raise HubskillsError(f"the description was not written to {path}: {why}", hint=hint)
    atomic_write_bytes(path, written.encode("utf-8"))


def _with_description(text: str, description: str, path: Path) -> str:
    """SKILL.md's `text` with its description value replaced by `description` (JSON-quoted,
    which YAML reads as a double-quoted scalar)."""
    bom = len(text) - len(text.lstrip("\ufeff"))
    yaml_text, _, _ = split_frontmatter(text)
    start = bom + len(text[bom:].splitlines(keepends=True)[0])
    node = yaml.compose(yaml_text, Loader=yaml.SafeLoader)
    spans = [(v.start_mark.index, v.end_mark.index) for k, v in node.value
             if getattr(k, "value", None) == "description"]
    if not spans:
        raise HubskillsError(f"{path} has no description to rewrite",
                             hint=f"hubskills validate {path.parent}")
    a, b = spans[0]
    old = yaml_text[a:b]
    new = json.dumps(description, ensure_ascii=False) + ("\n" if old.endswith("\n") else "")
    return text[:start + a] + new + text[start + b:]


def _description_problem(folder: Path, text: str, description: str) -> str | None:
    """What `hubskills validate` would find wrong with the description of SKILL.md `text`,
    or None."""
    try:
        yaml_text, body, body_line = split_frontmatter(text)
        frontmatter, key_lines = parse_frontmatter(yaml_text)
    except InvalidSkill as exc:
        return f"SKILL.md would not load ({exc.message})"
    if frontmatter.get("description") != description:
        return "SKILL.md would not read it back unchanged"
    skill = Skill(folder, frontmatter, body, key_lines, body_line)
    errors = [p.message for p in validate_skill(skill)
              if p.code.startswith("description") and p.severity == "error"]
    return "; ".join(errors) or None
