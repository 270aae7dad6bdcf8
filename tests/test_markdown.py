"""The one fenced-code parser: CommonMark blocks, and the lenient reading of teacher replies."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from registry.format.markdown import Fence, fenced_blocks


def test_blocks_carry_info_body_label_and_lines():
    text = "Intro.\n\n**k.cu**\n\n```cuda title=k.cu\nint x;\n```\nmid\n~~~\nplain\n~~~\n"
    assert fenced_blocks(text) == [
        Fence("cuda title=k.cu", "int x;\n", "**k.cu**", 4, 7),
        Fence("", "plain\n", "mid", 8, 11),
    ]


def test_commonmark_structure_decides_what_a_block_is():
    nested = "````markdown\n# T\n```bash\nls\n```\n````\n"
    assert [b.body for b in fenced_blocks(nested)] == ["# T\n```bash\nls\n```\n"]
    listed = "1. Build:\n   ```sh\n   make\n     -j2\n   ```\n"
    assert fenced_blocks(listed)[0].body == "make\n  -j2\n"  # de-indented as the item's content
    quoted = "> ```py\n> x = 1\n> ```\n"
    assert fenced_blocks(quoted)[0].body == "x = 1\n"
    assert fenced_blocks("    ```py\n    x = 1\n    ```\n") == []  # indented code, not a fence
    assert fenced_blocks("``` a`b\nx\n") == []  # a backtick in the info: inline code
    assert fenced_blocks("```py\nx = 1\ny = 2")[0].body == "x = 1\ny = 2\n"  # unclosed: to the end


def test_line_numbers_survive_crlf_and_lone_cr():
    [block] = fenced_blocks("a\r\nb\rc\r\n```\r\nx\r\n```\r\n")
    assert (block.start, block.end, block.before, block.body) == (3, 6, "c", "x\n")


def test_lenient_reading_keeps_code_inside_a_three_backtick_markdown_block():
    reply = "Sure:\n```markdown\n# Skill\n```bash\nrun --fast\n```\nMore.\n```\nDone.\n"
    strict = fenced_blocks(reply)
    assert strict[0].body == "# Skill\n```bash\nrun --fast\n"  # CommonMark closes early
    [lenient] = fenced_blocks(reply, lenient=True)
    assert lenient.body == "# Skill\n```bash\nrun --fast\n```\nMore.\n"
    assert (lenient.start, lenient.end, lenient.before) == (1, 8, "Sure:")


def test_lenient_reading_changes_nothing_without_an_inner_opener():
    text = "```\na\n```\n```py\nb\n```\n~~~\n```x\n~~~\n"
    assert fenced_blocks(text, lenient=True) == fenced_blocks(text)


_PLAIN_LINE = st.text(alphabet=st.characters(blacklist_categories=("Cs",),
                                             blacklist_characters="\r\n\0\x0b\x0c\x1c\x1d\x1e"
                                             "\x85\u2028\u2029"), max_size=30).filter(
    lambda line: not line.lstrip(" ").startswith(("```", "~~~")))


@given(st.lists(_PLAIN_LINE, max_size=8), st.sampled_from(["```", "~~~~", "`````"]))
def test_any_body_round_trips_through_a_fence(lines, fence):
    body = "".join(f"{line}\n" for line in lines)
    [block] = fenced_blocks(f"text\n{fence}py\n{body}{fence}\n")
    assert block.body == body and block.info == "py" and block.before == "text"
