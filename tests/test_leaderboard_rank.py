"""One rank per entry: its place on the whole leaderboard, whatever a view filters.

On the seeded local registry (three skills, one replayed entry each), `hubskills leaderboard`
filtered by skill or model (table and `--json`), `info --json`, the Space's leaderboard filtered
the same way, its model view and the skill's page give an entry the number the unfiltered board
gives it: a filter keeps the numbers, as a filtered spreadsheet keeps its row numbers (a review
read "#2" on a skill's page and "1" from `leaderboard --skill`).
"""

from __future__ import annotations

import json

from click.testing import CliRunner

from registry.cli import cli
from registry.config import Settings
from registry.registries import get_store
from registry.results.board import Board
from registry.results.runs import ResultRow, RunManifest
from registry.stores.verifications import badges
from space.leaderboard_view import leaderboard_view, model_table, skill_from_link
from space.skill_data import results_table


def invoke(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args), env={"NO_COLOR": "1", "COLUMNS": "250"},
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def table_ranks(text: str, repo: str) -> list[str]:
    """The `rank` column of the leaderboard's table for `repo`: the first cell of its rows,
    however wide the table (a long id wraps at its separators, its `@` on the next line; a
    column the same in every row is said once above the table, `skill@version: …`)."""
    above = f"skill@version: {repo}@" in text
    return [line.split()[0] for line in text.splitlines() if line.split()
            and line.split()[0] in {"-", *map(str, range(1, 100))}
            and (above or repo[:12] in line)]


def test_every_view_gives_an_entry_its_rank_on_the_whole_board():
    store = get_store(Settings.from_env())
    board = Board.build(store.results_frame(), badges=badges(store))  # as the Space builds it
    whole = json.loads(invoke("leaderboard", "--json"))
    rank_of = {(r["skill"], r["model"]): r["rank"] for r in whole}
    assert sorted(rank_of.values()) == [1, 2, 3], whole
    for (repo, model), rank in rank_of.items():
        expected = [str(rank)]
        filtered = json.loads(invoke("leaderboard", "--skill", repo, "--json"))
        assert [r["rank"] for r in filtered] == [rank], (repo, filtered)
        assert table_ranks(invoke("leaderboard", "--skill", repo), repo) == expected, repo
        info = json.loads(invoke("info", repo, "--json"))["results"]
        assert [r["rank"] for r in info] == [rank], (repo, info)
        assert results_table(board, repo)["rank"].tolist() == expected, repo  # the skill page
        view = leaderboard_view(board, query=repo).table  # the Leaderboard tab, filtered
        assert view["rank"].tolist() == expected, repo
        by_model = model_table(board, model)  # the model view: this model's entries
        assert [r for r, link in zip(by_model["rank"], by_model["skill@version"], strict=True)
                if skill_from_link(link) == repo] == expected, repo
    # A skill not first on the board, filtered to its one entry: renumbered, it would say 1
    alone = [r["rank"] for r in json.loads(invoke("leaderboard", "--skill", "agent-skill-md",
                                                  "--json"))]
    on_board = [r["rank"] for r in whole if r["skill"].endswith("/agent-skill-md")]
    assert len(alone) == 1 and alone == on_board and alone != [1], (alone, on_board)


def test_info_ranks_as_the_board_does_beside_an_unverified_run():
    """An unverified run ranks nowhere on the board (it is not replayed): `info --json` gave
    every entry below its lift the rank it would have had counting it (2 for the board's 1)."""
    store = get_store(Settings.from_env())
    model = json.loads(invoke("leaderboard", "--json"))[0]["model"]
    run, cases = "20260101-000000-unverified", [f"c{i}" for i in range(30)]
    store.append_results(
        RunManifest(run_id=run, skill_name="strong", skill_repo="someone/strong",
                    skill_version="1.0.0", skill_revision="a" * 40, content_hash="sha256:0",
                    suite_hash="sha256:0", models=[model], case_ids=cases, status="complete",
                    partial=False, samples_planned=60, samples_done=60),
        [ResultRow(run_id=run, skill_name="strong", skill_repo="someone/strong",
                   skill_version="1.0.0", skill_revision="a" * 40, model=model, arm=arm,
                   case_id=case, passed=arm == "skill", output="x")
         for case in cases for arm in ("baseline", "skill")])
    whole = json.loads(invoke("leaderboard", "--json", "--include-unverified"))
    assert ("someone/strong", None) in [(r["skill"], r["rank"]) for r in whole], whole
    for record in whole:
        if record["rank"] is not None:
            info = json.loads(invoke("info", record["skill"], "--json"))["results"]
            assert [r["rank"] for r in info] == [record["rank"]], (record["skill"], info)
