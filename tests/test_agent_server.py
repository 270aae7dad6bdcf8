"""The scripted agent model that recorded tests/data/traces/recorded, spoken to by the real
SDKs: it must follow each wire format, and advance one step per tool result."""

from __future__ import annotations

import json

import anthropic
import httpx
import openai

from tests.fakes.agent_server import BAD_TOML, CHECK, ScriptedAgentServer

CLAUDE_TOOLS = [{"name": n, "description": n, "input_schema": {"type": "object"}}
                for n in ("Write", "Edit", "Bash")]


def test_anthropic_streaming_follows_the_script_by_tool_results():
    with ScriptedAgentServer(root="/w") as server:
        client = anthropic.Anthropic(base_url=server.url, api_key="k")
        messages: list[dict] = [{"role": "user", "content": "Write build.toml"}]
        calls = []
        for _ in range(5):
            with client.messages.stream(model="m", max_tokens=100, messages=messages,
                                        tools=CLAUDE_TOOLS) as stream:
                reply = stream.get_final_message()
            uses = [b for b in reply.content if b.type == "tool_use"]
            calls += [(u.name, u.input) for u in uses]
            messages += [{"role": "assistant", "content": [b.model_dump() for b in reply.content]},
                         {"role": "user", "content": [{"type": "tool_result", "tool_use_id": u.id,
                                                       "content": "ok"} for u in uses]}]
        side = client.messages.create(model="m", max_tokens=10, messages=messages[:1])
    assert [name for name, _ in calls] == ["Write", "Bash", "Edit", "Bash"]
    assert calls[0][1] == {"file_path": "/w/build.toml", "content": BAD_TOML}
    assert calls[1][1]["command"] == CHECK
    assert reply.stop_reason == "end_turn" and reply.content[0].text.startswith("Done:")
    assert side.content[0].text == "Relu build file"  # a side call does not move the script


def test_openai_responses_stream_gives_codex_its_exec_command_calls():
    tools = [{"type": "function", "name": "exec_command", "parameters": {"type": "object"}}]
    with ScriptedAgentServer(root="/w") as server:
        client = openai.OpenAI(base_url=f"{server.url}/v1", api_key="k")
        items: list[dict] = [{"role": "user", "content": "Write build.toml"}]
        commands = []
        for _ in range(4):
            events = list(client.responses.create(model="m", input=items, tools=tools,
                                                  stream=True))
            done = events[-1].response
            assert events[-1].type == "response.completed"
            for item in done.output:
                if item.type == "function_call":
                    commands.append(json.loads(item.arguments)["cmd"])
                    items += [item.model_dump(exclude_none=True),
                              {"type": "function_call_output", "call_id": item.call_id,
                               "output": "Process exited with code 0"}]
    assert commands[0] == f"cat > build.toml <<'EOF'\n{BAD_TOML}EOF"
    assert commands[1] == CHECK and commands[3] == CHECK
    assert 'src = ["relu/relu.cu"]' in commands[2]  # the whole file again, fixed


def test_gemini_json_mode_gets_an_object_that_fits_its_schema():
    schema = {"type": "OBJECT", "properties": {
        "reasoning": {"type": "STRING"},
        "next_speaker": {"type": "STRING", "enum": ["model", "user"]}}}
    with ScriptedAgentServer(root="/w") as server:
        reply = httpx.post(f"{server.url}/v1beta/models/m:generateContent", json={
            "contents": [{"role": "user", "parts": [{"text": "who speaks next?"}]}],
            "generationConfig": {"responseSchema": schema}}).json()
    text = reply["candidates"][0]["content"]["parts"][0]["text"]
    assert json.loads(text) == {"reasoning": "flash", "next_speaker": "user"}
