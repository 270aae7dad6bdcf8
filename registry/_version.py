"""The package version, in a base module so that any layer may read it."""

__version__ = "0.1.0"
