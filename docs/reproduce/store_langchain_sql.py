"""LangChain SQLChatMessageHistory: the compliance page's findings, reproduced
with the library alone (``pip install langchain-community sqlalchemy``).

Run ``python store_langchain_sql.py``: each check prints ``<rule> reproduced: ...``
and the script exits 1 if any behaviour is no longer what the page says.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from langchain_community.chat_message_histories import SQLChatMessageHistory
from langchain_core.messages import HumanMessage


def _history(url: str, session: str) -> SQLChatMessageHistory:
    return SQLChatMessageHistory(session_id=session, connection=url)


def _names(history: SQLChatMessageHistory) -> list[str]:
    return [str(m.content) for m in history.messages]


def checks(url: str) -> list[tuple[str, bool, str]]:
    twice = _history(url, "twice")
    twice.add_messages([HumanMessage(content="a", id="a")])
    twice.add_messages([HumanMessage(content="a", id="a")])
    inner = _history(url, "inner")
    inner.add_messages([HumanMessage(content="b", id="b"), HumanMessage(content="b", id="b")])
    return [
        ("ST-010", _names(twice) == ["a", "a"], "a message whose id was stored is stored again"),
        ("ST-011", _names(inner) == ["b", "b"],
         "an id repeated in one add_messages() call is stored twice"),
    ]


def main() -> int:
    with tempfile.TemporaryDirectory() as folder:
        results = checks(f"sqlite:///{Path(folder) / 'store.db'}")
    for rule, held, what in results:
        print(f"{rule} {'reproduced' if held else 'NOT reproduced'}: {what}")
    return 0 if all(held for _, held, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main())
