"""The folder a code check's Python finds first (`registry.sandbox.check_env`): it holds only
`sitecustomize.py`."""
