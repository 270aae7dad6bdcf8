"""The kernel-builder skill's agent-mode cases (`evals/agent.json`): every check passes on a
hand-written correct workspace, and a subtly wrong one fails exactly the checks that should.

Each workspace is seeded like agent mode's skill arm (the case's files and the skill under
`.agents/skills/`), then the answer's files are written over it, as an agent would.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from sandbox_required import bwrap_sandbox

from registry.agent import seed_workspace
from registry.evaluation.checks import run_checks
from registry.format.skill import load_skill
from registry.format.suite import Case, load_suite
from registry.format.suite_check import check_suite

FOLDER = Path(__file__).resolve().parents[1] / "skills" / "kernel-builder-cuda-kernels"
SUITE = load_suite(FOLDER / "evals" / "agent.json", skill_dir=FOLDER)
CASES = {case.id: case for case in SUITE.cases}

TOML = CASES["hopper-guard"].files["build.toml"]
HEADER = CASES["torch-binding"].files["torch-ext/torch_binding.h"]
BINDING = """#include <torch/library.h>

#include "registration.h"
#include "torch_binding.h"

TORCH_LIBRARY_EXPAND(TORCH_EXTENSION_NAME, ops) {
  ops.def("fused_gelu(Tensor! out, Tensor input) -> ()");
  ops.impl("fused_gelu", torch::kCUDA, &fused_gelu);
}

REGISTER_EXTENSION(TORCH_EXTENSION_NAME)
"""
KERNEL = """#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/all.h>

__global__ void fused_gelu_kernel(float *out, const float *in, int n) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("wgmma.fence.sync.aligned;\\n" ::: "memory");
#endif
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float x = in[i];
    out[i] = 0.5f * x * (1.0f + tanhf(0.7978845608f * (x + 0.044715f * x * x * x)));
  }
}

void fused_gelu(torch::Tensor &out, torch::Tensor const &input) {
  TORCH_CHECK(input.scalar_type() == at::ScalarType::Float, "fused_gelu: input must be float32");
  const at::cuda::OptionalCUDAGuard device_guard(device_of(input));
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  int n = input.numel();
  int threads = 256;
  int blocks = (n + threads - 1) / threads;
  fused_gelu_kernel<<<blocks, threads, 0, stream>>>(out.data_ptr<float>(),
                                                    input.data_ptr<float>(), n);
}
"""
PACKAGE = """import torch

from ._ops import add_op_namespace_prefix, ops


def fused_gelu(out: torch.Tensor, input: torch.Tensor) -> torch.Tensor:
    ops.fused_gelu(out, input)
    return out


@torch.library.register_fake(add_op_namespace_prefix("fused_gelu"))
def _fused_gelu_fake(out: torch.Tensor, input: torch.Tensor) -> None:
    return None
"""
TEST = """import pytest
import torch
import torch.nn.functional as F

from fused_gelu import fused_gelu


@pytest.mark.kernels_ci
def test_fused_gelu_matches_torch():
    x = torch.randn(1024, device="cuda")
    out = torch.empty_like(x)
    torch.testing.assert_close(fused_gelu(out, x), F.gelu(x, approximate="tanh"))
"""
SUMMARY = """import csv

with open("data.csv") as handle:
    scores = [float(row["score"]) for row in csv.DictReader(handle)]
print(sum(scores) / len(scores))
"""
GUARDED = CASES["hopper-guard"].files["fused_gelu_cuda/fused_gelu.cu"].replace(
    '  asm volatile', '#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900\n  asm volatile').replace(
    '"memory");\n', '"memory");\n#endif\n')
README = CASES["not-a-kernel-typo"].files["README.md"]

#: case id -> the files a right answer leaves in the workspace.
RIGHT: dict[str, dict[str, str]] = {
    "gelu-h100-project": {"build.toml": TOML, "torch-ext/torch_binding.cpp": BINDING,
                          "torch-ext/torch_binding.h": HEADER,
                          "fused_gelu_cuda/fused_gelu.cu": KERNEL,
                          "torch-ext/fused_gelu/__init__.py": PACKAGE},
    "hopper-guard": {"fused_gelu_cuda/fused_gelu.cu": GUARDED},
    "torch-binding": {"torch-ext/torch_binding.cpp": BINDING},
    "python-wrapper": {"torch-ext/fused_gelu/__init__.py": PACKAGE},
    "ci-test": {"tests/test_fused_gelu.py": TEST},
    "stream-and-guard": {"fused_gelu_cuda/fused_gelu.cu": KERNEL},
    "a100-too": {"build.toml": TOML.replace('["9.0"]', '["8.0", "9.0"]')},
    "hub-major-version": {"build.toml": TOML.replace("version = 1", "version = 2")
                          .replace('"myorg/fused_gelu"', '"acme/fused-gelu"')},
    "not-a-kernel-csv": {"summarize.py": SUMMARY},
    "not-a-kernel-typo": {"README.md": README.replace("Instalation", "Installation")},
}

#: (case id, file, text replaced, replacement) -> the names of the checks that must then fail.
WRONG: list[tuple[str, str, str, str, set[str]]] = [
    ("gelu-h100-project", "build.toml", '["9.0"]', '["8.0"]', {"H100 capability"}),
    ("gelu-h100-project", "build.toml", '"fused_gelu_cuda/', '"kernel_src/',
     {"listed sources exist"}),  # the seed blog's outdated layout
    ("gelu-h100-project", "torch-ext/torch_binding.cpp", "torch::kCUDA", "torch::kCPU",
     {"CUDA implementation"}),
    ("hopper-guard", "fused_gelu_cuda/fused_gelu.cu", ">= 900", ">= 800",
     {"guarded with __CUDA_ARCH__ >= 900", "no older-arch guard"}),
    ("torch-binding", "torch-ext/torch_binding.cpp", "REGISTER_EXTENSION(TORCH_EXTENSION_NAME)\n",
     "", {"REGISTER_EXTENSION last"}),
    ("torch-binding", "torch-ext/torch_binding.cpp", "Tensor! out", "Tensor out", {"op schema"}),
    ("python-wrapper", "torch-ext/fused_gelu/__init__.py", 'add_op_namespace_prefix("fused_gelu")',
     '"fused_gelu::fused_gelu"',
     {"ops import and fake registration", "no hard-coded namespace"}),
    ("python-wrapper", "torch-ext/fused_gelu/__init__.py", "def fused_gelu(", "def fused_gelu(:",
     {"valid Python"}),
    ("ci-test", "tests/test_fused_gelu.py", "kernels_ci", "ci", {"CI marker"}),
    ("stream-and-guard", "fused_gelu_cuda/fused_gelu.cu", "threads, 0, stream>>>", "threads>>>",
     {"launch on a stream"}),
    ("a100-too", "build.toml", '["8.0", "9.0"]', '["8.9", "9.0"]', {"A100 built"}),  # L4, not A100
    ("a100-too", "build.toml", 'src = ["fused_gelu_cuda', 'src = ["kernel_src',
     {"kernel sources unchanged"}),
    ("hub-major-version", "build.toml", "version = 2", "version = 1",
     {"next major version"}),  # same branch v1: the breaking change overwrites it
    ("hub-major-version", "build.toml", '"acme/fused-gelu"', '"acme/fused_gelu"',
     {"Hub repository"}),
    ("not-a-kernel-csv", "summarize.py", "/ len(scores)", "/ (len(scores) + 1)",
     {"prints the mean"}),
    ("not-a-kernel-typo", "README.md", "Run `pip install .` from this folder.\n", "",
     {"rest kept"}),
]


@pytest.fixture(scope="module")
def sandbox():
    return bwrap_sandbox()


def failing(case: Case, files: dict[str, str], root: Path, sandbox) -> dict[str, str]:
    """The name and reason of every check of `case` that fails on the workspace `files` left."""
    workspace = seed_workspace(root, case.files, skill=load_skill(FOLDER))
    for name, text in files.items():
        (workspace.path / name).parent.mkdir(parents=True, exist_ok=True)
        (workspace.path / name).write_text(text)
    results = asyncio.run(run_checks(case, "Done.", sandbox=sandbox, workspace=workspace.path))
    assert not any(r.skipped for r in results), [r.reason for r in results if r.skipped]
    return {r.label: r.reason for r in results if not r.passed}


def test_the_agent_suite_is_valid_and_has_tasks_the_skill_should_not_be_used_for():
    assert check_suite(FOLDER) == []  # evals.json and agent.json both validate
    assert 6 <= len(SUITE.cases) <= 10 and set(RIGHT) == set(CASES)
    assert [c.id for c in SUITE.cases if not c.expect_skill] == ["not-a-kernel-csv",
                                                                "not-a-kernel-typo"]
    assert all("kernel-builder docs" in c.metadata["facts"] for c in SUITE.cases
               if c.expect_skill)
    workspace_types = {"file_exists", "file_contains", "file_not_contains", "file_regex",
                       "file_parses", "command"}
    assert {check.type for c in SUITE.cases for check in c.checks} == workspace_types


@pytest.mark.parametrize("case_id", sorted(RIGHT))
def test_a_right_workspace_passes_every_check(case_id: str, tmp_path: Path, sandbox) -> None:
    assert failing(CASES[case_id], RIGHT[case_id], tmp_path / "ws", sandbox) == {}


@pytest.mark.parametrize(("case_id", "name", "old", "new", "expected"), WRONG,
                         ids=[f"{w[0]}:{sorted(w[4])[0]}" for w in WRONG])
def test_a_subtly_wrong_workspace_fails_the_right_checks(case_id: str, name: str, old: str,
                                                         new: str, expected: set[str],
                                                         tmp_path: Path, sandbox) -> None:
    files = dict(RIGHT[case_id])
    files[name] = (files.get(name) or CASES[case_id].files[name]).replace(old, new)
    assert files[name] != RIGHT[case_id].get(name)
    assert set(failing(CASES[case_id], files, tmp_path / "ws", sandbox)) == expected


def test_an_empty_workspace_fails_every_case(tmp_path: Path, sandbox) -> None:
    for number, case in enumerate(SUITE.cases):
        failed = failing(case, {}, tmp_path / str(number), sandbox)
        assert failed, case.id
