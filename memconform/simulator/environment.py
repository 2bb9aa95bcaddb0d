"""The runtime's environment, under the path runtimes were first written against.

Its home is :mod:`memconform.harness.environment` (the kit builds it around any
runtime under test, the simulator included); this module re-exports it
unchanged.
"""

from memconform.harness.environment import (
    Clock,
    Environment,
    IdSource,
    ScriptedFailure,
    ScriptError,
)

__all__ = [
    "Clock",
    "Environment",
    "IdSource",
    "ScriptError",
    "ScriptedFailure",
]
