"""Trigger suites: `evals/triggers.json`, the queries that should and should not make an agent
open a skill.

Two shapes are read, and each is written back in its own shape with every unknown key kept:

    [{"query": "...", "should_trigger": true}, ...]                 skill-creator's list
    {"skill_name": "x", "queries": [{"id": "q1", "query": "...",
                                     "should_trigger": true, "split": "train"}, ...]}

The list shape has no ids or splits: a query's id is its position (`q1`, `q2`, ...) and its split
is derived from its text. The split is stratified by `should_trigger`: in each class, the
queries sorted by a hash of their text, the first 40% (rounded) are `holdout`, the rest `train`,
so it depends on no seed, order or machine. In the object shape a query's `split` is fixed once
written; queries without one are assigned the same way among the unassigned of their class.
`fixed_split` returns the object shape with every split written out.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from registry.errors import InvalidSuite
from registry.format.skill import Problem

TRIGGERS_PATH = "evals/triggers.json"
HOLDOUT_SHARE = 0.4
MIN_QUERIES = 20  # skill-creator's size: fewer cannot tell descriptions apart
Split = Literal["train", "holdout"]
SPLITS: tuple[Split, ...] = ("train", "holdout")
Shape = Literal["skill-creator", "hubskills"]
_KNOWN = ("id", "query", "should_trigger", "split")


@dataclass(frozen=True)
class TriggerQuery:
    """One query; `extra` holds the keys hubskills does not know, written back as they were."""

    id: str
    query: str
    should_trigger: bool
    split: Split
    extra: dict[str, Any] = field(default_factory=dict)
    split_given: bool = False  # written in the file (object shape), not derived


@dataclass(frozen=True)
class TriggerSuite:
    """A skill's trigger queries in the shape they were read from."""

    queries: list[TriggerQuery]
    shape: Shape = "hubskills"
    extra: dict[str, Any] = field(default_factory=dict)  # unknown top-level keys
    skill: str | None = field(default=None, compare=False)  # its skill folder, for hints

    def split(self, name: Split) -> list[TriggerQuery]:
        """The queries of one split, in file order."""
        return [q for q in self.queries if q.split == name]

    def counts(self) -> dict[str, dict[str, int]]:
        """`{split: {"should": n, "should_not": n}}`, for reports."""
        return {s: {"should": sum(q.should_trigger for q in self.split(s)),
                    "should_not": sum(not q.should_trigger for q in self.split(s))}
                for s in SPLITS}

    def suite_hash(self) -> str:
        """`sha256:` over the queries, their classes and splits (what a run measured)."""
        canonical = json.dumps([[q.id, q.query, q.should_trigger, q.split] for q in self.queries],
                               separators=(",", ":"))
        return "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()

    def select(self, ids: list[str]) -> TriggerSuite:
        """The suite with only the queries `ids` names (all of them must exist).

        Raises:
            InvalidSuite: an id the suite does not have.
        """
        known = [q.id for q in self.queries]
        unknown = [i for i in ids if i not in known]
        if unknown:
            close = [m for i in unknown for m in difflib.get_close_matches(i, known, n=1)]
            meant = f" (did you mean {', '.join(map(repr, close))}?)" if close else ""
            raise InvalidSuite(f"no trigger query {', '.join(map(repr, unknown))}{meant}",
                               hint=f"hubskills suite show {self.skill or 'SKILL'}  # lists the "
                                    "trigger queries")
        return replace(self, queries=[q for q in self.queries if q.id in ids])

    def to_data(self) -> Any:
        """The JSON value in the suite's own shape, unknown keys kept."""
        if self.shape == "skill-creator":
            return [{"query": q.query, "should_trigger": q.should_trigger, **q.extra}
                    for q in self.queries]
        queries = []
        for q in self.queries:
            item: dict[str, Any] = {"id": q.id, "query": q.query,
                                    "should_trigger": q.should_trigger}
            if q.split_given:
                item["split"] = q.split
            queries.append({**item, **q.extra})
        return {**self.extra, "queries": queries}

    def to_json(self) -> str:
        """`to_data` as indented JSON text, ending in a newline."""
        return json.dumps(self.to_data(), indent=2, ensure_ascii=False) + "\n"


def triggers_path(skill_dir: str | os.PathLike[str]) -> Path:
    """Where a skill keeps its trigger suite."""
    return Path(skill_dir) / TRIGGERS_PATH


def skill_triggers_path(skill_dir: str | os.PathLike[str]) -> Path | None:
    """The file a skill's trigger queries are read from: `evals/triggers.json`, else an
    `evals/evals.json` whose cases name an `expected_skill` (NVIDIA's format), else None."""
    file = triggers_path(skill_dir)
    if file.is_file():
        return file
    suite = Path(skill_dir) / "evals" / "evals.json"
    return suite if suite.is_file() and _derived(suite, None) else None


def load_skill_triggers(skill_dir: str | os.PathLike[str],
                        skill_name: str | None = None) -> TriggerSuite | None:
    """A skill's trigger suite: `evals/triggers.json`, else the queries its `evals/evals.json`
    implies (each case with an `expected_skill`: the skill's own name, or `should_trigger:
    true`, should trigger it; null or another skill's name should not), else None.

    Raises:
        InvalidSuite: the file does not load.
    """
    file = skill_triggers_path(skill_dir)
    if file is None or file.name == "triggers.json":
        return load_triggers(file) if file is not None else None
    name = skill_name or Path(skill_dir).resolve().name
    return replace(parse_triggers({"queries": _derived(file, name)}, source=str(file)),
                   skill=str(Path(skill_dir)))


def _derived(suite_file: Path, skill_name: str | None) -> list[dict[str, Any]]:
    from registry.format.suite_nvidia import trigger_items

    try:
        data = json.loads(suite_file.read_bytes().decode("utf-8-sig"))
    except (OSError, ValueError, RecursionError):
        return []
    return trigger_items(data, skill_name)


def load_triggers(path: str | os.PathLike[str]) -> TriggerSuite:
    """Read a trigger suite file (either shape).

    Raises:
        InvalidSuite: unreadable, not JSON, or a query that breaks the rules.
    """
    file = Path(path)
    try:
        data = json.loads(file.read_bytes().decode("utf-8-sig"))
    except OSError as err:
        raise InvalidSuite(f"{file}: cannot read: {err.strerror or err}",
                           hint=f"write {TRIGGERS_PATH}: a list of {{\"query\", "
                                "\"should_trigger\"}}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        where = f":{err.lineno}" if isinstance(err, json.JSONDecodeError) else ""
        raise InvalidSuite(f"{file}{where}: not valid JSON ({err})",
                           hint=f"hubskills validate {file.parent.parent}") from None
    return replace(parse_triggers(data, source=str(file)), skill=str(file.parent.parent))


def parse_triggers(data: Any, *, source: str = "<triggers>") -> TriggerSuite:
    """A trigger suite from its JSON value (see the module docstring for the shapes).

    Raises:
        InvalidSuite: the value is neither shape, or a query breaks the rules.
    """
    hint = f"each query is {{\"query\": \"...\", \"should_trigger\": true|false}} ({source})"
    if isinstance(data, list):
        shape: Shape = "skill-creator"
        items, extra = data, {}
    elif isinstance(data, dict) and isinstance(data.get("queries"), list):
        shape = "hubskills"
        items, extra = data["queries"], {k: v for k, v in data.items() if k != "queries"}
    else:
        raise InvalidSuite(f"{source}: a trigger suite is a list of queries or an object with "
                           "a \"queries\" list", hint=hint)
    if not items:
        raise InvalidSuite(f"{source}: the trigger suite has no queries", hint=hint)
    queries = [_query(item, number, shape, source, hint)
               for number, item in enumerate(items, start=1)]
    seen: set[str] = set()
    for number, q in enumerate(queries, start=1):
        if q.id in seen:
            raise InvalidSuite(f"{source}: query {number}: the id {q.id!r} is used twice",
                               hint="give every query its own id")
        seen.add(q.id)
    return TriggerSuite(_assign_splits(queries), shape, extra)


def _query(item: Any, number: int, shape: Shape, source: str, hint: str) -> TriggerQuery:
    where = f"{source}: query {number}"
    if not isinstance(item, dict):
        raise InvalidSuite(f"{where}: not an object", hint=hint)
    text, should = item.get("query"), item.get("should_trigger")
    if not isinstance(text, str) or not text.strip():
        raise InvalidSuite(f"{where}: \"query\" must be a non-empty string", hint=hint)
    if not isinstance(should, bool):
        raise InvalidSuite(f"{where}: \"should_trigger\" must be true or false", hint=hint)
    known = ("query", "should_trigger") if shape == "skill-creator" else _KNOWN
    extra = {k: v for k, v in item.items() if k not in known}
    if shape == "skill-creator":
        return TriggerQuery(f"q{number}", text, should, "train", extra)
    qid, split = item.get("id", f"q{number}"), item.get("split")
    if not isinstance(qid, str) or not qid.strip():
        raise InvalidSuite(f"{where}: \"id\" must be a non-empty string", hint=hint)
    if split is not None and split not in SPLITS:
        raise InvalidSuite(f"{where}: \"split\" must be \"train\" or \"holdout\", not "
                           f"{split!r}", hint="leave it out to have one assigned")
    return TriggerQuery(qid, text, should, split or "train", extra, split is not None)


def _assign_splits(queries: list[TriggerQuery]) -> list[TriggerQuery]:
    """Queries with a derived split where none is written (stratified; module docstring)."""
    chosen: dict[str, Split] = {}
    for should in (True, False):
        group = [q for q in queries if q.should_trigger == should]
        given = sum(q.split == "holdout" for q in group if q.split_given)
        free = sorted((q for q in group if not q.split_given), key=_rank)
        holdout = max(0, min(len(free), round(HOLDOUT_SHARE * len(group)) - given))
        chosen.update({q.id: "holdout" if i < holdout else "train" for i, q in enumerate(free)})
    return [q if q.split_given else replace(q, split=chosen[q.id]) for q in queries]


def _rank(query: TriggerQuery) -> str:
    return hashlib.sha256(query.query.strip().encode()).hexdigest()


def fixed_split(suite: TriggerSuite) -> TriggerSuite:
    """The suite in the object shape with each query's split written out (fixed from now on),
    unknown keys kept."""
    return replace(suite, shape="hubskills",
                   queries=[replace(q, split_given=True) for q in suite.queries])


def check_triggers(folder: str | os.PathLike[str]) -> list[Problem]:
    """`hubskills validate`'s findings for a skill's trigger suite ([] when it has none)."""
    file = triggers_path(Path(folder).parent if Path(folder).name == "SKILL.md" else folder)
    if not file.is_file():
        return []
    try:
        suite = load_triggers(file)
    except InvalidSuite as exc:
        return [Problem("invalid-triggers", "error",
                        exc.message.removeprefix(str(file)).removeprefix(": "), TRIGGERS_PATH)]
    problems = []
    counts = suite.counts()
    should = counts["train"]["should"] + counts["holdout"]["should"]
    should_not = counts["train"]["should_not"] + counts["holdout"]["should_not"]
    if len(suite.queries) < MIN_QUERIES:
        problems.append(Problem("few-triggers", "warning",
                                f"{len(suite.queries)} trigger queries: write at least "
                                f"{MIN_QUERIES}, half that should trigger the skill",
                                TRIGGERS_PATH))
    if not should or not should_not:
        missing = "should" if not should else "should not"
        problems.append(Problem("one-sided-triggers", "warning",
                                f"no query that {missing} trigger the skill: recall and false "
                                "triggers need both (the should-nots near misses)",
                                TRIGGERS_PATH))
    return problems
