"""The adapters of the subjects under test: the built-in stores, the third-party
stores and framework runtimes (:mod:`memconform.adapters.libraries`), and the
registry that opens a store by URL.

A vendor implements :class:`Store` (and the small Protocol of each optional
capability it declares; their home is :mod:`memconform.contract`, re-exported
here); the kit opens stores by URL with :func:`open_store`.
"""

from memconform.adapters.registry import StoreURLError, open_store, redact_url
from memconform.contract import (
    CAPABILITY_METHODS,
    Capability,
    CommitFlagsStore,
    ConflictError,
    DuplicateIdError,
    ErrorsStore,
    KnowledgeStore,
    Provision,
    StateStore,
    Store,
    StoreError,
    TurnRecordsStore,
    UnsupportedValueError,
    provisions_of,
)
from memconform.harness.proxy import AdapterContractError, AdapterTimeoutError, RecordingStore
from memconform.values import ErrorRecord, Fact, Message, StateEntry, TurnRecord

__all__ = [
    "CAPABILITY_METHODS",
    "AdapterContractError",
    "AdapterTimeoutError",
    "Capability",
    "CommitFlagsStore",
    "ConflictError",
    "DuplicateIdError",
    "ErrorRecord",
    "ErrorsStore",
    "Fact",
    "KnowledgeStore",
    "Message",
    "Provision",
    "RecordingStore",
    "StateEntry",
    "StateStore",
    "Store",
    "StoreError",
    "StoreURLError",
    "TurnRecord",
    "TurnRecordsStore",
    "UnsupportedValueError",
    "open_store",
    "provisions_of",
    "redact_url",
]
