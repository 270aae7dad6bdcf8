"""Getting skills and results onto the registry, and checking them on the way in.

`publish` (a skill version, with `--with-run` its runs), `push` (a finished run into the
results dataset, replayed at once), `review` (pending pull-request submissions and forged claims)
and `review_replay` (replaying and merging them). Above `stores` (where things are kept) and
`evaluation` (the replay engine), so `stores/` holds storage only.
"""
