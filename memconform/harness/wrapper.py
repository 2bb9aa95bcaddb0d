"""The store-wrapper base: a store object around another store.

The kit's fault wrappers (:mod:`memconform.harness.faults`) and the store
mutants (:mod:`memconform.mutants`) are all built the same way: they hold a
store, change a few of its calls, and hand every other attribute to it.
:class:`StoreWrapper` is that shape, written once.
"""

from __future__ import annotations

from typing import Any

__all__ = ["StoreWrapper"]


class StoreWrapper:
    """A store that delegates to :attr:`inner` every attribute it does not define.

    Contract:

    - :attr:`inner` is the wrapped store, set once by the constructor. It is
      typed ``Any``: a wrapper serves any store, whatever optional parts of the
      contract (errors, turn records, state, knowledge) it implements.
    - Every attribute the wrapper's class does not define (methods, ``path``,
      ``close``, ...) is looked up on :attr:`inner` through ``__getattr__``, so
      a wrapper offers exactly what its inner store offers, and a call it does
      not change reaches the inner store with the same arguments and returns
      its result (or raises its exception) unchanged.
    - :attr:`capabilities` is the inner store's declaration, unchanged: a
      wrapper that breaks a promise still declares it, so the check of that
      promise runs and fails.
    - A subclass overrides exactly the methods it changes (and
      :attr:`capabilities` only when it means to change the declaration).
    """

    inner: Any

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    @property
    def capabilities(self) -> Any:
        """The inner store's declaration, unchanged."""
        return self.inner.capabilities
