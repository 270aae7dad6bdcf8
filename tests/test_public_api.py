"""The public face in `registry/__init__.py`: complete, consistent, and free to import."""

from __future__ import annotations

import ast
import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import registry

ROOT = Path(__file__).resolve().parent.parent


def _type_checking_imports() -> dict[str, str]:
    """public name -> "module:attribute" (or "module") from the TYPE_CHECKING block."""
    tree = ast.parse((ROOT / "registry" / "__init__.py").read_text())
    [block] = [node for node in tree.body if isinstance(node, ast.If)
               and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"]
    names: dict[str, str] = {}
    for node in block.body:
        assert isinstance(node, ast.ImportFrom) and node.module
        for alias in node.names:
            public = alias.asname or alias.name
            names[public] = f"{node.module}.{alias.name}" if _is_module(node.module, alias.name) \
                else f"{node.module}:{alias.name}"
    return names


def _is_module(package: str, name: str) -> bool:
    try:
        importlib.import_module(f"{package}.{name}")
    except ModuleNotFoundError:
        return False
    return True


def test_all_the_table_and_the_type_checking_block_agree():
    assert registry.__all__ == ["__version__", *registry._EXPORTS]
    assert len(set(registry.__all__)) == len(registry.__all__)
    assert _type_checking_imports() == registry._EXPORTS


@pytest.mark.parametrize("name", sorted(registry._EXPORTS))
def test_every_public_name_is_the_object_its_module_defines(name):
    module, _, attribute = registry._EXPORTS[name].partition(":")
    defining = importlib.import_module(module)
    assert getattr(registry, name) is (getattr(defining, attribute) if attribute else defining)
    assert name in dir(registry)


def test_unknown_names_raise_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'evaluate_everything'"):
        registry.evaluate_everything  # noqa: B018
    with pytest.raises(ImportError):
        exec("from registry import evaluate_everything", {})


def test_import_registry_loads_nothing_until_a_name_is_used(tmp_path):
    code = ("import json, sys, registry\n"
            "before = sorted(m for m in sys.modules if m.startswith('registry'))\n"
            "registry.load_skill\n"
            "after = sorted(m for m in sys.modules if m.startswith('registry'))\n"
            "third = sorted({m.split('.')[0] for m in sys.modules} & {'pydantic', 'yaml', "
            "'openai', 'pandas', 'huggingface_hub', 'gradio'})\n"
            "print(json.dumps([before, after, third, registry.__version__]))\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HUBSKILLS_HOME": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          timeout=60, check=True)
    before, after, third, version = json.loads(done.stdout)
    assert before == ["registry", "registry._version"]
    assert "registry.format.skill" in after and "registry.evaluation.engine" not in after
    assert "openai" not in third and "pandas" not in third and "gradio" not in third
    assert version == registry.__version__ and version.count(".") == 2


def test_results_dataset_is_the_registrys_results_as_a_datasets_split(tmp_path):
    """`registry.results_dataset()` loads the same rows the stores read, with `datasets`."""
    settings = registry.Settings.from_env({"HUBSKILLS_HOME": str(tmp_path / "home")})
    rows = registry.get_store(settings).read_results()  # the seeded examples' runs
    dataset = registry.results_dataset(settings)
    assert len(dataset) == len(rows) > 0
    assert sorted(set(dataset["run_id"])) == sorted({row.run_id for row in rows})
    assert sum(dataset["passed"]) == sum(bool(row.passed) for row in rows)
    assert (tmp_path / "home" / "datasets-cache").is_dir()  # its cache stays in HUBSKILLS_HOME
