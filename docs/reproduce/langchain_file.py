"""LangChain FileChatMessageHistory: the compliance page's findings, reproduced
with the library alone (``pip install langchain-community``).

Run ``python langchain_file.py``: each check prints ``<rule> reproduced: ...``
and the script exits 1 if any behaviour is no longer what the page says.
"""

from __future__ import annotations

import multiprocessing
import sys
import tempfile
from pathlib import Path

from langchain_community.chat_message_histories import FileChatMessageHistory
from langchain_core.messages import HumanMessage

PER_WRITER = 200


def _writer(path: str, name: str, barrier: object) -> None:
    history = FileChatMessageHistory(path)
    barrier.wait()  # type: ignore[attr-defined]
    acked = Path(f"{path}.{name}.acked")
    for i in range(PER_WRITER):
        history.add_messages([HumanMessage(content=f"{name}{i}", id=f"{name}{i}")])
        acked.write_text(str(i + 1))  # add_messages() returned: acknowledged


def two_writers(folder: str) -> tuple[bool, str]:
    Path(folder).mkdir()
    path = str(Path(folder) / "shared.json")
    FileChatMessageHistory(path)  # creates the empty file
    barrier = multiprocessing.Barrier(2)
    writers = [multiprocessing.Process(target=_writer, args=(path, n, barrier)) for n in "ab"]
    for w in writers:
        w.start()
    for w in writers:
        w.join(300)
    crashed = [n for n, w in zip("ab", writers, strict=True) if w.exitcode != 0]
    names = [str(m.content) for m in FileChatMessageHistory(path).messages]
    acked = {n: _acked(Path(f"{path}.{n}.acked")) for n in "ab"}
    lost = sum(acked[n] - sum(x.startswith(n) for x in names) for n in "ab")
    return lost > 0 or bool(crashed), (
        f"two processes appended up to {PER_WRITER} messages each: {sum(acked.values())} "
        f"acknowledged, {len(names)} stored, {lost} acknowledged messages gone without an "
        f"error; {len(crashed)} writer(s) crashed reading a half-written file"
    )


def _acked(path: Path) -> int:
    return int(path.read_text()) if path.is_file() else 0


def checks(folder: str) -> list[tuple[str, bool, str]]:
    history = FileChatMessageHistory(str(Path(folder) / "ids.json"))
    history.add_messages([HumanMessage(content="a", id="a")])
    history.add_messages([HumanMessage(content="a", id="a")])
    history.add_messages([HumanMessage(content="b", id="b"), HumanMessage(content="b", id="b")])
    ids = [m.id for m in history.messages]
    for attempt in range(3):  # the race is the operating system's: try it a few times
        held, what = two_writers(str(Path(folder) / f"race{attempt}"))
        if held:
            break
    return [
        ("ST-010", ids[:2] == ["a", "a"], "a stored id was stored again"),
        ("ST-011", ids[2:] == ["b", "b"], "an id repeated in one call was stored twice"),
        ("ST-033", held, what),
    ]


def main() -> int:
    with tempfile.TemporaryDirectory() as folder:
        results = checks(folder)
    for rule, held, what in results:
        print(f"{rule} {'reproduced' if held else 'NOT reproduced'}: {what}")
    return 0 if all(held for _, held, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main())
