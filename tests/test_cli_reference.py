"""docs/cli.md, the CLI reference: written from the commands, so it cannot drift from them."""

from __future__ import annotations

import click

from registry.cli import HIDDEN, _reference


def test_the_checked_in_page_is_what_the_commands_say_now():
    page = _reference.render()
    stale = _reference.PAGE.read_text(encoding="utf-8") != page
    assert not stale, (f"docs/cli.md is stale: run `{_reference.REGENERATE}` and commit "
                       "docs/cli.md")


def test_every_visible_command_and_subcommand_has_its_section_and_options():
    page = _reference.render()
    paths = [ctx.command_path for ctx, _ in _reference.commands()]
    assert paths == sorted(paths, key=str.split) and paths[0] == "hubskills"
    for name in ("runs show", "jobs cancel", "registry seed", "review merge", "suite import",
                 "trust add", "keys new", "eval"):
        assert f"hubskills {name}" in paths
    assert [p for p in paths if p.split()[1:2] and p.split()[1] in HIDDEN] == []  # `tests`
    for path in paths:
        assert f"`{path}`\n\n```text\n{path} [OPTIONS]" in page, path  # heading, then usage
    eval_section = page.split("## `hubskills eval`")[1].split("\n## ")[0]
    assert "| `--runs` | integer (≥ 1) | `3` | Independent repeats per case." in eval_section
    assert "Env: `HUBSKILLS_EVAL_RUNS`" in eval_section
    assert "--poll" not in page and "Sentinel" not in page  # hidden options; click's UNSET
    assert "| `-h`, `--help` |" not in page  # every command has it: the intro says so once


def test_the_page_does_not_depend_on_the_terminal(monkeypatch):
    monkeypatch.setenv("COLUMNS", "40")
    narrow = _reference.render()
    monkeypatch.setenv("COLUMNS", "300")
    assert _reference.render() == narrow


def test_help_text_becomes_markdown_with_example_blocks_as_code():
    command = click.Command("demo", help="""Do a thing to <name>.

    More, with `a <b>` kept as code.

    \b
    Example:
      hubskills demo x
      hubskills demo y --flag
    """)
    blocks = _reference._help_blocks(command.help or "")
    assert blocks == ["Do a thing to &lt;name>.\n", "More, with `a <b>` kept as code.\n",
                      "Example:\n", "```text\nhubskills demo x\nhubskills demo y --flag\n```\n"]


def test_check_exits_1_naming_the_command_when_the_page_is_stale(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(_reference, "PAGE", tmp_path / "cli.md")
    (tmp_path / "cli.md").write_text("# old\n", encoding="utf-8")
    assert _reference.main(["--check"]) == 1
    assert _reference.REGENERATE in capsys.readouterr().err
    assert _reference.main([]) == 0 and _reference.main(["--check"]) == 0
    assert (tmp_path / "cli.md").read_text(encoding="utf-8") == _reference.render()
