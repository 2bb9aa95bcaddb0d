"""v02: facts are listed in ICU order, not code-point order.

The bug: the ``facts`` table declares ``subject text COLLATE "und-x-icu"``
and the listing orders by ``subject`` without ``COLLATE "C"``, so
``facts(scope)`` comes back in the Unicode collation algorithm's order
(case and punctuation mostly ignored at the first level) instead of being
ordered by subject as strings compare.

Situation that shows it: a scope whose subjects mix letter case or start
with punctuation or digits next to letters: ``"B"``, ``"a"`` and ``"_x"``
list as ``_x, a, B`` instead of ``B, _x, a``. All-lowercase ASCII subjects
list the same either way.

Why a team would ship it: the facts screen of the product showed
``Zebra`` before ``apple``; a reviewer asked for "natural" sorting and ICU
collations are PostgreSQL's documented answer. The database's own
collation is ``C.UTF-8``, so the team's tests, which compared with a
lower-case fixture, kept passing. Equality stays exact (ICU collations are
deterministic), so lookups are unaffected.

Rules broken: ST-028.
"""

from __future__ import annotations

from corpus.round6.stores.pgrows.base import DDL, DEFAULT_URL, PgRowsStore


class IcuSubjectStore(PgRowsStore):
    # --- the bug ---
    ddl = DDL.replace(
        "    subject text NOT NULL,\n    statement",
        '    subject text COLLATE "und-x-icu" NOT NULL,\n    statement',
    )

    def facts_order(self) -> str:
        return "subject"


def make(run: str | None = None, url: str = DEFAULT_URL) -> IcuSubjectStore:
    if not run:
        raise ValueError("pgrows needs ?run=NAME")
    return IcuSubjectStore(run, url)
