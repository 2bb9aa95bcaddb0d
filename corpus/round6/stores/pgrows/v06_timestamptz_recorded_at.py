"""v06: an error record's ``recorded_at`` is kept in a ``timestamptz`` column.

The bug: ``error_records.recorded_at`` is ``timestamptz`` instead of text.
PostgreSQL parses the caller's string and keeps the instant only; the read
hands back the ``datetime`` psycopg builds in the session's time zone,
formatted with ``isoformat()``.

Situation that shows it: an error record whose ``recorded_at`` is not
already in the exact form ``YYYY-MM-DDTHH:MM:SS+00:00``: an offset other
than UTC (``2025-03-01T09:30:00+01:00`` comes back as
``2025-03-01T08:30:00+00:00``), a ``Z`` suffix, fractional seconds with
trailing zeros, or a date alone. A record with no time stamp, or one
already written the way the server prints it, comes back unchanged.

Why a team would ship it: "a time is a timestamptz" is the first rule of
every PostgreSQL style guide, the dashboards wanted to sort failures by
time, and the runtime the team tested with stamps records in UTC with
``+00:00``.

Rules broken: ST-022.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from corpus.round6.stores.pgrows.base import DDL, DEFAULT_URL, PgRowsStore
from memconform.values import ErrorRecord


class TimestamptzErrorStore(PgRowsStore):
    # --- the bug ---
    ddl = DDL.replace("    recorded_at text\n", "    recorded_at timestamptz\n")

    def decode_error(self, row: tuple[Any, ...]) -> ErrorRecord:
        run_id, error, messages, scope, recorded_at = row
        if isinstance(recorded_at, dt.datetime):
            recorded_at = recorded_at.isoformat()
        return super().decode_error((run_id, error, messages, scope, recorded_at))


def make(run: str | None = None, url: str = DEFAULT_URL) -> TimestamptzErrorStore:
    if not run:
        raise ValueError("pgrows needs ?run=NAME")
    return TimestamptzErrorStore(run, url)
