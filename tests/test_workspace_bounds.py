"""What an agent's workspace may hold: sparse files are never read out nor inflated, deep
folders are walked and removed without recursion, and a workspace past its bounds fails its
sample in its arm while the run goes on."""

from __future__ import annotations

import asyncio
import json
import os
import resource
import subprocess
import tempfile
from pathlib import Path

import pytest
from fakes.openai_server import FakeOpenAIServer
from sandbox_required import bwrap_sandbox
from traced import traced_peak

from registry.agent import (
    AgentOutcome,
    Budget,
    WorkspaceBounds,
    WorkspaceOverLimit,
    WorkspaceTools,
    remove_tree,
    seed_workspace,
)
from registry.config import Settings
from registry.evaluation.config import EvalConfig
from registry.evaluation.engine import run_evaluation
from registry.evaluation.workspace_checks import copy_workspace
from registry.providers import RetryPolicy
from registry.providers.base import ToolCall

MB250 = 250 * 2**20
MIB = 2**20


def sparse(path: Path, data: bytes = b"") -> None:
    """A file claiming 250 MB, holding `data` at its start and a hole after."""
    path.write_bytes(data)
    os.truncate(path, MB250)


def deep_folders(root: Path, levels: int, name: str = "d") -> None:
    """`levels` nested folders `d/d/...` (made through descriptors: os.makedirs recurses, and
    a long path is refused by the kernel)."""
    fd = os.open(root, os.O_RDONLY)
    for _ in range(levels):
        os.mkdir(name, dir_fd=fd)
        child = os.open(name, os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = child
    os.close(fd)


def rm_rf(path: Path) -> None:
    """Remove a tree whatever hubskills did (pytest's own clean-up recurses on deep ones)."""
    subprocess.run(["rm", "-rf", str(path)], check=True)


def allocated(root: Path) -> int:
    return sum(p.lstat().st_blocks * 512 for p in root.rglob("*"))


def test_a_sparse_file_is_listed_with_its_size_never_read_and_copied_sparse(tmp_path):
    peak, changes = traced_peak("""
        from pathlib import Path
        from registry.agent import seed_workspace
        from test_workspace_bounds import sparse
        ws = seed_workspace(Path(root), {"a.txt": "one\\n"})
        sparse(ws.path / "big.bin", b"header")
        (ws.path / "a.txt").write_text("two\\n")
    """, "result = {c.path: c.to_dict() for c in ws.diff()}", root=str(tmp_path / "ws"))
    assert peak < 16 * MIB  # reading it whole would take 250 MB
    assert changes["big.bin"] == {"path": "big.bin", "status": "added", "size": MB250,
                                  "note": "too large to read (262,144,000 bytes)"}
    assert "-one\n+two\n" in changes["a.txt"]["diff"]

    assert copy_workspace(tmp_path / "ws", tmp_path / "copy") == []
    copied = tmp_path / "copy" / "big.bin"
    assert copied.stat().st_size == MB250 and allocated(tmp_path / "copy") < MIB
    with copied.open("rb") as handle:
        assert handle.read(8) == b"header\0\0"
        handle.seek(MB250 - 4)
        assert handle.read() == b"\0" * 4


def test_eight_sparse_files_are_over_the_bounds_and_the_copy_stays_small(tmp_path):
    ws = seed_workspace(tmp_path / "ws", {"a.txt": "a"})
    for i in range(8):
        sparse(ws.path / f"big{i}", b"x")
    with pytest.raises(WorkspaceOverLimit, match="add up to more than 512 MiB"):
        ws.diff()
    left_out = copy_workspace(ws.path, tmp_path / "copy")
    assert len(left_out) == 6 and all("over the copy's bounds" in why for why in left_out)
    assert allocated(tmp_path / "copy") < MIB


def tools_for(root: Path) -> WorkspaceTools:
    return WorkspaceTools(root, None, Budget(), AgentOutcome())


def test_list_files_on_1500_nested_folders_answers_and_removal_takes_them_all(tmp_path):
    ws = seed_workspace(tmp_path / "ws", {"a.txt": "a"})
    try:
        deep_folders(ws.path, 1500)
        (ws.path / "z.txt").write_text("z")
        text, is_error = asyncio.run(tools_for(ws.path).call(ToolCall("1", "list_files", {})))
        assert not is_error
        assert text.splitlines()[:2] == ["a.txt", "z.txt"]
        assert text.endswith("(not listed: folders are nested more than 64 deep "
                             f"({'/'.join(['d'] * 64)[:60]}…))")
        with pytest.raises(WorkspaceOverLimit, match="nested more than 64 deep"):
            ws.diff()
        remove_tree(tmp_path / "ws")
        assert not (tmp_path / "ws").exists()
    finally:
        rm_rf(tmp_path / "ws")


def test_removal_never_follows_a_link_out(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("keep")
    ws = tmp_path / "ws"
    (ws / "sub").mkdir(parents=True)
    (ws / "sub" / "link").symlink_to(outside)
    (ws / "file-link").symlink_to(outside / "keep.txt")
    remove_tree(ws)
    assert not ws.exists() and (outside / "keep.txt").read_text() == "keep"


def test_30000_files_are_over_the_count_and_a_listing_stops_at_it(tmp_path):
    ws = seed_workspace(tmp_path / "ws", {"a.txt": "a"})
    many = ws.path / "m"
    many.mkdir()
    for i in range(30_000):
        (many / f"f{i:05}").touch()
    with pytest.raises(WorkspaceOverLimit, match="more than 20,000 files and folders"):
        ws.diff()
    text, _ = asyncio.run(tools_for(ws.path).call(ToolCall("1", "list_files", {})))
    assert "(not listed: it holds more than 20,000 files and folders)" in text


# --- in a run: the sample fails in its arm, the others are all there ---------------------------

COMMANDS = {
    "sparse": "python3 -c \"import os; [open(f'big{i}', 'wb').truncate(250 * 2**20) "
              "for i in range(8)]\"",
    "deep": "python3 -c \"import os; [(os.mkdir('d'), os.chdir('d')) for _ in range(1500)]\"",
    "many": "python3 -c \"import os; os.mkdir('m'); [open(f'm/f{i}', 'w').close() "
            "for i in range(30000)]\"",
}
REASONS = {"sparse": "add up to more than 512 MiB", "deep": "nested more than 64 deep",
           "many": "more than 20,000 files and folders"}


def hostile_agent(body: dict) -> dict:
    """Per task: make the workspace sparse, deep or crowded, then list it; or work normally."""
    turn = sum(m.get("role") == "assistant" for m in body["messages"])
    task = next(m["content"] for m in body["messages"] if m["role"] == "user")
    kind = next((k for k in COMMANDS if f"[{k}]" in json.dumps(task)), None)
    steps = [{"name": "write_file", "arguments": {"path": "notes.txt", "content": "ok\n"}}] \
        if kind is None else [{"name": "run", "arguments": {"command": COMMANDS[kind]}},
                              {"name": "list_files", "arguments": {}}]
    if turn < len(steps):
        return {"text": "", "tool_calls": [steps[turn]]}
    return {"text": "done"}


def make_skill(root: Path) -> Path:
    folder = root / "bounds-skill"
    (folder / "evals").mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: bounds-skill\ndescription: \"Notes. Use when "
                                     "writing notes.\"\n---\n\nWrite notes.txt.\n")
    checks = [{"type": "contains", "value": ["done"]},
              {"type": "file_exists", "path": "notes.txt"},
              {"type": "command", "command": "test -f notes.txt"}]
    cases = [{"id": kind, "prompt": f"Task [{kind}]: write notes.txt.", "checks": checks}
             for kind in [*COMMANDS, "fine"]]
    (folder / "evals" / "agent.json").write_text(json.dumps({"cases": cases}))
    return folder


@pytest.fixture
def scratch(monkeypatch):
    """The system temp folder for the run: what a sample leaves there can be seen."""
    folder = Path(tempfile.mkdtemp(prefix="hubskills-bounds-test-"))
    folder.chmod(0o755)
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    yield folder
    rm_rf(folder)


def test_an_over_limit_workspace_fails_its_sample_in_its_arm_and_the_run_goes_on(
        tmp_path, scratch):
    bwrap_sandbox()
    skill = make_skill(tmp_path)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    with FakeOpenAIServer(responder=hostile_agent) as server:
        settings = Settings.from_env({"HUBSKILLS_HOME": str(tmp_path / "home"),
                                      "HUBSKILLS_BASE_URL": server.url})
        config = EvalConfig(models=["local/fake-agent"], runs=1, mode="agent",
                            retry=RetryPolicy(attempts=1))
        run = run_evaluation(skill, config, settings)
        listings = [m["content"] for b in server.bodies for m in b["messages"]
                    if m["role"] == "tool" and "not listed" in str(m["content"])]
    growth = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - before
    assert growth < 512 * MIB  # the 2 GB per arm the sparse files claim were never read

    assert run.manifest.status == "complete" and len(run.rows) == 8
    for row in run.rows:
        if row.case_id == "fine":
            assert row.passed and row.error is None, row
            continue
        assert (row.error_kind, row.passed, row.score) == ("arm", False, 0.0)
        assert row.error.startswith("the agent's workspace is over hubskills' bounds: ")
        assert REASONS[row.case_id] in row.error
    assert listings == []  # each hostile sample ended at the command that broke a bound
    assert list(scratch.iterdir()) == []  # every workspace removed, the deep ones too


def test_a_command_that_breaks_a_bound_ends_the_sample_then(tmp_path):
    bwrap_sandbox()
    ws = seed_workspace(tmp_path / "ws", {"a.txt": "a"})
    tools = WorkspaceTools(ws.path, bwrap_sandbox(), Budget(), AgentOutcome(),
                           bounds=WorkspaceBounds(entries=50))
    many = ToolCall("c1", "run", {"command": "for i in $(seq 60); do : > f$i; done"})

    async def sample() -> None:
        async with tools:
            assert (await tools.call(ToolCall("c0", "run", {"command": "true"})))[1] is False
            await tools.call(many)

    with pytest.raises(WorkspaceOverLimit, match="more than 50 files and folders"):
        asyncio.run(sample())


def test_the_file_tools_read_no_sparse_file_and_write_no_path_past_the_bounds(tmp_path):
    ws = seed_workspace(tmp_path / "ws", {"a.txt": "a"})
    sparse(ws.path / "big.bin")
    tools = tools_for(ws.path)
    peak, (text, is_error) = traced_peak("""
        import asyncio
        from pathlib import Path
        from registry.providers.base import ToolCall
        from test_workspace_bounds import tools_for
        tools = tools_for(Path(root))
    """, """
        result = asyncio.run(tools.call(ToolCall("1", "read_file", {"path": "big.bin"})))
    """, root=str(ws.path))
    assert is_error and peak < 16 * MIB
    assert "big.bin is 262,144,000 bytes, larger than the 8 MiB the file tools read" in text
    deep = "/".join(["d"] * 1500) + "/x.txt"
    text, is_error = asyncio.run(tools.call(ToolCall("2", "write_file", {"path": deep,
                                                                         "content": "x"})))
    assert is_error and "deeper than 64 folders or longer than 4,096 bytes" in text
    assert not (ws.path / "d").exists()


def test_a_path_too_long_and_too_much_disk_are_over_the_bounds(tmp_path):
    ws = seed_workspace(tmp_path / "ws", {"a.txt": "a"})
    deep_folders(ws.path, 17, "n" * 250)  # 4,266 bytes, well within 64 deep
    with pytest.raises(WorkspaceOverLimit, match="a path is longer than 4,096 bytes"):
        ws.diff()
    small = seed_workspace(tmp_path / "small", {"a.txt": "a"},
                           bounds=WorkspaceBounds(allocated_bytes=MIB))
    (small.path / "data.bin").write_bytes(os.urandom(2 * MIB))
    with pytest.raises(WorkspaceOverLimit, match="it uses more than 1 MiB of disk"):
        small.diff()
