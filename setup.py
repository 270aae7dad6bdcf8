"""Build hook: the wheel carries the example skills as `registry/examples/`.

The one copy lives in the repository's `skills/` (three example skills, their `evals/`, and
their recorded runs in `skills/.runs/`); `build_py` copies it into the built package, so
`hubskills registry seed` works from an installed wheel exactly as from a clone (see
`registry/stores/seed.py: default_seed_dir`). An editable install reads `skills/` in place.
"""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

EXAMPLES = Path(__file__).resolve().parent / "skills"


class BuildPyWithExamples(build_py):
    """`build_py`, then `skills/` (dot-folders included) copied to `registry/examples/`."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False) or not EXAMPLES.is_dir():
            return
        target = Path(self.build_lib) / "registry" / "examples"
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(EXAMPLES, target,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".hubskills"))


setup(cmdclass={"build_py": BuildPyWithExamples})
