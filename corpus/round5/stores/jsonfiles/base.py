"""A memory store on plain files in one folder (``?path=FOLDER``, created when missing).

Layout (every name derived from an id by :func:`file_name`)::

    FOLDER/threads/<name>.jsonl   one per thread: a header line, then one message per line
    FOLDER/errors/<name>.jsonl    one append-only log of error records per thread
    FOLDER/records.jsonl          one append-only log of every turn record
    FOLDER/state/<name>.json      one JSON document of working state per scope
    FOLDER/facts/<name>.json      one JSON document of facts per scope
    <file>.lock                   beside every file: the fcntl.flock taken by its writers

Thread files, state and facts are rewritten whole: written to a temporary file in
the same folder, fsynced, moved over the old one with ``os.replace`` and the
folder fsynced, so a reader (which takes no lock) sees the old file or the new
one, never a mix, and a writer killed half-way leaves the old file as it was.
Error and turn records are appended to a log, one line per record, with a
single ``write`` under the lock and an fsync; a line without its newline is a
write that never finished (never acknowledged) and is ignored by readers and
cut off by the next writer.

JSON is written with ``ensure_ascii`` (lone surrogates and every other code
point survive as escapes) and ``allow_nan=False`` (a non-finite float is not
JSON: it is refused with ``UnsupportedValueError``). A line or document that
does not decode raises ``StoreError``; nothing is ever skipped.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

from memconform.contract import (
    Capability,
    ConflictError,
    DuplicateIdError,
    StoreError,
    UnsupportedValueError,
    check_limit,
    damage_index,
)
from memconform.harness.faults import batch_row_pause
from memconform.values import ErrorRecord, Fact, JSONValue, Message, StateEntry, TurnRecord

__all__ = ["JsonFilesStore", "file_name", "make"]

_MAX_NAME = 120
"""Longest percent-encoded name kept whole; longer ones are cut and hashed."""


def _id_bytes(ident: str) -> bytes:
    # surrogatepass: an id holding a lone surrogate still maps to its own bytes
    return ident.encode("utf-8", "surrogatepass")


def file_name(ident: str) -> str:
    """The file name (without suffix) of a thread id or scope: the id percent-encoded
    (every byte but ``A-Z a-z 0-9 _ . - ~``), so names stay readable and distinct on
    a case-sensitive file system. A name longer than ``_MAX_NAME`` keeps its first
    80 characters and gets the SHA-256 of the whole id, so it stays unique."""
    quoted = quote(ident, safe="", errors="surrogatepass")
    if len(quoted) > _MAX_NAME:
        quoted = quoted[:80] + "~" + hashlib.sha256(_id_bytes(ident)).hexdigest()
    return "n-" + quoted


def _dumps(value: JSONValue, what: str) -> str:
    """Compact JSON text, ASCII only; a non-finite float is refused."""
    try:
        return json.dumps(value, ensure_ascii=True, allow_nan=False, separators=(",", ":"))
    except ValueError as exc:
        raise UnsupportedValueError(f"{what}: {exc}; it is not JSON and cannot be kept") from None


def _loads(text: str, what: str) -> Any:
    try:
        return json.loads(text)
    except ValueError as exc:
        raise StoreError(f"{what} cannot be decoded: {exc}") from None


def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class JsonFilesStore:
    """A store of JSON files in one folder; see the Store contract for each method.

    Safe for several threads and several processes on the same folder: every
    read-modify-write holds an exclusive ``flock`` on the file's lock file, and
    every reader sees a whole file (atomic replace) or whole log lines.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.root = Path(path)
        for sub in ("threads", "errors", "state", "facts"):
            (self.root / sub).mkdir(parents=True, exist_ok=True)

    @property
    def capabilities(self) -> frozenset[str]:
        """Every capability of :class:`memconform.contract.Capability`."""
        return frozenset(c.value for c in Capability)

    # -- names ------------------------------------------------------------------------

    def _thread_path(self, thread_id: str) -> Path:
        return self.root / "threads" / (file_name(thread_id) + ".jsonl")

    def _errors_path(self, thread_id: str) -> Path:
        return self.root / "errors" / (file_name(thread_id) + ".jsonl")

    def _records_path(self) -> Path:
        return self.root / "records.jsonl"

    def _state_path(self, scope: str) -> Path:
        return self.root / "state" / (file_name(scope) + ".json")

    def _facts_path(self, scope: str) -> Path:
        return self.root / "facts" / (file_name(scope) + ".json")

    # -- file plumbing ----------------------------------------------------------------

    @contextlib.contextmanager
    def _locked(self, path: Path) -> Iterator[None]:
        """Hold the exclusive flock of ``path``'s lock file (across processes and
        across threads: each call opens its own descriptor)."""
        fd = os.open(str(path) + ".lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # closing the descriptor releases the lock

    def _write_text(self, path: Path, text: str) -> None:
        """Replace ``path`` atomically with ``text`` (temp file, fsync, rename, fsync dir)."""
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex}.tmp")
        try:
            with open(tmp, "w", encoding="utf-8", newline="\n") as handle:
                handle.write(text)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                tmp.unlink()
            raise
        _fsync_dir(path.parent)

    def _read_text(self, path: Path) -> str | None:
        """The file's text, or ``None`` when it does not exist."""
        try:
            with open(path, encoding="utf-8", newline="\n") as handle:
                return handle.read()
        except FileNotFoundError:
            return None
        except UnicodeDecodeError as exc:
            raise StoreError(f"{path.name} is not UTF-8 text: {exc}") from None

    def _append_line(self, path: Path, line: str) -> None:
        """Append one line to a log under its lock, cutting off a torn last line first."""
        data = (line + "\n").encode("utf-8")
        with self._locked(path):
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
            try:
                size = os.fstat(fd).st_size
                if size:
                    os.lseek(fd, size - 1, os.SEEK_SET)
                    if os.read(fd, 1) != b"\n":  # an unfinished write of a dead writer
                        with open(path, "rb") as handle:
                            kept = handle.read().rfind(b"\n") + 1
                        os.ftruncate(fd, kept)
                os.write(fd, data)
                os.fsync(fd)
            finally:
                os.close(fd)

    def _read_log(self, path: Path) -> list[Any]:
        """Every complete line of a log, decoded; a torn last line is ignored."""
        text = self._read_text(path)
        if not text:
            return []
        lines = text.split("\n")
        lines.pop()  # "" after the last newline, or a line whose write never finished
        return [_loads(line, f"line {n + 1} of {path.name}") for n, line in enumerate(lines)]

    # -- thread files -----------------------------------------------------------------

    def _thread_lines(self, path: Path) -> list[str]:
        """The message lines of a thread file (header dropped); ``[]`` when absent."""
        text = self._read_text(path)
        if text is None:
            return []
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        return lines[1:]

    def _write_thread(self, path: Path, thread_id: str, lines: Sequence[str]) -> None:
        header = _dumps({"thread": thread_id, "format": 1}, "thread id")
        self._write_text(path, "\n".join([header, *lines]) + "\n")

    def _decode(self, lines: Sequence[str], thread_id: str) -> list[Message]:
        """Every message of the thread; a line that does not decode raises StoreError."""
        out = []
        for n, line in enumerate(lines):
            try:
                out.append(Message.from_json(json.loads(line)))
            except (ValueError, TypeError) as exc:
                raise StoreError(
                    f"message {n + 1} of thread {thread_id!r} cannot be decoded: {exc}"
                ) from None
        return out

    @staticmethod
    def _ids(lines: Sequence[str], thread_id: str) -> list[str]:
        ids = []
        for n, line in enumerate(lines):
            data = _loads(line, f"message {n + 1} of thread {thread_id!r}")
            if not isinstance(data, dict) or not isinstance(data.get("id"), str):
                raise StoreError(f"message {n + 1} of thread {thread_id!r} has no id")
            ids.append(data["id"])
        return ids

    # -- core -------------------------------------------------------------------------

    def _encode_batch(self, batch: Sequence[Message]) -> tuple[list[str], list[str]]:
        """The batch's ids and JSON lines (a copy of it); repeated ids refused."""
        ids: list[str] = []
        lines: list[str] = []
        seen: set[str] = set()
        for message in batch:
            if message.id in seen:
                raise DuplicateIdError(f"message id {message.id!r} repeats within the batch")
            seen.add(message.id)
            ids.append(message.id)
            lines.append(_dumps(message.to_json(), f"message {message.id!r}"))
        return ids, lines

    def append(self, thread_id: str, batch: Sequence[Message]) -> None:
        """See :meth:`memconform.contract.Store.append`."""
        ids, new_lines = self._encode_batch(list(batch))
        if not new_lines:
            return
        path = self._thread_path(thread_id)
        with self._locked(path):
            old_lines = self._thread_lines(path)
            repeated = sorted(set(ids) & set(self._ids(old_lines, thread_id)))
            if repeated:
                raise DuplicateIdError(
                    f"message ids {repeated} are already in thread {thread_id!r}"
                )
            staged = list(old_lines)
            for line in new_lines:
                batch_row_pause()  # the kit's row point: a failure here writes nothing
                staged.append(line)
            self._write_thread(path, thread_id, staged)

    def messages(
        self, thread_id: str, limit: int | None = None, *, include_uncommitted: bool = False
    ) -> list[Message]:
        """See :meth:`memconform.contract.CommitFlagsStore.messages`."""
        check_limit(limit)
        found = self._decode(self._thread_lines(self._thread_path(thread_id)), thread_id)
        if not include_uncommitted:
            found = [m for m in found if m.committed]
        if limit is not None:
            found = found[-limit:] if limit else []
        return found

    def damage(self, thread_id: str) -> None:
        """The optional hook: the thread's middle message line is cut in half, as a
        half-finished hand edit or a damaged disk would leave it."""
        path = self._thread_path(thread_id)
        with self._locked(path):
            lines = self._thread_lines(path)
            index = damage_index(len(lines))
            lines[index] = lines[index][: len(lines[index]) // 2]
            self._write_thread(path, thread_id, lines)

    # -- commit-flags -----------------------------------------------------------------

    def set_committed(self, thread_id: str, message_ids: Sequence[str], committed: bool) -> None:
        """See :meth:`memconform.contract.CommitFlagsStore.set_committed`."""
        wanted = list(message_ids)
        path = self._thread_path(thread_id)
        with self._locked(path):
            lines = self._thread_lines(path)
            position = {mid: n for n, mid in enumerate(self._ids(lines, thread_id))}
            missing = [mid for mid in wanted if mid not in position]
            if missing:
                raise KeyError(f"unknown message ids in thread {thread_id!r}: {missing}")
            if not wanted:
                return
            for mid in wanted:
                n = position[mid]
                data = _loads(lines[n], f"message {mid!r}")
                data["committed"] = bool(committed)
                lines[n] = _dumps(data, f"message {mid!r}")
            self._write_thread(path, thread_id, lines)

    # -- errors -----------------------------------------------------------------------

    def record_error(self, thread_id: str, record: ErrorRecord) -> None:
        """See :meth:`memconform.contract.ErrorsStore.record_error`."""
        line = _dumps({"thread": thread_id, "record": record.to_json()}, "error record")
        self._append_line(self._errors_path(thread_id), line)

    def errors(self, thread_id: str) -> list[ErrorRecord]:
        """See :meth:`memconform.contract.ErrorsStore.errors`."""
        try:
            return [ErrorRecord.from_json(e["record"]) for e in self._read_log(
                self._errors_path(thread_id))]
        except (KeyError, TypeError, ValueError) as exc:
            raise StoreError(f"an error record of {thread_id!r} cannot be decoded: {exc}") from None

    # -- turn-records -----------------------------------------------------------------

    def append_record(self, record: TurnRecord) -> None:
        """See :meth:`memconform.contract.TurnRecordsStore.append_record`."""
        self._append_line(self._records_path(), _dumps(record.to_json(), "turn record"))

    def records(self, thread_id: str | None = None) -> list[TurnRecord]:
        """See :meth:`memconform.contract.TurnRecordsStore.records`."""
        try:
            found = [TurnRecord.from_json(r) for r in self._read_log(self._records_path())]
        except (TypeError, ValueError) as exc:
            raise StoreError(f"a turn record cannot be decoded: {exc}") from None
        return [r for r in found if thread_id is None or r.thread_id == thread_id]

    # -- state ------------------------------------------------------------------------

    def _state_entries(self, path: Path) -> dict[str, Any]:
        text = self._read_text(path)
        if text is None:
            return {}
        data = _loads(text, path.name)
        if not isinstance(data, dict) or not isinstance(data.get("entries"), dict):
            raise StoreError(f"{path.name} is not a state document")
        return data["entries"]

    def read_state(self, scope: str, key: str) -> StateEntry | None:
        """See :meth:`memconform.contract.StateStore.read_state`."""
        entry = self._state_entries(self._state_path(scope)).get(key)
        return None if entry is None else StateEntry(key, entry["value"], entry["version"])

    def write_state(
        self, scope: str, key: str, value: JSONValue, expected_version: int | None
    ) -> StateEntry:
        """See :meth:`memconform.contract.StateStore.write_state`."""
        encoded = _dumps(value, f"state {key!r}")
        path = self._state_path(scope)
        with self._locked(path):
            entries = self._state_entries(path)
            current = entries.get(key)
            version = None if current is None else int(current["version"])
            if version != expected_version:
                raise ConflictError(
                    f"state {scope!r}/{key!r}: expected version {expected_version}, "
                    f"stored version is {version}"
                )
            entries[key] = {"value": json.loads(encoded), "version": (version or 0) + 1}
            self._write_text(path, _dumps({"scope": scope, "entries": entries}, "state"))
        return StateEntry(key, json.loads(encoded), (version or 0) + 1)

    # -- knowledge --------------------------------------------------------------------

    def _facts(self, path: Path) -> dict[str, Any]:
        text = self._read_text(path)
        if text is None:
            return {}
        data = _loads(text, path.name)
        if not isinstance(data, dict) or not isinstance(data.get("facts"), dict):
            raise StoreError(f"{path.name} is not a facts document")
        return data["facts"]

    @staticmethod
    def _fact(data: Any) -> Fact:
        try:
            return Fact.from_json(data)
        except (TypeError, ValueError) as exc:
            raise StoreError(f"a stored fact cannot be decoded: {exc}") from None

    def _fact_json(self, fact: Fact) -> dict[str, Any]:
        return json.loads(_dumps(fact.to_json(), f"fact {fact.subject!r}"))

    def put_fact(self, scope: str, fact: Fact) -> None:
        """See :meth:`memconform.contract.KnowledgeStore.put_fact`. A statement
        holding a lone surrogate is not text and is refused."""
        try:
            fact.statement.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise UnsupportedValueError(
                f"fact {fact.subject!r}: the statement holds a lone surrogate at {exc.start}"
            ) from None
        data = self._fact_json(fact)
        path = self._facts_path(scope)
        with self._locked(path):
            facts = self._facts(path)
            facts[fact.subject] = data
            self._write_text(path, _dumps({"scope": scope, "facts": facts}, "facts"))

    def get_fact(self, scope: str, subject: str) -> Fact | None:
        """See :meth:`memconform.contract.KnowledgeStore.get_fact`."""
        data = self._facts(self._facts_path(scope)).get(subject)
        return None if data is None else self._fact(data)

    def facts(self, scope: str) -> list[Fact]:
        """See :meth:`memconform.contract.KnowledgeStore.facts`: ordered by subject
        (code point order, as Python compares strings)."""
        stored = self._facts(self._facts_path(scope))
        return [self._fact(stored[subject]) for subject in sorted(stored)]

    def forget(self, scope: str, subject: str) -> bool:
        """See :meth:`memconform.contract.KnowledgeStore.forget`."""
        path = self._facts_path(scope)
        with self._locked(path):
            facts = self._facts(path)
            if subject not in facts:
                return False
            del facts[subject]
            self._write_text(path, _dumps({"scope": scope, "facts": facts}, "facts"))
            return True


def make(**kwargs: str) -> JsonFilesStore:
    """``corpus.round5.stores.jsonfiles.base:make?path=FOLDER``: the store in FOLDER
    (created when missing)."""
    path = kwargs.pop("path", None)
    if not path:
        raise ValueError("the jsonfiles store needs ?path=FOLDER")
    if kwargs:
        raise ValueError(f"unknown options: {sorted(kwargs)}")
    return JsonFilesStore(path)
