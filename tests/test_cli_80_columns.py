"""Every command that prints a table, piped at 80 columns: every line fits, and the answer
columns (`verdict`, `p`, `latest`) are never the ones left out.

One home holds a run of each mode (inline, tool, agent), a CI run and an outdated pull; each
command then runs as a process of its own with its output piped, as a newcomer's would.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from cli_process import REPO_ROOT, hubskills
from fakes.openai_server import FakeOpenAIServer
from fakes.tool_script import AgentScript
from fakes.trigger_model import TriggerModel
from rich.cells import cell_len
from sandbox_required import bwrap_sandbox
from test_agent_eval import make_skill as make_agent_skill
from test_ci_gate import commit_all, git, scripted, write_skill
from test_evaluate import knows_fact_if_told, make_skill
from test_trigger import make_distractors
from test_trigger import make_skill as make_trigger_skill

SKILL = "hubskills/agent-skill-md"
MODEL = "local/qwen2.5-coder-7b-instruct"


def run(home: Path, *args: str, cwd: Path, width: str = "80", **env: str):
    done = hubskills(*args, cwd=cwd, HUBSKILLS_HOME=str(home), COLUMNS=width, **env)
    assert done.returncode in (0, 1), done.stderr
    return done


def run_id(done) -> str:
    return re.search(r"run (\d{8}-\d{6}-\w+)", done.stdout + done.stderr)[1]


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> dict:
    """A home with an inline, a tool and an agent run, a CI checkout and an outdated pull."""
    root = tmp_path_factory.mktemp("fit")
    home, project = root / "home", root / "project"
    project.mkdir()
    skill = make_skill(root, 4)
    ids = {}
    with FakeOpenAIServer(responder=knows_fact_if_told) as server:
        for mode in ("inline", "tool"):
            ids[mode] = run_id(run(home, "eval", skill, "-m", MODEL, "--base-url", server.url,
                                   "--runs", "2", "--mode", mode, cwd=project, width="200"))
    bwrap_sandbox()
    agent_skill = make_agent_skill(root / "agent")
    with FakeOpenAIServer(responder=AgentScript(skill="zorblax-ports",
                                                trigger="zorblax")) as server:
        done = run(home, "eval", agent_skill, "-m", "local/fake-agent", "--base-url",
                   server.url, "--mode", "agent", "--runs", "1", cwd=project, width="80")
    ids["agent"], ids["agent_out"] = run_id(done), done.stdout
    checkout = root / "checkout"
    checkout.mkdir()
    git(checkout, "init", "-q")
    write_skill(checkout, "csv-cleaning", "Nothing useful here.")
    commit_all(checkout, "one skill")
    write_skill(checkout, "csv-cleaning", "ALWAYS-PASS")
    with FakeOpenAIServer(responder=scripted) as server:
        ids["ci_out"] = run(home, "ci", "-m", MODEL, "--base-url", server.url, "--runs", "1",
                            "--base", "HEAD", cwd=checkout, GITHUB_STEP_SUMMARY="").stdout
    trigger_skill = make_trigger_skill(root / "trigger")
    with FakeOpenAIServer(responder=TriggerModel(threshold=2)) as server:
        done = run(home, "eval", trigger_skill, "--mode", "trigger", "-m", MODEL, "--base-url",
                   server.url, "--distractors", make_distractors(root / "trigger"), "--runs",
                   "1", "--verbose", cwd=project)
    ids["trigger"], ids["trigger_out"] = run_id(done), done.stdout
    assert run(home, "pull", SKILL, cwd=project).returncode == 0  # then 1.2.0 comes out
    newer = shutil.copytree(REPO_ROOT / "skills" / "agent-skill-md",
                            root / "v2" / "agent-skill-md")
    card = newer / "SKILL.md"
    card.write_text(card.read_text().replace('version: "1.1.0"', 'version: "1.2.0"', 1))
    assert run(home, "publish", newer, "--repo", SKILL, cwd=project).returncode == 0
    return {"home": home, "project": project, "ids": ids}


def assert_fits(text: str) -> None:
    for line in text.splitlines():
        assert cell_len(line) <= 80, f"{cell_len(line)} columns: {line!r}"


COMMANDS = {
    "leaderboard": ["leaderboard"],
    "info": ["info", "hubskills/kernel-builder-cuda-kernels"],
    "search": ["search"],
    "search --sort lift": ["search", "--sort", "lift"],
    "versions": ["versions", SKILL],
    "models": ["models"],
    "agents": ["agents"],
    "suite show": ["suite", "show", "hubskills/kernel-builder-cuda-kernels"],
    "list": ["list"],
    "runs": ["runs"],
    "runs show (inline)": ["runs", "show", "{inline}"],
    "runs show (tool)": ["runs", "show", "{tool}"],
    "runs show (agent)": ["runs", "show", "{agent}"],
    "runs show (trigger)": ["runs", "show", "{trigger}"],
    "runs compare": ["runs", "compare", "{inline}", "{tool}"],
    "doctor": ["doctor"],
    "scan": ["scan", "hubskills/kernel-builder-cuda-kernels"],
    "--help": ["--help"],
}


@pytest.mark.parametrize("name", COMMANDS)
def test_every_table_command_fits_80_columns_piped(world, name):
    args = [arg.format(**world["ids"]) for arg in COMMANDS[name]]
    done = run(world["home"], *args, cwd=world["project"])
    assert done.stdout.strip(), done.stderr
    assert_fits(done.stdout)


def test_eval_and_ci_output_fit_80_columns_and_keep_the_verdict(world):
    assert_fits(world["ids"]["agent_out"])
    assert_fits(world["ids"]["trigger_out"])
    assert "recall" in world["ids"]["trigger_out"]
    assert " × 1 run among " in " ".join(world["ids"]["trigger_out"].split())  # not "1 runs"
    assert_fits(world["ids"]["ci_out"])
    assert "verdict" in world["ids"]["ci_out"]
    # a walk: the gate's own verdict and the comparison with the published version were left
    # out at 80 columns, an Actions log's width (and the hint named a --json ci has not)
    assert re.search(r"vs published\s+gate\s*$", world["ids"]["ci_out"], re.M), \
        world["ids"]["ci_out"]
    shown = run(world["home"], "runs", "show", world["ids"]["tool"], cwd=world["project"])
    assert "verdict" in shown.stdout and "p (exact)" in shown.stdout, shown.stdout


def test_list_keeps_latest_on_an_outdated_row(world):
    done = run(world["home"], "list", cwd=world["project"])
    assert "latest" in done.stdout and "outdated" in done.stdout, done.stdout
    assert re.search(r"outdated .*1\.2\.0", done.stdout), done.stdout


def test_search_cuts_a_long_description_with_an_ellipsis_on_one_line(world):
    done = run(world["home"], "search", cwd=world["project"])
    rows = [line for line in done.stdout.splitlines() if line.startswith("hubskills/")]
    assert len(rows) == 3 and all("…" in row for row in rows), done.stdout
    assert len(done.stdout.splitlines()) <= 3 + 4  # header, rule, three rows, a line said once



def test_jobs_list_fits_80_columns_and_keeps_each_shards_stage(tmp_path):
    from fakes.hub_server import FakeHub
    from test_jobs import KEY, answer

    env = {"HUBSKILLS_HOME": str(tmp_path / "home"), "OPENAI_API_KEY": KEY, "HF_HUB_OFFLINE": ""}
    with FakeHub() as hub, FakeOpenAIServer(responder=answer, api_key=KEY) as model_server:
        hub.jobs.image_env = {"PIP_NO_INDEX": "1", "PIP_NO_DEPS": "1"}
        env |= {"HF_ENDPOINT": hub.url, "HF_TOKEN": hub.token,
                "OPENAI_BASE_URL": model_server.url}
        started = hubskills("eval", make_skill(tmp_path, 3), "-m", "openai/gpt-4o-mini",
                            "--runs", "1", "--on", "jobs", "--shards", "2", "--detach",
                            cwd=tmp_path, **env)
        assert started.returncode == 0, started.stderr
        listed = hubskills("jobs", "list", cwd=tmp_path, COLUMNS="80", **env)
    assert listed.returncode == 0, listed.stderr
    assert_fits(listed.stdout)
    assert "stage" in listed.stdout, listed.stdout
    assert len(re.findall(r"^[01]\s+\S+\s+[a-z]+\s", listed.stdout, re.M)) == 2, listed.stdout


# Long ids (issue 38, item 6): two skills and two models whose ids are wider than their share of
# 80 columns, runs of both models, and a skill pulled into many agents' folders, user's too.

LONG_SKILLS = ("hubskills-community/kernel-builder-cuda-kernels-for-hopper-gpus",
               "acme-research-laboratories/zorblax-daemon-port-configuration")
LONG_MODELS = ("local/qwen2.5-coder-32b-instruct-q4_k_m",
               "local/meta-llama-3.1-70b-instruct-awq-int4")
SEPARATORS = "/-.@"


def answers_per_model(body: dict) -> str:
    """The first model knows the fact when told; the second misses it on four questions."""
    prompt = str(body["messages"][-1].get("content"))
    if body["model"].endswith("awq-int4") and re.search(r"Question [0-3]:", prompt):
        return "Probably port 8080."
    return knows_fact_if_told(body)


def long_skill(root: Path, repo: str) -> Path:
    """`make_skill`'s 12-case suite, named after ``repo``'s name."""
    name = repo.split("/")[1]
    folder = make_skill(root / name, 12).rename(root / name / name)
    for path in (folder / "SKILL.md", folder / "evals" / "evals.json"):
        path.write_text(path.read_text().replace("zorblax-ports", name))
    return folder


@pytest.fixture(scope="module")
def long_world(tmp_path_factory) -> dict:
    """Both long skills published and evaluated on both long models (pushed: ranked), one more
    run of one model, and a long skill pulled into the project's folders and the user's."""
    root = tmp_path_factory.mktemp("long")
    home, project, user = root / "home", root / "project", root / "user"
    project.mkdir()
    user.mkdir()
    env = {"HOME": str(user), "PATH": "/usr/bin:/bin"}
    runs, out = [], {}
    with FakeOpenAIServer(responder=answers_per_model) as server:
        for repo in LONG_SKILLS:
            skill = long_skill(root, repo)
            run(home, "publish", skill, "--repo", repo, cwd=project, **env)
            done = run(home, "eval", skill, "-m", LONG_MODELS[0], "-m", LONG_MODELS[1],
                       "--base-url", server.url, "--runs", "2", "--push", "--repo", repo,
                       cwd=project, width="200", **env)
            assert "replayed: verified" in done.stdout, done.stdout + done.stderr
            runs.append(run_id(done))
            out[repo] = done.stdout
        runs.append(run_id(run(home, "eval", skill, "-m", LONG_MODELS[1], "--base-url",
                               server.url, "--runs", "1", cwd=project, **env)))
    run(home, "pull", LONG_SKILLS[0], "--agent", "claude,cursor,windsurf,cline", cwd=project,
        **env)
    run(home, "pull", LONG_SKILLS[0], "--global", "--agent", "claude,windsurf,goose",
        cwd=project, **env)
    run(home, "pull", LONG_SKILLS[1], "--agent", "cursor", cwd=project, **env)
    run(home, "pull", SKILL, "--global", "--all", cwd=project, **env)
    return {"home": home, "project": project, "env": env, "runs": runs, "eval_out": out}


def _token(text: str) -> str:
    """A word as it may stand for an id: no comma or closing bracket after it, no version."""
    return re.sub(r"@\d+(\.\d+)*$", "", text.rstrip(",;:)"))


def _breaks(ident: str, at: int) -> bool:
    """Whether ``ident`` may be broken before its ``at``-th character (at a separator)."""
    return 0 < at < len(ident) and (ident[at - 1] in SEPARATORS or ident[at] == "@")


def _goes_on(lines: list[str], row: int, column: int, rest: str) -> bool:
    """Whether ``rest`` (of an id broken at a separator) goes on from line ``row``: in the same
    column (a table's cell) or first on the line (a wrapped sentence)."""
    if row >= len(lines) or not lines[row].strip():
        return False
    line = lines[row]
    for start in {column, len(line) - len(line.lstrip())}:
        if start >= len(line) or (start and line[start - 1] != " ") or line[start] == " ":
            continue
        piece = _token(line[start:].split()[0])
        if piece == rest or (rest.startswith(piece) and _breaks(rest, len(piece))
                             and _goes_on(lines, row + 1, start, rest[len(piece):])):
            return True
    return False


def shows_id(stdout: str, stderr: str, ident: str) -> bool:
    """Whether ``stdout`` shows ``ident`` whole on a line, broken only at its separators, or,
    with a `--json` hint on stderr, shortened with an ellipsis in the middle."""
    lines = stdout.splitlines()
    for row, line in enumerate(lines):
        for word in re.finditer(r"[^\s(]+", line):
            token = _token(word.group())
            if token == ident:
                return True
            head, cut, tail = token.partition("…")
            if cut and head and tail and ident.startswith(head) and ident.endswith(tail) \
                    and "--json" in stderr:
                return True
            if ident.startswith(token) and _breaks(ident, len(token)) \
                    and _goes_on(lines, row + 1, word.start(), ident[len(token):]):
                return True
    return False


def test_shows_id_tells_a_broken_id_from_a_whole_one():
    ident = "hubskills-community/kernel-builder-cuda-kernels-for-hopper-gpus"
    assert shows_id(f"rank  skill@version\n1     {ident}@1.0.0  +4", "", ident)
    wrapped = ("1  hubskills-community/  local/a\n   kernel-builder-cuda-\n"
               "   kernels-for-hopper-\n   gpus@1.0.0\n")
    assert shows_id(wrapped, "", ident)
    assert not shows_id(wrapped.replace("cuda-\n   kernels", "cu\n   da-kernels"), "", ident)
    assert not shows_id("1  hubskills-co\n   mmunity/kernel", "", "hubskills-community/kernel")
    assert shows_id("x  hubskills-…-gpus  y", "--json shows them whole", ident)
    assert not shows_id("x  hubskills-…-gpus  y", "", ident)
    assert shows_id(f"Pull it:  hubskills pull\n{ident}\n", "", ident)


LONG_COMMANDS = {  # each command, and the ids it must show
    "leaderboard": (["leaderboard"], [*LONG_SKILLS, *LONG_MODELS]),
    "leaderboard --include-unverified": (["leaderboard", "--include-unverified"],
                                         [*LONG_SKILLS, *LONG_MODELS]),
    "leaderboard --model": (["leaderboard", "--model", LONG_MODELS[1]], [*LONG_SKILLS]),
    "runs": (["runs"], ["{0}", "{1}", "{2}", LONG_SKILLS[0], *LONG_MODELS]),
    "runs show": (["runs", "show", "{0}"], [*LONG_MODELS]),
    "runs compare": (["runs", "compare", "{0}", "{1}"], ["{0}", "{1}", *LONG_MODELS]),
    "list": (["list"], [*LONG_SKILLS, SKILL, ".agents/skills", ".windsurf/skills",
                        "~/.agents/skills", "~/.codeium/windsurf/skills",
                        "~/.config/goose/skills", "~/.snowflake/cortex/skills"]),
    "list --offline": (["list", "--offline"], [*LONG_SKILLS, "~/.agents/skills"]),
    "info": (["info", LONG_SKILLS[0]], [LONG_SKILLS[0], *LONG_MODELS, "{0}"]),
    "search": (["search"], [*LONG_SKILLS]),
    "search --sort lift": (["search", "--sort", "lift"], [*LONG_SKILLS]),
}


def piped(world: dict, *args: str):
    """`hubskills ARGS` in the long world, piped with COLUMNS unset (rich's 80 columns)."""
    done = hubskills(*args, cwd=world["project"], HUBSKILLS_HOME=str(world["home"]),
                     COLUMNS=None, **world["env"])
    assert done.returncode == 0, done.stderr
    return done


@pytest.mark.parametrize("name", LONG_COMMANDS)
def test_long_ids_fit_80_columns_whole_or_broken_at_separators(long_world, name):
    args, ids = LONG_COMMANDS[name]
    runs = long_world["runs"]
    done = piped(long_world, *(arg.format(*runs) for arg in args))
    assert_fits(done.stdout)
    for ident in (each.format(*runs) for each in ids):
        assert shows_id(done.stdout, done.stderr, ident), f"{ident} cut:\n{done.stdout}"
    if name.startswith("leaderboard"):  # the rank is never what is left out
        assert re.search(r"^rank\s", done.stdout, re.M), done.stdout
        assert "rank" not in done.stderr
        ranks = re.findall(r"^(\d+|-) ", done.stdout, re.M)
        # each row's rank on the whole board: a --model filter keeps the numbers
        board = json.loads(piped(long_world, "leaderboard", "--json").stdout)
        wanted = [str(r["rank"]) for r in board
                  if name != "leaderboard --model" or r["model"] == LONG_MODELS[1]]
        assert ranks[:2] == wanted[:2], (wanted, done.stdout)


def test_said_once_lines_fit_80_columns_and_keep_ids_whole(long_world):
    """A one-skill board says its skill once above the table; a reason too long for a line
    wraps at spaces (a verdict's `unranked: ...`), never runs past 80 columns."""
    done = piped(long_world, "leaderboard", "--skill", LONG_SKILLS[0])
    assert_fits(done.stdout)
    assert re.search(r"^skill@version:\s", done.stdout, re.M), done.stdout
    assert shows_id(done.stdout, done.stderr, LONG_SKILLS[0]), done.stdout
    seeded = piped(long_world, "leaderboard", "--include-unverified")  # the seeded runs too
    assert_fits(seeded.stdout)


def test_list_offline_says_nothing_of_an_unknown_latest(long_world):
    done = piped(long_world, "list", "--offline")  # no registry asked: every latest unknown
    assert "unchecked" in done.stdout, done.stdout
    assert not re.search(r"latest:\s*(·|$)", done.stdout, re.M), done.stdout


def test_verify_install_keeps_the_reason_of_a_mismatch_at_80_columns(world, tmp_path):
    """A walk: verify-install's `details` column, the reason of a mismatch and the point of
    the command, was left out at 80 columns (only --json showed it), then cut; it wraps."""
    project = tmp_path / "project"
    shutil.copytree(world["project"], project, symlinks=True)
    installed = project / ".agents" / "skills" / "agent-skill-md"
    for name in ("NOTES-made-by-hand-after-the-pull.md", "more-notes-on-the-same-subject.md",
                 "and-a-third-file-of-notes-too.md"):
        (installed / name).write_text("an edit made by hand after the pull\n")
    done = run(world["home"], "verify-install", cwd=project)
    assert done.returncode == 1
    assert_fits(done.stdout)
    assert "details" in done.stdout and "added NOTES-" in done.stdout, done.stdout + done.stderr
    assert "left out" not in done.stderr and "…" not in done.stdout
    for name in ("NOTES-made-by-hand-after-the-pull.md", "more-notes-on-the-same-subject.md",
                 "and-a-third-file-of-notes-too.md"):  # each named, whole
        assert name in "".join(done.stdout.split()), done.stdout
