"""The progress line of ``memconform run`` on a terminal, read from the outcomes
file the suite's pytest writes as scenarios end."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from memconform.outcome_log import read_collected

__all__ = ["PROGRESS_EVERY", "Progress"]

PROGRESS_EVERY = 0.25
"""Seconds between two updates of the progress line on a terminal."""


class Progress:
    """The progress line of a run on a terminal: scenarios ended of those the
    session runs, how many of them failed, and the latest one, rewritten in
    place (``\\r``) as the outcomes file grows; :meth:`close` shows the last
    state and clears the line before the summary is printed."""

    def __init__(self, outcomes: Path, stream: Any) -> None:
        self._path = outcomes
        self._stream = stream
        self._offset = 0
        self._pending = ""
        self._done: set[str] = set()
        self._failing: set[str] = set()
        self._total: int | None = None
        self._latest = ""
        self._shown = ""

    def _read(self) -> None:
        try:
            with self._path.open(encoding="utf-8") as file:
                file.seek(self._offset)
                chunk = file.read()
                self._offset = file.tell()
        except OSError:
            return
        lines = (self._pending + chunk).split("\n")
        self._pending = lines.pop()  # a line not yet written whole
        for line in lines:
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            if not isinstance(record, dict) or "session" in record:
                continue
            nodeid = str(record.get("nodeid", ""))
            self._done.add(nodeid)
            self._latest = str(record.get("scenario") or nodeid)
            if record.get("outcome") in ("failed", "error", "crashed"):
                self._failing.add(nodeid)

    def line(self) -> str:
        """``memconform: [ 37/148] 2 failing · <the latest scenario>``."""
        total = "?" if self._total is None else str(self._total)
        count = f"[{len(self._done):>{len(total)}}/{total}]"
        failing = f" {len(self._failing)} failing" if self._failing else ""
        text = f"memconform: {count}{failing}"
        if self._latest:
            text += f" · {self._latest}"
        width = max(shutil.get_terminal_size((80, 24)).columns - 1, 20)
        return text if len(text) <= width else text[: width - 1] + "…"

    def show(self) -> None:
        self._read()
        if self._total is None:  # written once collection is over
            due = read_collected(self._path)
            if due is not None:
                self._total = len({n for ids in due.values() for n in ids})
        text = self.line()
        if text != self._shown:
            self._stream.write("\r\x1b[K" + text)
            self._stream.flush()
            self._shown = text

    def close(self) -> None:
        self.show()
        self._stream.write("\r\x1b[K")
        self._stream.flush()
