"""The progress of a run on Hugging Face Jobs, and what a Ctrl-C while starting its Jobs undid
(printed through `_output`, like all output)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.markup import escape

from registry.cli._output import err, error, hint, info

if TYPE_CHECKING:
    from registry.jobs.launches import Undone


class ShardsProgress:
    """A run on Hugging Face Jobs: one bar over every shard's answers on a terminal (the shards'
    stages beside it), else a plain line whenever the count or a stage changes."""

    def __init__(self) -> None:
        self.run_id, self.last, self.bar = "", "", None
        if err.is_terminal:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

            self.bar = Progress(TextColumn("[bold]on Jobs"), BarColumn(), MofNCompleteColumn(),
                                TextColumn("{task.fields[stages]}"), console=err,
                                transient=True)
            self.task = self.bar.add_task("jobs", total=None, stages="")

    def __enter__(self) -> ShardsProgress:
        if self.bar is not None:
            self.bar.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.bar is not None:
            self.bar.__exit__(*exc)

    def start(self, manifest: Any, total: int) -> None:
        """Say the run id first: `runs show`, `jobs logs` and `jobs cancel` take it."""
        self.run_id = manifest.run_id
        info(f"run {manifest.run_id} ({escape(manifest.skill_name)}): {total} answers to get "
             "on Hugging Face Jobs")

    def update(self, done: int, total: int, stages: str) -> None:
        """The answers so far over all shards, and the shards' stages."""
        if self.bar is not None:
            self.bar.update(self.task, completed=done, total=total, stages=escape(stages))
            return
        line = f"run {self.run_id}: {done}/{total} answers · shards: {stages}"
        if line != self.last:
            self.last = line
            info(line)


def say_undone(undone: Undone, *, by: str = "Ctrl-C") -> None:
    """After Ctrl-C (or the signal ``by``) while Jobs were being started: what was cancelled;
    when something may still run (a cancel failed, or a create cut short left a Job not listed
    yet), the `hf` commands that find it by the launch's label."""
    said = f"{by} while starting Hugging Face Jobs: {escape(undone.summary())}"
    if undone.is_clean:
        info(said)
        return
    error(said)
    hint(escape(undone.commands()))
