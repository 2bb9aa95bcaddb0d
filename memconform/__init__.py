"""memconform: a conformance kit for the memory that AI agents persist."""

__version__ = "0.1.0"

__all__ = ["__version__"]
