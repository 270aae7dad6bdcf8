"""`verify` names the first row that is not of the run or not in its plan, wherever it sits
(the plan check finds a clean run without a loop over its rows, and names a bad row by its
number when one is there)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from fakes.openai_server import FakeOpenAIServer
from test_verify import FAST, knows_fact_if_told, make_skill

from registry.config import Settings
from registry.evaluation.config import EvalConfig
from registry.evaluation.engine import run_evaluation
from registry.verify.replay import verify_run


@pytest.fixture(scope="module")
def genuine(tmp_path_factory):
    """One genuine text-only run (10 cases x 2 arms x 2 repeats): (its home, its run id)."""
    root = tmp_path_factory.mktemp("plan-rows")
    skill = make_skill(root, with_python=False)
    with FakeOpenAIServer(responder=knows_fact_if_told) as server:
        made = run_evaluation(skill, EvalConfig(models=["local/fake-student"], runs=2,
                                                retry=FAST),
                              Settings.from_env({"HUBSKILLS_HOME": str(root / "home"),
                                                 "HUBSKILLS_BASE_URL": server.url}))
    return root / "home", made.manifest.run_id


@pytest.fixture
def copy(genuine, tmp_path):
    """A copy of the genuine run to edit: (settings, run folder)."""
    home, run_id = genuine
    settings = Settings.from_env({"HUBSKILLS_HOME": str(tmp_path / "home")})
    folder = settings.runs_dir / run_id
    shutil.copytree(home / "runs" / run_id, folder)
    return settings, folder


def _edit_rows(folder: Path, edit) -> list[dict]:
    rows = [json.loads(line) for line in (folder / "rows.jsonl").read_text().splitlines()]
    for number, row in enumerate(rows, 1):
        edit(number, row)
    (folder / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return rows


@pytest.mark.parametrize(("field", "value", "said"), [
    ("run_id", "20260101-000000-aaaaaa", "its run_id differ from the manifest's"),
    ("content_hash", "sha256:" + "0" * 64, "its content_hash differ from the manifest's"),
    ("mode", "agent", "its mode differ from the manifest's"),
    ("suite_hash", "sha256:" + "1" * 64, "its suite_hash differ from the manifest's"),
    ("repeat", 7, "it is not in the run's plan (models x cases x repeats x arms)"),
    ("case_id", "q99", "it is not in the run's plan (models x cases x repeats x arms)"),
])
@pytest.mark.parametrize("where", [1, 23, 40])
def test_the_first_row_not_of_the_run_is_named(copy, field, value, said, where):
    settings, folder = copy
    # Two edited rows: the first of them is named, by its number and its (edited) sample.
    rows = _edit_rows(folder, lambda number, row: row.update({field: value})
                      if number in (where, 40) else None)
    report = verify_run(folder.name, settings)
    row = rows[where - 1]
    assert report.status == "mismatch"
    assert report.problems[0] == (f"row {where} ({row['case_id']} #{row['repeat']} "
                                  f"{row['arm']} ({row['model']})): {said}")


def test_rows_that_name_no_suite_are_of_the_run(copy):
    settings, folder = copy  # rows written before rows named their suite
    _edit_rows(folder, lambda number, row: row.update({"suite_hash": None}))
    report = verify_run(folder.name, settings)
    assert (report.status, report.problems, report.samples) == ("verified", [], 40)
