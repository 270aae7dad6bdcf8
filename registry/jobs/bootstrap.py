"""The command a shard's Job runs: install the client's own wheel, then run the shard.

The script is plain Python (any image with Python 3.11+ and pip runs it). It downloads the wheel
the client uploaded, with the token the Job got as a secret (never on the command line), installs
that exact file into a folder of its own and runs `registry.jobs.shard` from it, so the Job runs
the client's code, not whatever version an index holds.
"""

from __future__ import annotations

BOOTSTRAP = """\
import os, subprocess, sys, tempfile, urllib.request
endpoint, repo, wheel = sys.argv[1:4]
folder = tempfile.mkdtemp(prefix="hubskills-")
target = os.path.join(folder, wheel.rsplit("/", 1)[-1])
request = urllib.request.Request(f"{endpoint}/datasets/{repo}/resolve/main/{wheel}",
                                 headers={"Authorization": "Bearer " + os.environ["HF_TOKEN"]})
with urllib.request.urlopen(request) as answer, open(target, "wb") as out:
    out.write(answer.read())
site = os.path.join(folder, "site")
subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-compile",
                "--disable-pip-version-check", "--target", site, target], check=True)
print("installed", wheel.rsplit("/", 1)[-1], flush=True)
env = dict(os.environ, PYTHONPATH=site)
os.execve(sys.executable, [sys.executable, "-m", "registry.jobs.shard", repo, *sys.argv[4:]], env)
"""


def command_for(endpoint: str, repo: str, wheel: str, run_id: str, shard: int) -> list[str]:
    """The Job's command for shard `shard` of `run_id` (no secret in it)."""
    return ["python", "-c", BOOTSTRAP, endpoint, repo, wheel, run_id, str(shard)]
