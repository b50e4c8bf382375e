"""The package's version: one literal, which the facade, the sandbox and the CLI all show."""

__version__ = "0.1.0"

__all__ = ["__version__"]
