"""Then steps of the ``turns`` profile on state blocks and side effects: what
the model was shown, what the store holds, the ledger
(``features/turns/state_blocks.feature``).
"""

from __future__ import annotations

from collections.abc import Mapping

from pytest_bdd import then

from memconform.steps.common import Mismatch, decides, expect_equal, require_capability
from memconform.steps.turns_world import TurnsRun, json_value, name_list, phrase


@then(phrase('the first model call of "{turn_id:Text}" saw the state blocks "{blocks:Text}"'))
@decides("TU-024")
def saw_blocks(turns_run: TurnsRun, turn_id: str, blocks: str) -> None:
    """The state part names exactly these blocks (``nothing`` for none)."""
    seen = [str(s.get("block")) for s in turns_run.first_call(turn_id).get("state", [])]
    expect_equal(f"the state blocks the model saw for {turn_id}",
                 [] if blocks == "nothing" else name_list(blocks), seen)


# -- Then: state and side effects ------------------------------------------------------------


@then(phrase('the turns block "{block:Text}" holds {value} at version {version:d}'))
@decides("TU-008", "TU-009")
def block_holds(turns_run: TurnsRun, block: str, value: str, version: int) -> None:
    """The stored state entry of the block in the thread's scope."""
    turns_run.observed()
    require_capability(turns_run.store.capabilities, "state")
    entry = turns_run.store.read_state(turns_run.thread, block)
    observed = None if entry is None else (entry.value, entry.version)
    expect_equal(f"the state block {block}", (json_value(value), version), observed)


@then(phrase('the turns block "{block:Text}" was never written'))
@decides("TU-008")
def block_unwritten(turns_run: TurnsRun, block: str) -> None:
    """No state entry exists for the block."""
    turns_run.observed()
    require_capability(turns_run.store.capabilities, "state")
    entry = turns_run.store.read_state(turns_run.thread, block)
    expect_equal(f"the state block {block}", None, None if entry is None else entry.to_json())


@then(phrase('the turns ledger holds the effect "{effect:Text}"'))
@decides("TU-009")
def ledger_effect(turns_run: TurnsRun, effect: str) -> None:
    """The side effect was not rolled back."""
    ledger = turns_run.observed().get("ledger") or []
    effects = [e.get("effect") for e in ledger if isinstance(e, Mapping)]
    if effect not in effects:
        raise Mismatch("the side effect on the ledger", effect, repr(effects))
