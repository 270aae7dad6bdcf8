"""The engine's `Evaluator` has everything the protocols of `evaluation/running.py` promise to
agent mode and the run notes (no type checker runs in CI: this test keeps the seam honest)."""

from __future__ import annotations

import inspect

from test_evaluate import make_skill

from registry.config import Settings
from registry.evaluation.config import EvalConfig
from registry.evaluation.engine import Evaluator
from registry.evaluation.running import RunningEval, Spending
from registry.format.skill import load_skill
from registry.format.suite import load_suite, suite_path
from registry.sandbox.policy import Choice


def test_the_evaluator_has_what_agent_mode_and_run_notes_use(tmp_path):
    settings = Settings.from_env({"HUBSKILLS_HOME": str(tmp_path / "home"),
                                  "HUBSKILLS_BASE_URL": "http://127.0.0.1:9"})
    skill = load_skill(make_skill(tmp_path, 1))
    suite = load_suite(suite_path(skill.path), skill_dir=skill.path)
    ev = Evaluator(skill, suite, EvalConfig(models=["local/m"]), settings, set(),
                   Choice(None, "none in the suite"))
    promised = {**Spending.__annotations__, **RunningEval.__annotations__}
    for name in promised:  # `writer` is set when the run opens: declared on the class
        assert hasattr(ev, name) or name in Evaluator.__annotations__, name
    wanted = inspect.signature(RunningEval.agent_runner)
    assert inspect.signature(Evaluator.agent_runner).parameters.keys() == \
        wanted.parameters.keys()
