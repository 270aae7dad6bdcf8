"""`hubskills doctor`: what works on this machine, and what to install or set when it does not."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from rich.markup import escape

from registry._install import add_extra, make_here
from registry.cli import _output as out
from registry.config import Settings
from registry.errors import HubskillsError
from registry.sandbox import BACKENDS, sandbox_report

_KEYS = (("ANTHROPIC_API_KEY", "anthropic_api_key"), ("OPENAI_API_KEY", "openai_api_key"),
         ("HF_TOKEN", "hf_token"))


def _sandbox(settings: Settings) -> dict[str, Any]:
    backends: list[dict[str, Any]] = [{"name": n, "works": ok, "why": why}
                                      for n, ok, why in sandbox_report(settings)]
    isolating = [b for b in backends if BACKENDS[b["name"]](settings).isolating]
    chosen = next((b["name"] for b in isolating if b["works"]), None)
    return {"selected": chosen, "backends": backends}


def _embedded() -> dict[str, Any]:
    from registry.providers.embedded import availability, install_hint

    works, why = availability()
    return {"available": works, "why": why, "fix": "" if works else install_hint()}


_COUNTED = 1000  # skills counted at most (a Hub registry holding more says "1000+")


def _registry(settings: Settings) -> dict[str, Any]:
    from registry.registries import get_store

    kind = settings.registry
    try:
        found = get_store(settings).search("", limit=_COUNTED)
    except HubskillsError as err:
        return {"kind": kind, "reachable": False, "why": err.message}
    except Exception as err:  # noqa: BLE001 - any failure means "not reachable", said plainly
        return {"kind": kind, "reachable": False, "why": f"{type(err).__name__}: {err}"[:200]}
    where = settings.store_dir if kind == "local" else settings.hf_endpoint
    count = f"{len(found)}{'+' if len(found) == _COUNTED else ''}"
    return {"kind": kind, "reachable": True, "skills": len(found), "where": str(where),
            "why": f"{where} answers ({count} skill{'' if len(found) == 1 else 's'})"}


def _harnesses() -> dict[str, Any]:
    from registry.agent.harness import ADAPTERS, installed_clis

    return {name: {"found": str(found.binary) if found else None,
                   "package": f"{ADAPTERS[name].package}@{ADAPTERS[name].version}"}
            for name, found in installed_clis().items()}


def _space() -> dict[str, Any]:
    """Whether the Space's extra (Gradio) is installed; the CLI and library never need it."""
    return _package("gradio", "Gradio")


def _package(name: str, shown: str) -> dict[str, Any]:
    """Whether the distribution `name` (an extra's) is installed, and its version."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return {"installed": True, "why": f"{name} {version(name)}"}
    except PackageNotFoundError:
        return {"installed": False, "why": f"{shown} is not installed"}


def diagnose(settings: Settings) -> dict[str, Any]:
    """Sandbox backends, the embedded model, which keys are set (names only), the registry,
    which agent CLIs `--harness` can run, whether the Space's, MCP's and signing's extras are
    installed."""
    return {"sandbox": _sandbox(settings), "embedded_model": _embedded(),
            "keys": {name: bool(getattr(settings, field)) for name, field in _KEYS},
            "registry": _registry(settings), "harnesses": _harnesses(), "space": _space(),
            "mcp": _package("mcp", "the MCP SDK"),
            "signing": _package("model-signing", "model-signing")}


Row = tuple[str, str, str, str]  # check, status, detail, the command that fixes it ("": none)
# The way round a missing piece, printed as a shell comment under its fix (a fix is a command;
# "apt-get install bubblewrap (or run evals with --skip-code-checks)" failed when pasted)
_OTHERWISE = {"sandbox": "or leave code checks out: hubskills eval SKILL --skip-code-checks"}


def _rows(report: dict[str, Any]) -> list[Row]:
    box = report["sandbox"]
    rows: list[Row] = [("sandbox", box["selected"] or "none works",
                        "code checks run there" if box["selected"] else "code checks are refused",
                        "" if box["selected"] else "apt-get install bubblewrap")]
    rows += [(f"  {b['name']}", "ok" if b["works"] else "no", b["why"], "")
             for b in box["backends"]]
    model = report["embedded_model"]
    rows.append(("embedded model", "ok" if model["available"] else "no", model["why"],
                 "" if model["available"] else model["fix"]))
    keys = report["keys"]
    rows.append(("API keys", ", ".join(k for k, v in keys.items() if v) or "none set",
                 "not set: " + ", ".join(k for k, v in keys.items() if not v)
                 if not all(keys.values()) else "", ""))
    reg = report["registry"]
    rows.append((f"registry ({reg['kind']})", "ok" if reg["reachable"] else "unreachable",
                 _registry_detail(reg), ""))
    clis = report["harnesses"]
    missing = [c["package"] for c in clis.values() if not c["found"]]
    rows.append(("agent CLIs (--harness)", f"{len(clis) - len(missing)} of {len(clis)}",
                 "not all installed (npm, Node.js 20+)" if missing else "",
                 "" if not missing else make_here("agent-clis")
                 or f"npm install -g {' '.join(missing)}"))
    rows += [(f"  {name}", "ok" if c["found"] else "no", c["found"] or f"{c['package']} missing",
              "") for name, c in clis.items()]
    space = report["space"]
    rows.append(("Space (hubskills space)", "ok" if space["installed"] else "no",
                 escape(space["why"]), "" if space["installed"] else add_extra("space")))
    for key, check, extra in (("mcp", "MCP server (hubskills mcp)", "mcp"),
                              ("signing", "signatures (sign, keys)", "sign")):
        found = report[key]
        rows.append((check, "ok" if found["installed"] else "no", escape(found["why"]),
                     "" if found["installed"] else add_extra(extra)))
    return rows


def _registry_detail(reg: dict[str, Any]) -> str:
    """The count first, the folder under HOME as `~/…`: the column cuts the end (it cut the
    count off a registry under a long HOME)."""
    if not reg["reachable"]:
        return str(reg["why"])
    where, home = str(reg["where"]), str(Path.home())
    if where == home or where.startswith(home.rstrip("/") + "/"):
        where = "~" + where[len(home.rstrip("/")):]
    skills = reg["skills"]
    return f"{skills}{'+' if skills == _COUNTED else ''} skill{'s' * (skills != 1)} at {where}"


@click.command("doctor")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable report on stdout.")
def doctor_command(as_json: bool) -> None:
    """Say what works here: sandbox, embedded model, API keys (names only), registry, Space.

    \b
    Example:
      hubskills doctor
      hubskills doctor --json
    """
    report = diagnose(Settings.from_env())
    if as_json:
        out.as_json(report)
    else:
        rows = _rows(report)
        out.table(["check", "status", "detail"], [r[:3] for r in rows], title="hubskills doctor",
                  wrap=["detail"])  # why a piece is missing is what a newcomer came to read
        for check, _, _, fix in rows:  # whole, on lines of their own: never cut to fit a column
            if fix:
                out.result(f"{check.strip()}:")
                for line in out.command_lines(fix, out.out.width):
                    goes_on = line.endswith(" \\")  # escaped, the `\` would be doubled
                    out.result(escape(line.removesuffix(" \\")) + " \\" * goes_on)
                if check in _OTHERWISE:  # a comment: the lines still paste as printed
                    out.result(escape(f"  # {_OTHERWISE[check]}"))
    if report["sandbox"]["selected"] is None:  # scripts can gate on it: code checks cannot run
        raise SystemExit(1)
