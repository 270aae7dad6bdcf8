"""Getting skills and results onto the registry, and checking them on the way in.

`publish` (a skill version, with `--with-run` its runs), `push` (a finished run into the
results dataset, replayed at once), `review` (pending pull-request submissions and forged claims)
and `review_replay` (replaying and merging them); `verify_pushed` (a run as a registry's results
dataset holds it, replayed) and `resample` (a run re-asked for a spot check). Above `stores`
(where things are kept) and `evaluation` (the replay engine), so `stores/` holds storage only
and the code that reads runs from a registry takes a `SkillStore`.
"""
