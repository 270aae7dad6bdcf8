"""What an evaluation produces, as values: below the engine and the stores, so both use it.

`runs` (a run's `ResultRow`s and `RunManifest`, saved under `HUBSKILLS_HOME/runs/` and read
back), `replay_record` (what a row keeps for a replay), `stats` and `formulas` (the one statistics
engine), `report` (per-model summaries), `compare`, `display` (the words and numbers shown), and
the leaderboard core: `grouping`, `leaderboard`, `leaderboard_badges`, `leaderboard_table`,
`trigger_board` and the Space's `board`. Nothing here calls a model, a store or the sandbox.
"""
