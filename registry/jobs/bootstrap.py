"""The command a shard's Job runs: get a sandbox if the run needs one, install the client's own
wheel, then run the shard.

The script is plain Python (any image with Python 3.11+ and pip runs it). When the run executes
code (code checks, agent mode) and `bwrap` is not on PATH, it installs bubblewrap with the
image's package manager where it can (root and `apt-get`, as in the default `python:3.12`),
saying so in one line; a failure is not fatal: the shard's probe then says why code cannot run.
It downloads the wheel the client uploaded, with the token the Job got as a secret (never on the
command line, as is an endpoint whose URL carries a credential: the Job reads it from its
`HF_ENDPOINT` secret), installs that exact file into a folder of its own and runs the Job's
module from it (`registry.jobs.shard`; `registry.verify.spot_job` for a spot check), so the Job
runs the client's code, not whatever version an index holds.
"""

from __future__ import annotations

import inspect

from registry.credentials import carries_secret

APT_INSTALL = ("apt-get update -qq && apt-get install -y -qq --no-install-recommends "
               "bubblewrap")


def bwrap_install(needed: bool, have_bwrap: bool, root: bool, apt: bool
                  ) -> tuple[str, str | None] | None:
    """What the Job does about bubblewrap: None (nothing: not needed, or already there), else
    (the line it prints, the shell command that installs it, or None when it cannot)."""
    if not needed or have_bwrap:
        return None
    if root and apt:
        return "bubblewrap: not in the image, installing it with apt-get", APT_INSTALL
    lacking = "not root" if not root else "no apt-get"
    return (f"bubblewrap: not in the image and not installable here ({lacking}); "
            "the shard's probe decides"), None


# The function above travels in the script as source: it is the one decision, tested as is.
BOOTSTRAP = f"APT_INSTALL = {APT_INSTALL!r}\n" + inspect.getsource(bwrap_install) + """
import os, shutil, subprocess, sys, tempfile, urllib.request
endpoint, repo, wheel, sandbox, module = sys.argv[1:6]
endpoint = endpoint or os.environ["HF_ENDPOINT"]  # "": its URL holds a credential
step = bwrap_install(sandbox == "1", shutil.which("bwrap") is not None,
                     hasattr(os, "geteuid") and os.geteuid() == 0,
                     shutil.which("apt-get") is not None)
if step:
    print(step[0], flush=True)
    if step[1]:
        done = subprocess.run(["/bin/sh", "-c", step[1]], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL).returncode
        print("bubblewrap: installed" if done == 0 and shutil.which("bwrap") else
              f"bubblewrap: not installed (apt-get exit {done}); the shard's probe decides",
              flush=True)
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
os.execve(sys.executable, [sys.executable, "-m", module, repo, *sys.argv[6:]], env)
"""


def command_for(endpoint: str, repo: str, wheel: str, run_id: str, shard: int, *,
                sandbox: bool = False) -> list[str]:
    """The Job's command for shard `shard` of `run_id` (no secret in it); `sandbox`: the run
    executes code, so the Job needs bubblewrap."""
    return module_command(endpoint, repo, wheel, "registry.jobs.shard", [run_id, str(shard)],
                          sandbox=sandbox)


def module_command(endpoint: str, repo: str, wheel: str, module: str, args: list[str], *,
                   sandbox: bool = False) -> list[str]:
    """The Job's command that runs `python -m module repo *args` from the wheel (no secret in
    it: the Hub shows it; an endpoint holding a credential goes as "", the Job reads it from
    its secrets, `remote.job_secrets`)."""
    shown = "" if carries_secret(endpoint) else endpoint
    return ["python", "-c", BOOTSTRAP, shown, repo, wheel, "1" if sandbox else "0", module,
            *args]
