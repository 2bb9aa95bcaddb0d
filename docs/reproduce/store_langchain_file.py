"""LangChain FileChatMessageHistory: the compliance page's findings, reproduced
with the library alone (``pip install langchain-community``).

Run ``python store_langchain_file.py``: each check prints ``<rule> reproduced: ...``
and the script exits 1 if any behaviour is no longer what the page says.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from langchain_community.chat_message_histories import FileChatMessageHistory
from langchain_core.messages import HumanMessage

PER_WRITER = 200
READS = 2000


def _message(name: str) -> HumanMessage:
    return HumanMessage(content=name, id=name)


def _ids(path: str) -> list[str]:
    return [str(m.id) for m in FileChatMessageHistory(path).messages]


def growth(folder: str) -> tuple[bool, str]:
    """ST-001: add_messages() rewrites the whole file once per message, so what
    one batch writes grows with the square of its size (counted in the bytes
    handed to Path.write_text, which the library writes the file with)."""
    written = [0]
    write_text = Path.write_text

    def counted(self: Path, data: str, *args: object, **kwargs: object) -> int:
        written[0] += len(data)
        return write_text(self, data, *args, **kwargs)  # type: ignore[arg-type]

    sizes, took = [], []
    Path.write_text = counted  # type: ignore[method-assign]
    try:
        for n in (100, 200):
            history = FileChatMessageHistory(str(Path(folder) / f"big{n}.json"))
            written[0] = 0
            start = time.perf_counter()
            history.add_messages([_message(f"m{i:05}") for i in range(n)])
            took.append(time.perf_counter() - start)
            sizes.append(written[0])
    finally:
        Path.write_text = write_text  # type: ignore[method-assign]
    ratio = sizes[1] / sizes[0]
    return ratio > 3.5, (
        f"one batch of 100 messages wrote {sizes[0]:,} bytes ({took[0]:.1f} s here), of 200 "
        f"{sizes[1]:,} bytes ({took[1]:.1f} s): {ratio:.1f} times as much for twice the "
        "batch, one rewrite of the whole file per message, so a batch of 10,000 writes "
        "about 2,500 times what one of 200 does"
    )


def failed_batch(folder: str) -> tuple[bool, str]:
    """ST-016: a batch whose third message cannot be written keeps the first two."""
    path = str(Path(folder) / "failed.json")
    bad = HumanMessage(content="c", id="c", additional_kwargs={"not json": object()})
    try:
        FileChatMessageHistory(path).add_messages([_message("a"), _message("b"), bad])
        raised = "nothing"
    except TypeError as exc:
        raised = type(exc).__name__
    kept = _ids(path)
    return raised != "nothing" and kept == ["a", "b"], (
        f"a batch of three whose third message cannot be serialised raised {raised} "
        f"and left {kept} stored"
    )


def _killed_in_batch(path: str) -> None:
    def batch() -> Iterator[HumanMessage]:
        yield _message("k1")
        yield _message("k2")
        os.kill(os.getpid(), signal.SIGKILL)  # after two of the batch's three writes
        yield _message("k3")

    FileChatMessageHistory(path).add_messages(batch())  # type: ignore[arg-type]


def killed_batch(folder: str) -> tuple[bool, str]:
    """ST-034: a writer killed in the middle of a batch leaves part of it."""
    path = str(Path(folder) / "killed.json")
    child = multiprocessing.Process(target=_killed_in_batch, args=(path,))
    child.start()
    child.join(300)
    kept = _ids(path)
    return child.exitcode == -signal.SIGKILL and kept == ["k1", "k2"], (
        f"a writer killed after two messages of a three-message batch left {kept}"
    )


def _rewriter(path: str, stop: object) -> None:
    history = FileChatMessageHistory(path)
    n = 0
    while not stop.is_set():  # type: ignore[attr-defined]
        history.add_messages([_message(f"w{n}")])
        n += 1


def reads_while_writing(folder: str) -> tuple[bool, str]:
    """ST-036: a reader in another process finds the file emptied or half
    rewritten (write_text truncates it first) and the library raises
    JSONDecodeError; and a reader between two messages of a batch sees part of it."""
    path = str(Path(folder) / "read.json")
    FileChatMessageHistory(path).add_messages([_message(f"s{i}") for i in range(50)])
    stop = multiprocessing.Event()
    writer = multiprocessing.Process(target=_rewriter, args=(path, stop))
    writer.start()
    unreadable = 0
    for _ in range(READS):
        try:
            FileChatMessageHistory(path).messages  # noqa: B018
        except json.JSONDecodeError:
            unreadable += 1
    stop.set()
    writer.join(300)

    part = str(Path(folder) / "part.json")
    seen: list[str] = []

    def batch() -> Iterator[HumanMessage]:
        yield _message("p1")
        yield _message("p2")
        seen.extend(_ids(part))  # another reader, between the batch's 2nd and 3rd write
        yield _message("p3")

    FileChatMessageHistory(part).add_messages(batch())  # type: ignore[arg-type]
    return unreadable > 0 and seen == ["p1", "p2"], (
        f"{unreadable} of {READS} reads raised JSONDecodeError while another process "
        f"appended; a read in the middle of a three-message batch showed {seen}"
    )


def _writer(path: str, name: str, barrier: object) -> None:
    history = FileChatMessageHistory(path)
    barrier.wait()  # type: ignore[attr-defined]
    acked = Path(f"{path}.{name}.acked")
    try:
        for i in range(PER_WRITER):
            history.add_messages([HumanMessage(content=f"{name}{i}", id=f"{name}{i}")])
            acked.write_text(str(i + 1))  # add_messages() returned: acknowledged
    except json.JSONDecodeError:
        # add_messages() reads the whole file first, and read it while the other
        # writer was rewriting it: the crash is counted, not printed
        sys.exit(1)


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
    acked = {n: _acked(Path(f"{path}.{n}.acked")) for n in "ab"}
    try:
        names = [str(m.content) for m in FileChatMessageHistory(path).messages]
    except json.JSONDecodeError:  # the two writers left a file no reader can load
        return True, (
            f"two processes appended up to {PER_WRITER} messages each: "
            f"{sum(acked.values())} acknowledged, and the file they left is not JSON, "
            "so every message in it is gone"
        )
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
        ("ST-001", *growth(folder)),
        ("ST-016", *failed_batch(folder)),
        ("ST-034", *killed_batch(folder)),
        ("ST-036", *reads_while_writing(folder)),
    ]


def main() -> int:
    with tempfile.TemporaryDirectory() as folder:
        results = checks(folder)
    for rule, held, what in results:
        print(f"{rule} {'reproduced' if held else 'NOT reproduced'}: {what}")
    return 0 if all(held for _, held, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main())
