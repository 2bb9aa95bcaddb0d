"""Steps of the ``persisted-state`` profile on the export of persisted state
(``features/persisted-state/export.feature``).
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Sequence
from typing import Any

from pytest_bdd import parsers, then, when

from memconform.steps.common import Mismatch, decides, expect_equal
from memconform.steps.persisted_state_world import JobWorld, name_list, table_rows


@when("the persisted state is exported")
def state_exported(persisted_state: JobWorld) -> None:
    jobs = list(persisted_state.jobs)
    persisted_state.run([{"do": "export", "jobs": jobs}])


@when("the same facts are remembered in reverse order in a fresh knowledge base and exported")
def remembered_in_reverse(persisted_state: JobWorld) -> None:
    actions: list[dict[str, Any]] = [
        {"do": "remember", "fact": request} for request in reversed(persisted_state.remembered)
    ]
    actions.append({"do": "export", "jobs": []})
    persisted_state.run(actions, namespace=persisted_state.namespace + "-reverse")



@then("the two exports are identical")
@decides("PS-023")
def exports_identical(persisted_state: JobWorld) -> None:
    if len(persisted_state.exports) < 2:
        raise Mismatch("two exports", "two", str(len(persisted_state.exports)))
    expect_equal("the second export", persisted_state.exports[-2], persisted_state.exports[-1])


@then(parsers.parse('the export lists the facts in the order "{subjects}"'))
@decides("PS-023")
def export_order(persisted_state: JobWorld, subjects: str) -> None:
    headers = [
        json.loads(line[len("[fact "):-1]) for line in persisted_state.exports[-1].splitlines()
        if line.startswith("[fact ")
    ]
    expect_equal("the order of fact blocks in the export", name_list(subjects), headers)


def _blocks(text: str) -> dict[int, str]:
    """Line number -> the header of the block the line belongs to."""
    owner: dict[int, str] = {}
    current = ""
    for n, line in enumerate(text.splitlines()):
        if line.startswith("["):
            current = line
        owner[n] = current
    return owner


@then(parsers.parse('the two exports differ only in the lines of "{subject}"'))
@decides("PS-024")
def exports_differ_in(persisted_state: JobWorld, subject: str) -> None:
    before, after = persisted_state.exports[-2], persisted_state.exports[-1]
    header = f"[fact {json.dumps(subject, ensure_ascii=False)}]"
    owners_before, owners_after = _blocks(before), _blocks(after)
    outside: list[str] = []
    changed = False
    matcher = difflib.SequenceMatcher(a=before.splitlines(), b=after.splitlines(), autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        changed = True
        lines = [owners_before[i] for i in range(i1, i2)] + [owners_after[j] for j in range(j1, j2)]
        outside += [owner for owner in lines if owner != header]
    if not changed:
        raise Mismatch("the diff between the exports", f"changes in {header}", "no change")
    expect_equal(f"changed lines outside {header}", [], outside)


@then("the export contains the lines:")
@decides("PS-025")
def export_lines(persisted_state: JobWorld, datatable: Sequence[Sequence[str]]) -> None:
    lines = set(persisted_state.exports[-1].splitlines())
    missing = [r["line"] for r in table_rows(datatable) if r["line"] not in lines]
    expect_equal("lines missing from the export", [], missing)
