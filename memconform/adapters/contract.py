"""The Store contract, under the path adapters were first written against.

Its home is :mod:`memconform.contract`; this module re-exports it unchanged, so
``from memconform.adapters.contract import StoreError`` keeps working.
"""

from memconform.contract import (
    CAPABILITY_METHODS,
    Capability,
    CommitFlagsStore,
    ConflictError,
    DamageHook,
    DuplicateIdError,
    ErrorsStore,
    KnowledgeStore,
    Provision,
    StateStore,
    Store,
    StoreError,
    TurnRecordsStore,
    UnsupportedValueError,
    check_limit,
    damage_index,
    provisions_of,
)

__all__ = [
    "CAPABILITY_METHODS",
    "Capability",
    "CommitFlagsStore",
    "ConflictError",
    "DamageHook",
    "DuplicateIdError",
    "ErrorsStore",
    "KnowledgeStore",
    "Provision",
    "StateStore",
    "Store",
    "StoreError",
    "TurnRecordsStore",
    "UnsupportedValueError",
    "check_limit",
    "damage_index",
    "provisions_of",
]
