"""Tables before they have rows, as a newcomer sees them: the Skill tab before a skill is
picked, the pending submissions before they are shown. They name their columns (Gradio's
default for a table without a value is "1 2 3")."""

from __future__ import annotations

from registry.config import Settings
from space import build_demo


def test_tables_name_their_columns_before_they_have_rows(tmp_path):
    settings = Settings.from_env({"HUBSKILLS_HOME": str(tmp_path / "home"),
                                  "HF_HUB_OFFLINE": "1"})
    demo = build_demo(settings, on_space=False)
    try:
        props = {c["props"].get("elem_id"): c["props"] for c in demo.config["components"]}
        assert props["skill-files"]["value"]["headers"] == ["file", "size"]
        assert props["skill-versions"]["value"]["headers"] == ["version", "tag", "revision",
                                                               "date"]
        results = props["skill-results"]["value"]["headers"]
        assert results[:2] == ["rank", "skill@version"] and "lift [95% CI]" in results
        assert props["pending-table"]["value"]["headers"] == [*results, "submitted by"]
    finally:
        demo.close()


def test_the_header_counts_say_one_in_the_singular():
    """A registry with one model's runs read "1 MODELS" (a walk)."""
    from space.theme import header_html

    shown = header_html({"skills": 3, "runs": 1, "models": 1})
    assert "<b>1</b><span>model</span>" in shown and "<b>1</b><span>eval run</span>" in shown
    assert "<b>3</b><span>skills</span>" in shown
