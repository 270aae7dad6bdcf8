"""The Space over HTTP: launched on 127.0.0.1 and driven with `gradio_client`.

One app is built and launched for the module, on a local store seeded (on first use) in its
own temporary HUBSKILLS_HOME, with synthetic results for the leaderboard. Evaluations run
through the fake OpenAI server and on the embedded model.
"""

from __future__ import annotations

import io
import json
import random
import socket
import threading
import warnings
import zipfile
from pathlib import Path
from types import SimpleNamespace

import gradio as gr
import huggingface_hub.constants
import pandas as pd
import pytest
from fakes.hub_server import FakeHub
from fakes.openai_server import FakeOpenAIServer
from gradio_client import Client, handle_file
from space_pages import blocks, handler, pages

from registry.config import Settings
from registry.errors import InvalidSkill, UnsafeSkill
from registry.providers.embedded import availability
from registry.results.board import to_entries as board_entries
from registry.results.runs import ResultRow, RunManifest, RunWriter, new_run_id
from registry.secrets import MASK, hold, scrub
from registry.stores.verifications import run_files
from registry.verify.records import append_record
from space import build_demo, launch, leaderboard_tab, skill_data, skill_page, workbench
from space.evaluate_run import unpack_upload
from space.keys import scrub_responses
from space.leaderboard_view import ALL, skill_from_link
from space.state import SpaceState

SEEDED = ("hubskills/agent-skill-md", "hubskills/hf-hub-python-2x",
          "hubskills/kernel-builder-cuda-kernels")
MODELS = ("embedded/smollm2-135m", "anthropic/claude-sonnet-5-5")
# one entry per seeded skill x model from the synthetic runs, plus the recorded seed runs
# (another suite, so their own entries)
ENTRIES = len(SEEDED) * (len(MODELS) + 1)
SECRET = "sk-test-TYPED-IN-THE-UI-0123456789"
FACT = "The zorblax daemon listens on port 4417."


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def append_run(store, repo: str, model: str, p_base: float, p_skill: float, seed: int) -> None:
    """A synthetic two-repeat run of twelve cases of the seeded version, appended to the
    store's results (another suite than the recorded seed runs)."""
    rnd, name = random.Random(seed), repo.split("/")[1]
    manifest = RunManifest(run_id=f"{new_run_id()}-{seed}", skill_name=name, skill_repo=repo,
                           skill_version="1.1.0", content_hash="sha256:0", suite_hash="sha256:0",
                           models=[model], runs=2, case_ids=[f"c{i}" for i in range(12)],
                           status="complete", partial=False)
    rows = [ResultRow(run_id=manifest.run_id, skill_name=name, skill_version="1.1.0",
                      skill_repo=repo, model=model, arm=arm, case_id=f"c{i}", repeat=r,
                      passed=rnd.random() < p, score=1.0, cost_usd=0.0, output_tokens=20,
                      input_tokens=100 + (300 + 50 * seed if arm == "skill" else 0))
            for i in range(12) for r in range(2)
            for arm, p in (("baseline", p_base), ("skill", p_skill))]
    store.append_results(manifest, rows)
    # synthetic rows cannot be replayed: a stand-in record lets them rank (replay: test_badges)
    run = run_files(store)[manifest.run_id]
    append_record(store, {"kind": "replay", "run_id": run.run_id, "rows_hash": run.rows_hash,
                          "status": "verified",
                          "verified_by": store.results.producer(),  # this registry's verifier
                          "verified_at": "2026-01-01T00:00:00+00:00"})


@pytest.fixture(scope="module")
def keyed_server():
    """An OpenAI-compatible fake that answers only requests bearing the typed key."""
    with FakeOpenAIServer(responder=knows_fact_if_told, api_key=SECRET) as server:
        yield server


@pytest.fixture(scope="module")
def space(tmp_path_factory, keyed_server):
    home = tmp_path_factory.mktemp("space-home")
    settings = Settings.from_env({"HUBSKILLS_HOME": str(home), "HF_HUB_OFFLINE": "1",
                                  "OPENAI_BASE_URL": keyed_server.url})
    demo, url = seeded_space(settings)
    yield SimpleNamespace(url=url, home=home, demo=demo, state=demo.hubskills_state)
    demo.close()


def seeded_space(settings: Settings) -> tuple[gr.Blocks, str]:
    """The Space on `settings`, a run of every `SEEDED` skill on each of `MODELS` in its
    results, launched on 127.0.0.1: the demo (to close) and its URL."""
    demo = build_demo(settings, on_space=False)
    state = demo.hubskills_state
    for k, repo in enumerate(SEEDED):
        for j, model in enumerate(MODELS):
            append_run(state.store, repo, model, 0.2 + 0.1 * j, 0.3 + 0.3 * k, seed=2 * k + j)
    state.invalidate()
    _, url, _ = launch(demo, server_name="127.0.0.1", server_port=free_port(),
                       prevent_thread_lock=True, quiet=True)
    return demo, url


@pytest.fixture
def client(space) -> Client:
    return Client(space.url, verbose=False)


@pytest.fixture
def work(space) -> Client:
    """The workbench's page (Evaluate, Generate, Review): `space.workbench`."""
    return Client(workbench.url(space.url), verbose=False)


def evaluate(client: Client, *, repo=None, upload=None, models=("embedded/smollm2-135m",),
             base_url="", runs=1, max_cases=0, max_tokens=64, openai_key="") -> tuple:
    return client.predict(repo, upload or [], list(models), base_url, runs, "inline", "user",
                          max_cases, max_tokens, 0, "", openai_key, "", api_name="/evaluate")


def zipped_skill(folder: Path, checks: list[dict] | None = None) -> Path:
    """A zip of a one-fact skill whose suite needs the fact (or has these `checks`)."""
    checks = checks or [{"type": "contains", "value": ["4417"]}]
    cases = [{"id": f"q{i}", "prompt": f"Question {i}: which port does zorblax use?",
              "checks": checks} for i in range(3)]
    files = {"zorblax-ports/SKILL.md": "---\nname: zorblax-ports\ndescription: \"Ports of the "
             "zorblax daemon. Use when configuring zorblax.\"\nmetadata:\n  version: \"1.0.0\""
             f"\n---\n\n{FACT}\n",
             "zorblax-ports/evals/evals.json": json.dumps({"cases": cases})}
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    path = folder / "zorblax-ports.zip"
    path.write_bytes(buffer.getvalue())
    return path


def knows_fact_if_told(body: dict) -> str:
    told = any("4417" in json.dumps(m.get("content")) for m in body["messages"])
    return "Port 4417." if told else "Probably 8080."


def test_the_blocks_build_with_every_endpoint(space, client, work):
    assert isinstance(space.demo, gr.Blocks)
    board = {fn.api_name for fn in space.demo.fns.values()}
    bench = {fn.api_name for fn in space.demo.hubskills_workbench.fns.values()}
    assert {"leaderboard", "model_view", "skill_page", "page_load"} <= board
    assert {"evaluate", "estimate_evaluation", "stop_evaluation", "push_results", "generate",
            "publish", "review_next"} <= bench and not board & {"evaluate", "generate"}
    # each page lists its own endpoints to API clients, at its own URL (`workbench.PATH`)
    board_api = client.view_api(return_format="dict", print_info=False)["named_endpoints"]
    bench_api = work.view_api(return_format="dict", print_info=False)["named_endpoints"]
    assert "/page_load" in board_api and "/evaluate" not in board_api
    assert {"/evaluate", "/publish", "/review_open"} <= set(bench_api)


def test_leaderboard_ranks_by_the_lower_bound_and_filters(client):
    table, scatter, summary = client.predict("", "All", "All", "All", api_name="/leaderboard")
    rows = table["data"]
    assert len(rows) == ENTRIES and f"{ENTRIES}** skill × model" in summary
    assert [r[0] for r in rows] == [str(i) for i in range(1, len(rows) + 1)]  # all ranked
    lower = [int(r[6].split("[")[1].split(",")[0]) for r in rows]
    assert lower == sorted(lower, reverse=True)
    assert {skill_from_link(r[1]) for r in rows} == set(SEEDED)
    points = scatter.get("value", scatter)  # an update: the points and the x range
    assert len(points["data"]) == len(rows) and scatter["x_lim"][1] > 400
    only, _, _ = client.predict("kernel", "embedded/smollm2-135m", "agent-skill", "All",
                                api_name="/leaderboard")
    assert {(skill_from_link(r[1]), r[2]) for r in only["data"]} == {
        ("hubskills/kernel-builder-cuda-kernels", "embedded/smollm2-135m")}
    helps, _, _ = client.predict("", "All", "All", "helps", api_name="/leaderboard")
    assert helps["data"] and all("helps" in r[8] for r in helps["data"])
    none, _, note = client.predict("no-such-skill", "All", "All", "All", api_name="/leaderboard")
    assert none["data"] in ([], [[""] * 13])
    assert "No results match" in note


def test_model_view_and_page_load(client):
    view = client.predict("anthropic/claude-sonnet-5-5", api_name="/model_view")
    assert len(view["data"]) == len(SEEDED) and "model" not in view["headers"]
    loaded = client.predict("", "All", "All", "All", api_name="/page_load")
    assert "3</b><span>skills" in loaded[0]


def test_skill_page_shows_the_pull_command_files_and_history(client):
    out = client.predict("hubskills/agent-skill-md", api_name="/skill_page")
    version, header, body, raw, files, versions, results, history, findings, _, pull, claims = out
    assert pull == "hubskills pull hubskills/agent-skill-md@v1.1.0"
    assert "Signature: <code>unsigned</code>" in header
    assert not (claims.get("value") if isinstance(claims, dict) else claims)  # ships none
    assert version["value"] == "1.1.0" and "<h2>hubskills/agent-skill-md</h2>" in header
    assert "SKILL.md" in raw or raw.startswith("---")
    assert ["SKILL.md", "evals/evals.json"] <= [row[0] for row in files["data"]]
    assert versions["data"][0][:2] == ["1.1.0", "v1.1.0"]
    assert len(results["data"]) == len(MODELS) + 1 and len(history["data"]) == len(MODELS)
    assert "finding" in findings.lower()
    assert body.strip()


def test_the_history_colours_each_bar_by_its_verdict_and_says_so(space):
    """A bar is the point lift only: +24 over [-24, +59] stood taller than every *helps* in the
    model's colour. Each bar is coloured by its verdict's kind, and the note says what that
    colour means."""
    from space.leaderboard_view import VERDICT_COLORS

    frame = skill_data.history_frame(space.state.board(), "hubskills/agent-skill-md")
    assert set(frame["verdict"]) <= set(VERDICT_COLORS) and len(frame) == len(MODELS)
    assert all(point.startswith(f"v1.1.0 {ci} · ") for point, ci in zip(  # · model: several
        frame["point"], frame["lift_ci"], strict=True))  # the interval shown under its bar
    chart = next(b for b in blocks(space.demo) if getattr(b, "elem_id", None) == "skill-history")
    assert chart.color == "verdict" and chart.color_map == VERDICT_COLORS
    note = next(b for b in blocks(space.demo)
                if getattr(b, "elem_id", None) == "skill-history-note")
    assert "only a green bar (*helps*) is a lift the evaluation is sure of" in note.value


def test_an_unknown_skill_is_a_readable_message(client, space):
    out = client.predict("nobody/nothing", api_name="/skill_page")
    assert "No skill `nobody/nothing` here" in out[1] and "Traceback" not in out[1]
    assert out[-2] == ""
    shown = json.dumps(out)  # the server's folders and the CLI's hints are not a visitor's
    assert str(space.home) not in shown and "registry" not in shown and "hubskills " not in shown
    typo = client.predict("hubskills/agent-skil-md", api_name="/skill_page")[1]
    assert "Did you mean `hubskills/agent-skill-md`?" in typo, typo
    assert "Did you mean" not in out[1]  # nothing close to nobody/nothing
    hostile = client.predict("x`<img src=x onerror=alert(1)>" + "y" * 500, api_name="/skill_page")
    assert "<img" not in hostile[1] and len(hostile[1]) < 400


def test_evaluation_of_an_upload_through_a_fake_server_then_push(client, space, tmp_path, work):
    with FakeOpenAIServer(responder=knows_fact_if_told) as server:
        status, summary, chart, cases = evaluate(
            work, upload=[handle_file(str(zipped_skill(tmp_path)))], models=["local/x"],
            base_url=server.url, runs=1)
    assert status.startswith("✅") and "zorblax-ports" in status, status
    [row] = summary["data"]
    assert row[0] == "local/x" and row[1:5] == ["0%", "100%", "+100 [-80, +100]",
                                              "too few cases (3)"]
    assert len(cases["data"]) == 3 and len(chart["data"]) == 2
    refused = work.predict(api_name="/push_results")  # an upload is no registry version
    assert "belongs to no registry repo" in refused and "Pushed" not in refused
    table, _, _ = client.predict("zorblax", "All", "All", "All", api_name="/leaderboard")
    assert table["data"] in ([], [[""] * 13])
    with FakeOpenAIServer(responder=knows_fact_if_told) as server:
        status, summary, _, _ = evaluate(work, repo="hubskills/hf-hub-python-2x",
                                         models=["local/x"], base_url=server.url, runs=1)
    assert status.startswith("✅"), status
    pushed = work.predict(api_name="/push_results")
    assert pushed.startswith("✅") and "Pushed" in pushed
    records = board_entries(space.state.board().select(model="local/x"))
    assert [(e.repo, e.produced_by, e.produced_via) for e in records] == [
        ("hubskills/hf-hub-python-2x", "local", "space")]


def test_a_typed_key_is_used_but_never_shown_or_saved(space, keyed_server, work):
    out = evaluate(work, repo="hubskills/agent-skill-md", models=["openai/fake-student"],
                   max_cases=1, openai_key=SECRET)
    answered = [r for r in keyed_server.requests if r["path"].endswith("/chat/completions")]
    assert out[0].startswith("✅"), out[0]
    assert len(answered) == 2 and out[1]["data"][0][-1] == "0"  # no 401s: the key was used
    assert SECRET not in json.dumps(out)
    leaked = [p for p in space.home.rglob("*") if p.is_file() and SECRET.encode() in
              p.read_bytes()]
    assert leaked == []


def test_errors_are_readable_messages(client, work):
    status, summary, *_ = evaluate(work, repo="hubskills/agent-skill-md",
                                   models=["anthropic/claude-sonnet-5-5"])
    assert status.startswith("**Error:**") and "ANTHROPIC_API_KEY" in status
    assert "**Hint:** `type a key under 'API keys'" in status and "Traceback" not in status
    assert summary["data"] == []
    status, *_ = evaluate(work, repo="hubskills/agent-skill-md", models=["nosuch/model"])
    assert "unknown model reference" in status and "hubskills models" in status
    log, message, *_ = work.predict("   ", [], "auto", [], 4, 1, True, "", "", "", "",
                                      api_name="/generate")
    assert "**Error:** the task is empty" in message
    assert work.predict(api_name="/publish") == "Generate a skill first."


@pytest.mark.skipif(not availability()[0], reason="the embedded model is not installed")
def test_one_case_on_the_embedded_model(work):
    status, summary, chart, cases = evaluate(
        work, repo="hubskills/kernel-builder-cuda-kernels", max_cases=1, max_tokens=24)
    assert status.startswith("✅"), status
    assert [r[0] for r in summary["data"]] == ["embedded/smollm2-135m"]
    assert summary["data"][0][8] == "1×1" and len(cases["data"]) == 1
    assert {p[2] for p in chart["data"]} == {"baseline", "with skill"}



def teacher_and_student(body: dict) -> str:
    """`local/teacher` writes the skill and its cases; `local/student` knows only its context."""
    messages = body["messages"]
    system, last = json.dumps(messages[0]["content"]), json.dumps(messages[-1]["content"])
    if "writes Agent Skills" in system:
        if "test cases for the skill" in last or "were rejected" in last:
            cases = [{"id": f"port-{i}", "prompt": f"Question {i}: which port does zorblax "
                      "use?", "checks": [{"type": "contains", "value": ["4417"]}]}
                     for i in range(3)]
            return "```json\n" + json.dumps({"cases": cases}) + "\n```"
        return ("````markdown\n---\nname: zorblax-ports\ndescription: \"Ports of the zorblax "
                "daemon. Use when configuring zorblax.\"\nmetadata:\n  version: \"0.1.0\"\n"
                f"---\n\n# Zorblax\n\n{FACT}\n````")
    return "Port 4417." if body["model"] == "teacher" else knows_fact_if_told(body)


def test_generate_streams_previews_and_publishes(client, work):
    with FakeOpenAIServer(responder=teacher_and_student) as server:
        job = work.submit("Answer questions about the zorblax daemon", [], "local/teacher",
                            ["local/student"], 2, 1, False, server.url, "", "", "",
                            api_name="/generate")
        streamed = [out[0] for out in job]
        log, summary, body, suite, *_ = job.result()
    assert len(streamed) > 1 and streamed[0] != log  # the log grew while the teacher worked
    assert "draft: asking local/teacher" in log and "saved " in log, log
    assert "`local/student`: 0% → 100% with the skill" in summary, summary
    assert body.startswith("<div><h2>zorblax-ports</h2>") and FACT in body
    assert len(json.loads(suite)["cases"]) >= 1
    published = work.predict(api_name="/publish")
    assert published.startswith("✅ Published **local/zorblax-ports@v0.1.0**"), published
    page = client.predict("local/zorblax-ports", api_name="/skill_page")
    assert page[-2] == "hubskills pull local/zorblax-ports@v0.1.0"


def test_uploads_are_unpacked_safely(tmp_path):
    hostile = tmp_path / "hostile.zip"
    with zipfile.ZipFile(hostile, "w") as archive:
        archive.writestr("skill/SKILL.md", "---\nname: skill\n---\n")
        archive.writestr("../escape.txt", "outside")
    with pytest.raises(UnsafeSkill):
        unpack_upload([str(hostile)], tmp_path / "a")
    assert not (tmp_path / "escape.txt").exists()
    fake = tmp_path / "fake.zip"
    fake.write_text("not a zip")
    with pytest.raises(InvalidSkill, match="not a zip file"):
        unpack_upload([str(fake)], tmp_path / "b")
    loose = [tmp_path / "SKILL.md", tmp_path / "evals.json"]
    loose[0].write_text("---\nname: loose\n---\n")
    loose[1].write_text("{}")
    folder = unpack_upload([str(p) for p in loose], tmp_path / "c")
    assert (folder / "SKILL.md").is_file() and (folder / "evals" / "evals.json").is_file()
    # a name twice, or a file and a folder of one name: refused as such, not a raw
    # FileExistsError (a red-team walk)
    for index, names in enumerate((["skill/SKILL.md", "skill/SKILL.md"],
                                   ["skill/notes", "skill/notes/more.md"])):
        twice = tmp_path / f"twice{index}.zip"
        with zipfile.ZipFile(twice, "w") as archive, warnings.catch_warnings():
            warnings.simplefilter("ignore")  # zipfile warns of the duplicate name
            for name in names:
                archive.writestr(name, "---\nname: skill\n---\n")
        with pytest.raises(UnsafeSkill, match="given twice, or as a file and as a folder"):
            unpack_upload([str(twice)], tmp_path / f"d{index}")


def run_as_visitor(demo: gr.Blocks, models: list[str]) -> str:
    """Evaluate one case of a seeded skill with no typed key; returns the status."""
    evaluate_fn = handler(demo, "evaluate")
    status, *_ = evaluate_fn("hubskills/agent-skill-md", None, models, "", 1, "inline", "user",
                             1, 16, 0, "", "", "", progress=None)
    return status


def test_on_a_space_the_server_keys_are_lent_only_with_the_owners_flag(tmp_path, keyed_server):
    env = {"HUBSKILLS_HOME": str(tmp_path / "home"), "SPACE_ID": "owner/hubskills",
           "OPENAI_API_KEY": SECRET, "OPENAI_BASE_URL": keyed_server.url}
    refused = build_demo(Settings.from_env(env))  # a Space: detected from SPACE_ID
    with pytest.warns(UserWarning, match="OPENAI_API_KEY"):  # the toast, outside a request
        status = run_as_visitor(refused, ["openai/fake-student"])
    assert "OPENAI_API_KEY is not set" in status and "type a key" in status
    lent = build_demo(Settings.from_env({**env, "HUBSKILLS_SPACE_LEND_KEYS": "1"}))
    status = run_as_visitor(lent, ["openai/fake-student"])
    assert status.startswith("✅"), status
    local = build_demo(Settings.from_env({**env, "SPACE_ID": ""}))  # `make run`: the owner
    assert run_as_visitor(local, ["openai/fake-student"]).startswith("✅")


def saved_run(settings: Settings) -> str:
    """A finished two-row run saved in the Space's runs folder; returns its id."""
    manifest = RunManifest(run_id=new_run_id(), skill_name="s", skill_repo="owner/s",
                           content_hash="sha256:0",
                           suite_hash="sha256:0", models=["local/x"], case_ids=["c"])
    writer = RunWriter(settings.runs_dir, manifest)
    for arm in ("baseline", "skill"):
        writer.add(ResultRow(run_id=manifest.run_id, skill_name="s", model="local/x", arm=arm,
                             case_id="c", passed=arm == "skill", score=1.0))
    writer.close("complete")
    return manifest.run_id


def test_on_a_space_a_push_needs_sign_in_and_uses_the_visitors_token(tmp_path):
    if huggingface_hub.constants.HF_HUB_OFFLINE:
        pytest.skip("huggingface_hub was imported with HF_HUB_OFFLINE=1 (read once, at import)")
    with FakeHub() as hub:
        settings = Settings.from_env({
            "HUBSKILLS_HOME": str(tmp_path / "home"), "SPACE_ID": "owner/hubskills",
            "HUBSKILLS_REGISTRY": "hub", "HF_ENDPOINT": hub.url,
            "HF_TOKEN": "hf_the_space_owners_token", "HUBSKILLS_RESULTS_REPO": "owner/evals"})
        demo = build_demo(settings)
        push, publish = handler(demo, "push_results"), handler(demo, "publish")
        run_id = saved_run(settings)
        with pytest.warns(UserWarning, match="needs Hugging Face sign-in"):
            refused = push(run_id, None)
        assert "**Error:** writing from this Space needs Hugging Face sign-in" in refused
        assert "hubskills eval SKILL --push" in refused
        with pytest.warns(UserWarning, match="needs Hugging Face sign-in"):
            assert "needs Hugging Face sign-in" in publish(str(tmp_path), None)
        assert hub.commit_tokens == [] and hub.count("POST") == 0  # nothing was written
        visitor = gr.OAuthToken(token="hf_a_visitors_own_token", scope="write", expires_at=0)
        pushed = push(run_id, visitor)
        assert pushed.startswith("✅ Pushed 2 rows"), pushed
        assert hub.commit_tokens and {t for _, t in hub.commit_tokens} == {visitor.token}
        assert {repo for repo, _ in hub.commit_tokens} == {"owner/evals"}


def test_a_space_response_never_shows_a_key(client, space, monkeypatch, tmp_path, work):
    env_key, file_key = "sk-server-env-key-0123456789", "hf_server_token_file_0123456"
    monkeypatch.setenv("ACME_API_KEY", env_key)  # the server's own, in its environment
    (tmp_path / "hf-home").mkdir()
    (tmp_path / "hf-home" / "token").write_text(file_key)  # and in its HF token file
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    leaked = [SECRET, env_key, file_key]
    echo = " ".join(leaked)
    with FakeOpenAIServer(responder=lambda body: echo) as server:
        quoting = zipped_skill(tmp_path, [{"type": "equals", "value": "4417"}])  # quotes output
        out = evaluate(work, upload=[handle_file(str(quoting))], models=["local/x"],
                       base_url=server.url, openai_key=SECRET)
    why = [row[-1] for row in out[3]["data"]]
    assert out[0].startswith("✅") and all(MASK in w for w in why), why  # the echo got through
    status, *_ = evaluate(work, models=[f"nosuch/{key}" for key in leaked],
                          repo="hubskills/agent-skill-md", openai_key=SECRET)
    assert "unknown model reference" in status and MASK in status, status
    shown = json.dumps([out, status])
    assert not any(key in shown for key in leaked)
    assert [p for p in space.home.rglob("*") if p.is_file()
            and any(key.encode() in p.read_bytes() for key in leaked)] == []


def test_every_handler_runs_in_its_own_scope_and_is_scrubbed(space, monkeypatch):
    assert all(getattr(f.fn, "hubskills_scrubbed", False) for page in pages(space.demo)
               for f in page.fns.values() if f.fn is not None)
    monkeypatch.setenv("ACME_TOKEN", "server-token-0123456789")

    def plain(key: str):
        hold(key)
        return f"typed {key}, server-token-0123456789", pd.DataFrame({"cell": [key]})

    def streamed(key: str):
        hold(key)
        yield f"first {key}"
        yield f"then {key}"

    def failing(key: str):
        hold(key)
        raise gr.Error(f"bad {key}")

    with gr.Blocks() as mini:
        box, text, table = gr.Textbox(), gr.Textbox(), gr.Dataframe()
        for fn in (plain, streamed, failing):
            box.submit(fn, box, [text, table] if fn is plain else text, api_name=fn.__name__)
    scrub_responses(mini)
    said, frame = handler(mini, "plain")(SECRET)
    assert said == f"typed {MASK}, {MASK}" and frame["cell"].tolist() == [MASK]
    steps = handler(mini, "streamed")(SECRET)
    first = next(steps)
    other_thread = []  # Gradio may run each step of a stream in another worker thread
    worker = threading.Thread(target=lambda: other_thread.extend(steps))
    worker.start()
    worker.join()
    assert [first, *other_thread] == [f"first {MASK}", f"then {MASK}"]
    with pytest.raises(gr.Error) as raised:
        handler(mini, "failing")(SECRET)
    assert raised.value.message == f"bad {MASK}"
    assert scrub(SECRET) == SECRET  # every request is over: its key is no longer held


def test_a_generated_skill_never_keeps_a_typed_key(space, work):
    def leaky_teacher(body: dict) -> str:
        return teacher_and_student(body).replace(FACT, f"{FACT} Use the key {SECRET}.")

    with FakeOpenAIServer(responder=leaky_teacher) as server:
        log, summary, body, *_ = work.predict(
            "Answer questions about the zorblax daemon", [], "local/teacher", ["local/student"],
            2, 0, True, server.url, "", SECRET, "", api_name="/generate")
    assert f"Use the key {MASK}." in body, (body, summary)  # the key reached the writer
    assert [p for p in space.home.rglob("*") if p.is_file()
            and SECRET.encode() in p.read_bytes()] == []


def test_opening_a_skill_page_is_no_download(space):
    """The page reads the skill's files to show them (`SpaceState.skill_folder`): a view, not
    a pull, so the count people read as "downloads" stays what pulls made it."""
    repo = SEEDED[0]
    before = space.state.store.info(repo).downloads
    state = SpaceState(space.state.settings, on_space=False, refresh_every=0)  # a cold cache
    try:
        header = skill_page.render(state, repo)[1]
        assert f"{before} download{'' if before == 1 else 's'}" in header, header
        assert space.state.store.info(repo).downloads == before
    finally:
        state.data.stop()


def test_a_skill_pages_ranks_are_its_places_on_the_leaderboard(space):
    """The skill page's rank column is where each entry stands on the leaderboard as it opens,
    not its place among the skill's own entries (a skill second on the board showed 'rank 1')."""
    table, _, _ = leaderboard_tab.leaderboard(space.state, "", ALL, ALL, ALL)
    board = [(row[0], skill_from_link(row[1])) for row in table["data"]]
    for repo in SEEDED:
        ranks = skill_data.results_table(space.state.board(), repo)["rank"].tolist()
        assert ranks == [rank for rank, skill in board if skill == repo], (repo, ranks, board)
    assert any(ranks[0] != "1" for ranks in [
        skill_data.results_table(space.state.board(), repo)["rank"].tolist()
        for repo in SEEDED])  # some skill's best entry is not first on the board


def test_one_download_is_one_download():
    from space.skill_data import _header

    assert "1 download ·" in _header("ns/s", "1.0.0", "d", "mit", 1, ["x"])
    assert "1 downloads" not in _header("ns/s", "1.0.0", "d", "mit", 1, [])
    assert "2 downloads" in _header("ns/s", "1.0.0", "d", "mit", 2, [])
