"""The CI gate (`hubskills ci`): evaluate the skills a change touches against their published
versions and fail the build when a lift falls. A workflow above the engine and the stores:
`changes` finds the touched skills in git, `published` the version each is compared with, `run`
evaluates them, `report` writes the verdicts (text, Markdown, JUnit)."""
