"""Getting skills and results onto the registry.

`publish` (a skill version, with `--with-run` its runs) and `push` (a finished run into the
results dataset, replayed at once by the verifier). Above `verify` (replays, spot checks, the
gate for submissions and the only writer of verification records) and `stores` (where things
are kept).
"""
