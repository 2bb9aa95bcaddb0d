"""Step definitions of the ``store`` profile about damaged rows
(``features/store/damage.feature``, ST-037): a read never silently omits,
alters or reorders a message the store acknowledged.

The kit damages one stored message through the store's optional hook
``damage(thread_id)`` (:class:`~memconform.contract.DamageHook`); a
store without it is ``unsupported``. Each read afterwards is then one of:

- loud: it raises ``StoreError`` (or a subclass), and the caller knows;
- whole: it returns exactly what was acknowledged, every field unaltered and
  in append order (a store may keep a second copy and recover);
- silent: anything else returned without an error, which fails the rule.
  The evidence names what was missing, what changed and what moved.

Any other exception is the adapter breaking the contract (verdict ``error``),
as for every read a rule requires to succeed.

The hook is the adapter's; the kit cannot see into the store's storage. A
loud read shows the damage reached the store. When every read of the
scenario comes back whole, nothing the kit observed tells a store that
recovered the row from a hook that damaged nothing, so the scenario ends
``inconclusive`` (never a pass resting on the hook's word).
"""

from __future__ import annotations

import pytest
from pytest_bdd import parsers, then, when

from memconform import contract
from memconform.harness.proxy import AdapterContractError, RecordingStore
from memconform.steps.common import (
    Mismatch,
    decides,
    how_passed,
    inconclusive,
    transcript_table,
    unsupported,
)
from memconform.steps.store import StoreScene, must_succeed
from memconform.values import Message, same_value

__all__ = ["silent_difference"]

_LOUD = pytest.StashKey[list[str]]()
"""The reads of the scenario that raised StoreError, as said in the pass."""


def silent_difference(expected: list[Message], observed: list[Message]) -> str | None:
    """What a read returned without an error differs from what was acknowledged in:
    the ids missing, altered, added or out of order; ``None`` when it is the same."""
    wanted = {m.id: m for m in expected}
    got_ids = [m.id for m in observed]
    missing = [i for i in wanted if i not in got_ids]
    extra = [i for i in got_ids if i not in wanted]
    altered = [
        m.id for m in observed if m.id in wanted and not same_value(wanted[m.id], m)
    ]
    kept = [i for i in got_ids if i in wanted]
    reordered = kept != [i for i in wanted if i in kept]
    said = []
    if missing:
        said.append(f"missing {', '.join(missing)}")
    if altered:
        said.append(f"altered {', '.join(dict.fromkeys(altered))}")
    if extra:
        said.append(f"not acknowledged {', '.join(extra)}")
    if reordered:
        said.append(f"out of order ({', '.join(got_ids)})")
    if not said and len(got_ids) != len(wanted):
        said.append(f"{len(got_ids)} messages for {len(wanted)}")
    return "; ".join(said) or None


@when(parsers.parse('the store damages one stored message of store thread "{name}"'))
def _damage(store: RecordingStore, store_scene: StoreScene, name: str) -> None:
    if not store.can_damage:
        unsupported(
            "the store has no damage hook (damage(thread_id)), so the kit cannot make a "
            "stored message unreadable"
        )
    must_succeed("damage", lambda: store.damage(store_scene.thread(name)))


def _judge_read(
    request: pytest.FixtureRequest,
    store: RecordingStore,
    scene: StoreScene,
    name: str,
    limit: int | None,
    last: bool = False,
) -> None:
    """Judge one read after the damage; ``last`` marks the scenario's last read,
    which ends it ``inconclusive`` when no read of the scenario was loud."""
    acknowledged = scene.appended.get(name, [])
    expected = acknowledged if limit is None else acknowledged[len(acknowledged) - limit :]
    what = "a read" if limit is None else f"a read of the newest {limit}"
    try:
        observed = store.messages(scene.thread(name), limit)
    except AdapterContractError:
        raise
    except contract.StoreError as exc:
        loud = request.node.stash.setdefault(_LOUD, [])
        loud.append(f"{what} raised {type(exc).__name__}: {str(exc)[:200]}")
        how_passed(request, "after one stored message was damaged, " + "; ".join(loud))
        return
    except Exception as exc:
        raise AdapterContractError(
            "messages", f"raised {type(exc).__name__}: {exc} (a read that fails raises StoreError)"
        ) from exc
    difference = silent_difference(expected, observed)
    if difference is not None:
        raise Mismatch(
            f"{what} of thread {name} after one stored message was damaged",
            "StoreError, or the acknowledged messages unaltered and in order:\n"
            + transcript_table(expected),
            f"no error; {difference}:\n" + transcript_table(observed),
        )
    if last and not request.node.stash.get(_LOUD, []):
        inconclusive(
            "every read after the damage hook returned the acknowledged messages whole: "
            "the kit cannot tell a store that recovered the damaged row from a damage "
            "hook that left the storage unchanged"
        )


@then(
    parsers.parse(
        'a read of store thread "{name}" raises StoreError or returns every acknowledged '
        "message unaltered and in order"
    )
)
@decides("ST-037")
def _whole_read(
    request: pytest.FixtureRequest, store: RecordingStore, store_scene: StoreScene, name: str
) -> None:
    _judge_read(request, store, store_scene, name, None)


@then(
    parsers.parse(
        'a read of the newest {count:d} messages of store thread "{name}" raises StoreError '
        "or returns them unaltered and in order"
    )
)
@decides("ST-037")
def _window_read(
    request: pytest.FixtureRequest,
    store: RecordingStore,
    store_scene: StoreScene,
    name: str,
    count: int,
) -> None:
    _judge_read(request, store, store_scene, name, count, last=True)
