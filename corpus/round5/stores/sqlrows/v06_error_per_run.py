"""v06: one error record per run: ``UNIQUE (thread_id, run_id)`` + ``INSERT OR REPLACE``.

Bug: the ``error_records`` table has ``UNIQUE (thread_id, run_id)`` and
``record_error`` uses ``INSERT OR REPLACE``. A second record for the same run
of a thread (a run that failed, was retried under the same run id and failed
again; a runtime recording a model error and then the store refusal of the
same run) deletes the first row and inserts the new one at the end: the
first record is lost and the order changes. Records of distinct runs are kept
exactly.

Why a team ships it: the runtime retried ``record_error`` after timeouts and
produced duplicates; making the record idempotent per run with ``OR REPLACE``
removed them, and every test used a fresh run id per failure.

Rules broken: ST-022 (a thread's error records come back exactly as recorded,
in the order recorded), SP-018 by extension (the record of the failed work
is gone).
"""

from __future__ import annotations

from corpus.round5.stores.sqlrows.base import (
    ERRORS_TABLE,
    SqlRowsStore,
    encodable,
    to_json_text,
)
from memconform.contract import UnsupportedValueError
from memconform.values import ErrorRecord

__all__ = ["ErrorPerRunStore", "make"]

# --- the bug (1/2): one row per (thread, run) ---------------------------------------
_ERRORS_PER_RUN = ERRORS_TABLE.replace(
    "body      TEXT NOT NULL\n", "body      TEXT NOT NULL,\n    UNIQUE (thread_id, run_id)\n"
)
assert "UNIQUE" in _ERRORS_PER_RUN


class ErrorPerRunStore(SqlRowsStore):
    schema = tuple(_ERRORS_PER_RUN if s == ERRORS_TABLE else s for s in SqlRowsStore.schema)

    def record_error(self, thread_id: str, record: ErrorRecord) -> None:
        if not encodable(thread_id, record.run_id):
            raise UnsupportedValueError("error record names hold a lone surrogate")
        body = to_json_text(record.to_json())
        with self._tx() as cur:
            # --- the bug (2/2): a second record of the run replaces the first ------
            cur.execute(
                "INSERT OR REPLACE INTO error_records (thread_id, run_id, body) VALUES (?, ?, ?)",
                (thread_id, record.run_id, body),
            )


def make(path: str | None = None, timeout: str = "30") -> ErrorPerRunStore:
    if not path:
        raise ValueError("sqlrows needs ?path=FILE")
    return ErrorPerRunStore(path, timeout=float(timeout))
