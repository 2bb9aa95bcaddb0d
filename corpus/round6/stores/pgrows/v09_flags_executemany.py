"""v09: commit flags are flipped with ``executemany`` and checked afterwards.

The bug: ``set_committed`` sends one ``UPDATE`` per id with
``executemany`` on an autocommit connection and raises ``KeyError`` when
the summed ``rowcount`` is smaller than the number of ids. By then every
update has run and committed: no row matching an id is not an error to the
server.

Situation that shows it: a ``set_committed`` call naming ids the thread
holds together with one it does not hold (a typo, an id of another thread,
a message that failed to append). The call raises ``KeyError`` as it should,
but the known messages' flags have changed anyway. A call naming only
unknown ids changes nothing, and one naming only known ids is right.

Why a team would ship it: psycopg 3 pipelines ``executemany`` into one
round trip, which made committing a long round cheap; ``rowcount`` is the
sum over the statements, so the check "found every id" looked complete,
and autocommit is the setting the rest of the pool uses.

Rules broken: ST-020.
"""

from __future__ import annotations

from collections.abc import Sequence

import psycopg

from corpus.round6.stores.pgrows.base import DEFAULT_URL, PgRowsStore, storable
from memconform.contract import StoreError


class FlagsExecutemanyStore(PgRowsStore):
    def set_committed(self, thread_id: str, message_ids: Sequence[str], committed: bool) -> None:
        wanted = list(dict.fromkeys(message_ids))
        if not wanted:
            return
        if not storable(thread_id) or not all(storable(i) for i in wanted):
            raise KeyError(f"thread {thread_id!r} does not hold every id of {wanted}")
        conn = self._pool.get()
        try:
            with conn.cursor() as cur:
                # --- the bug ---
                cur.executemany(
                    self.q(
                        "UPDATE {s}.messages SET committed = %s "
                        "WHERE thread_id = %s AND msg_id = %s"
                    ),
                    [(bool(committed), thread_id, i) for i in wanted],
                )
                changed = cur.rowcount
        except psycopg.Error as exc:
            raise StoreError(f"set_committed failed on PostgreSQL: {exc}") from exc
        finally:
            self._pool.put(conn)
        if changed < len(wanted):
            raise KeyError(f"thread {thread_id!r} does not hold every id of {wanted}")


def make(run: str | None = None, url: str = DEFAULT_URL) -> FlagsExecutemanyStore:
    if not run:
        raise ValueError("pgrows needs ?run=NAME")
    return FlagsExecutemanyStore(run, url)
