"""`python -m registry.cli`: the same as the `hubskills` command."""

from registry.cli import main

if __name__ == "__main__":
    main()
