"""A log-structured store on plain files (``?path=FOLDER``, created when missing).

Every kind of data lives in a *log*: a folder holding a ``MANIFEST`` (JSON: the
log's name, its segment files in order, the next segment number and a
generation that grows whenever segments are rewritten), a ``LOCK`` file for
``fcntl.flock`` and numbered segment files ``00000001.seg``, ...::

    FOLDER/threads/t<hex of the thread id>/   one log per thread (h<sha256> for long ids)
    FOLDER/errors/                            error records of every thread
    FOLDER/records/                           turn records
    FOLDER/state/                             working state of every scope
    FOLDER/facts/                             facts and their tombstones

A segment is a sequence of frames ``b"SG" | u32 length | u32 crc32(payload) |
payload`` (big-endian), the payload compact ASCII JSON. Every write is a
transaction: its data records, one ``write`` each, then a commit record
``{"k": "c", "n": <records>}`` and an fsync; only then is it acknowledged.
Readers take no lock: they apply committed transactions only, so rows written
by a writer still inside its batch (or killed inside it) are invisible. The
next writer, under the lock, cuts such leftovers off before it writes.

A segment rotates once its committed bytes reach ``segment_bytes`` (query
parameter, default 1 MiB): the new file is created and fsynced, then the
manifest names it (written to a temporary file, fsynced, renamed, the folder
fsynced). Compaction (a thread after ``compact_after`` flag changes, state and
facts after 256 superseded records) writes the folded contents to new
segments, then a manifest of the next generation, then removes the old files.
A reader that finds a segment gone re-reads the manifest and starts over.

Each process keeps what it has parsed per log (the fold, and how far each
segment was read) and continues from there; a new generation, or a segment
list that is not an extension of the one parsed, drops it. A frame whose
checksum or JSON does not hold, anywhere but in a write still in progress at
the end, raises ``StoreError``: nothing is ever skipped.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import struct
import threading
import uuid
import zlib
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

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
from memconform.values import (
    ErrorRecord,
    Fact,
    JSONValue,
    Message,
    StateEntry,
    TurnRecord,
    freeze_json,
)

__all__ = ["SegmentLog", "SegmentStore", "make"]

MAGIC = b"SG"
HEADER = struct.Struct(">2sII")
"""Frame header: magic, payload length, CRC-32 of the payload."""

SEGMENT_BYTES = 1 << 20
COMPACT_AFTER = 32
"""Flag-change records in a thread's log that make the next writer compact it."""
KEYED_DEAD = 256
"""Superseded state or fact records that make the next writer compact that log."""
CHUNK = 256
"""Message rows per transaction when a compaction rewrites a thread."""
MAX_HEX_NAME = 200


# -- encoding --------------------------------------------------------------------------


def dumps(value: JSONValue, what: str) -> bytes:
    """Compact ASCII JSON; a value JSON cannot carry (a non-finite float) is refused."""
    try:
        text = json.dumps(value, ensure_ascii=True, allow_nan=False, separators=(",", ":"))
    except (ValueError, TypeError) as exc:
        raise UnsupportedValueError(f"{what}: {exc}; it cannot be kept exactly") from None
    return text.encode("ascii")


def frame(record: JSONValue, what: str = "record") -> bytes:
    """One frame holding ``record``."""
    payload = dumps(record, what)
    return HEADER.pack(MAGIC, len(payload), zlib.crc32(payload)) + payload


def check_text(what: str, text: str) -> None:
    """Refuse text holding a lone surrogate (it is not Unicode text UTF-8 can carry)."""
    if text.isascii():
        return
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise UnsupportedValueError(
            f"{what} holds a lone surrogate at index {exc.start}; it cannot be kept exactly"
        ) from None


def folder_name(ident: str) -> str:
    """The folder of a thread's log: ``t`` and the hex of the id's UTF-8 bytes (only
    ``0-9a-f``, so no case folding, separator or length rule of a file system can
    merge two ids), or ``h`` and its SHA-256 when that would be long. The manifest
    keeps the id itself, and a log whose manifest names another id is refused."""
    raw = ident.encode("utf-8", "surrogatepass")
    name = "t" + raw.hex()
    if len(name) > MAX_HEX_NAME:
        name = "h" + hashlib.sha256(raw).hexdigest()
    return name


def segment_name(number: int) -> str:
    return f"{number:08d}.seg"


def fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


Txn = list[tuple[dict[str, Any], tuple[str, int]]]
"""A committed transaction: each data record with (segment, offset) of its frame."""


def parse(data: bytes, base: int, segment: str) -> tuple[list[Txn], int, bool]:
    """The committed transactions in ``data`` (the bytes of ``segment`` from offset
    ``base``), the offset just past the last commit, and whether anything follows it
    (an unfinished write: rows without their commit, or a frame cut short)."""
    txns: list[Txn] = []
    pending: Txn = []
    pos = 0
    committed = 0
    size = len(data)
    while size - pos >= HEADER.size:
        magic, length, crc = HEADER.unpack_from(data, pos)
        if magic != MAGIC:
            raise StoreError(f"segment {segment} is damaged at offset {base + pos}: no frame")
        end = pos + HEADER.size + length
        if end > size:
            break  # a frame still being written, or cut off by a writer that died
        payload = data[pos + HEADER.size : end]
        if zlib.crc32(payload) != crc:
            raise StoreError(f"segment {segment} is damaged at offset {base + pos}: bad checksum")
        try:
            record = json.loads(payload)
        except ValueError as exc:
            raise StoreError(f"segment {segment} at offset {base + pos}: {exc}") from None
        if not isinstance(record, dict):
            raise StoreError(f"segment {segment} at offset {base + pos}: not a record")
        if record.get("k") == "c":
            if record.get("n") != len(pending):
                raise StoreError(f"segment {segment} at offset {base + pos}: bad commit")
            txns.append(pending)
            pending = []
            committed = end
        else:
            pending.append((record, (segment, base + pos)))
        pos = end
    return txns, base + committed, committed != size


class Fold:
    """What a log's committed transactions add up to (one subclass per kind of log)."""

    def apply(self, txn: Txn) -> None:  # pragma: no cover - overridden
        raise NotImplementedError

    def compacted(self) -> list[list[dict[str, Any]]]:  # pragma: no cover - overridden
        """The transactions a compaction writes in place of the whole log."""
        raise NotImplementedError


class _Vanished(Exception):
    """A segment the manifest named is gone (a compaction removed it): start over."""


class SegmentLog:
    """One log: its manifest, segments and lock, and this process's parse of it."""

    def __init__(
        self, folder: Path, name: str, fold: Callable[[], Fold], segment_bytes: int
    ) -> None:
        self.folder = folder
        self.name = name
        self._new_fold = fold
        self.segment_bytes = segment_bytes
        self.mutex = threading.RLock()
        self.reset()

    # -- this process's parse ----------------------------------------------------------

    def reset(self) -> None:
        self.generation: int | None = None
        self.segments: list[str] = []
        self.offsets: dict[str, int] = {}
        self.fold = self._new_fold()
        self.manifest: dict[str, Any] | None = None

    def read_manifest(self) -> dict[str, Any] | None:
        try:
            raw = (self.folder / "MANIFEST").read_bytes()
        except FileNotFoundError:
            return None
        try:
            manifest = json.loads(raw)
        except ValueError as exc:
            raise StoreError(f"the manifest of {self.folder.name} is damaged: {exc}") from None
        if not isinstance(manifest, dict) or manifest.get("name") != self.name:
            raise StoreError(f"the manifest of {self.folder.name} belongs to another log")
        return manifest

    def parse(self, data: bytes, base: int, segment: str) -> tuple[list[Txn], int, bool]:
        """See :func:`parse`."""
        return parse(data, base, segment)

    def read_segment(self, segment: str, offset: int) -> bytes:
        try:
            with open(self.folder / segment, "rb") as handle:
                handle.seek(offset)
                return handle.read()
        except FileNotFoundError:
            raise _Vanished(segment) from None

    def catch_up(self) -> None:
        """Apply every transaction committed since the last call (under ``mutex``)."""
        manifest = self.read_manifest()
        if manifest is None:
            self.reset()
            return
        segments = list(manifest["segments"])
        if (
            manifest["generation"] != self.generation
            or segments[: len(self.segments)] != self.segments
        ):
            self.reset()
            self.generation = manifest["generation"]
        first = max(0, len(self.segments) - 1)
        for index in range(first, len(segments)):
            segment = segments[index]
            offset = self.offsets.get(segment, 0)
            txns, committed, unfinished = self.parse(
                self.read_segment(segment, offset), offset, segment
            )
            for txn in txns:
                try:
                    self.fold.apply(txn)
                except (KeyError, TypeError, ValueError, IndexError) as exc:
                    raise StoreError(f"log {self.folder.name} holds a bad record: {exc}") from None
            self.offsets[segment] = committed
            if unfinished and index < len(segments) - 1:
                raise StoreError(f"segment {segment} of {self.folder.name} ends in a torn write")
        self.segments = segments
        self.manifest = manifest

    def refresh(self) -> Fold:
        """The fold of everything committed now."""
        with self.mutex:
            for _ in range(20):
                try:
                    self.catch_up()
                except _Vanished:
                    self.reset()
                    continue
                except BaseException:
                    self.reset()  # never keep a half-applied parse
                    raise
                return self.fold
            raise StoreError(f"log {self.folder.name} kept changing while it was read")

    # -- writing -----------------------------------------------------------------------

    def write_manifest(self, manifest: dict[str, Any]) -> None:
        path = self.folder / "MANIFEST"
        tmp = self.folder / f".MANIFEST.{os.getpid()}.{uuid.uuid4().hex}"
        with open(tmp, "wb") as handle:
            handle.write(dumps(manifest, "manifest"))
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
        fsync_dir(self.folder)

    def new_segment(self, number: int) -> str:
        """Create an empty segment file (an orphan of a killed compaction is emptied)."""
        name = segment_name(number)
        fd = os.open(self.folder / name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        return name

    @contextlib.contextmanager
    def writing(self) -> Iterator[SegmentLog]:
        """Hold this log's lock (threads and processes), caught up with every commit."""
        with self.mutex:
            self.folder.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.folder / "LOCK", os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                if self.read_manifest() is None:
                    first = self.new_segment(1)
                    fsync_dir(self.folder)
                    self.write_manifest(
                        {"name": self.name, "segments": [first], "next": 2, "generation": 1}
                    )
                self.refresh()
                yield self
            finally:
                os.close(fd)  # closing the descriptor releases the lock

    def rotate(self) -> None:
        """Start a new segment (under the lock): the file first, then the manifest."""
        assert self.manifest is not None
        manifest = dict(self.manifest)
        name = self.new_segment(manifest["next"])
        fsync_dir(self.folder)
        manifest["segments"] = [*manifest["segments"], name]
        manifest["next"] += 1
        self.write_manifest(manifest)
        self.catch_up()

    def commit(self, frames: Sequence[bytes], *, row_point: bool = False) -> None:
        """Write one transaction (under the lock): its frames, the commit, fsync."""
        segment = self.segments[-1]
        committed = self.offsets.get(segment, 0)
        if committed >= self.segment_bytes:
            self.rotate()
            segment = self.segments[-1]
            committed = self.offsets.get(segment, 0)
        fd = os.open(self.folder / segment, os.O_WRONLY)
        try:
            if os.fstat(fd).st_size != committed:
                os.ftruncate(fd, committed)  # rows of a writer that died inside its batch
            os.lseek(fd, committed, os.SEEK_SET)
            try:
                for data in frames:
                    if row_point:
                        batch_row_pause()  # the kit's row point: a failure here keeps nothing
                    write_all(fd, data)
                write_all(fd, frame({"k": "c", "n": len(frames)}))
                os.fsync(fd)
            except BaseException:
                os.ftruncate(fd, committed)
                raise
        finally:
            os.close(fd)
        self.catch_up()

    def compact(self) -> None:
        """Rewrite the whole log from its fold (under the lock)."""
        assert self.manifest is not None
        old = self.manifest
        number = old["next"]
        written: list[str] = []
        fd = -1
        size = 0
        try:
            for txn in self.fold.compacted():
                if fd < 0 or size >= self.segment_bytes:
                    if fd >= 0:
                        os.fsync(fd)
                        os.close(fd)
                    written.append(segment_name(number))
                    fd = os.open(
                        self.folder / written[-1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644
                    )
                    number += 1
                    size = 0
                data = b"".join(frame(r) for r in txn) + frame({"k": "c", "n": len(txn)})
                write_all(fd, data)
                size += len(data)
            if fd >= 0:
                os.fsync(fd)
                os.close(fd)
                fd = -1
            if not written:
                written.append(self.new_segment(number))
                number += 1
        finally:
            if fd >= 0:
                os.close(fd)
        fsync_dir(self.folder)
        self.write_manifest(
            {
                "name": self.name,
                "segments": written,
                "next": number,
                "generation": old["generation"] + 1,
            }
        )
        for segment in old["segments"]:
            with contextlib.suppress(FileNotFoundError):
                (self.folder / segment).unlink()
        fsync_dir(self.folder)
        self.reset()
        self.catch_up()


# -- the folds ---------------------------------------------------------------------------


class ThreadFold(Fold):
    """One thread: its message rows (JSON) in append order, by id."""

    def __init__(self) -> None:
        self.rows: list[dict[str, Any]] = []
        self.index: dict[str, int] = {}
        self.where: list[tuple[str, int]] = []
        self.flag_records = 0

    def apply(self, txn: Txn) -> None:
        for record, where in txn:
            kind = record["k"]
            if kind == "m":
                row = record["m"]
                self.index[row["id"]] = len(self.rows)
                self.rows.append(row)
                self.where.append(where)
            elif kind == "f":
                for message_id in record["ids"]:
                    self.rows[self.index[message_id]]["committed"] = record["c"]
                self.flag_records += 1
            else:
                raise ValueError(f"unknown record kind {kind!r}")

    def compacted(self) -> list[list[dict[str, Any]]]:
        return [
            [{"k": "m", "m": row} for row in self.rows[start : start + CHUNK]]
            for start in range(0, len(self.rows), CHUNK)
        ]


class ListFold(Fold):
    """Error records (by thread) or turn records: an append-only list."""

    def __init__(self) -> None:
        self.items: list[dict[str, Any]] = []

    def apply(self, txn: Txn) -> None:
        self.items.extend(record["v"] for record, _ in txn)

    def compacted(self) -> list[list[dict[str, Any]]]:
        return [[{"k": "v", "v": item}] for item in self.items]


class StateFold(Fold):
    """Working state: the newest (value, version) of each (scope, key)."""

    def __init__(self) -> None:
        self.entries: dict[tuple[str, str], dict[str, Any]] = {}
        self.dead = 0

    def apply(self, txn: Txn) -> None:
        for record, _ in txn:
            where = (record["scope"], record["key"])
            if where in self.entries:
                self.dead += 1
            self.entries[where] = {"value": record["value"], "version": record["version"]}

    def compacted(self) -> list[list[dict[str, Any]]]:
        return [
            [{"k": "s", "scope": s, "key": k, **entry}]
            for (s, k), entry in self.entries.items()
        ]


class FactFold(Fold):
    """Facts: the current fact of each (scope, subject); tombstones remove one."""

    def __init__(self) -> None:
        self.facts: dict[tuple[str, str], dict[str, Any]] = {}
        self.dead = 0

    def apply(self, txn: Txn) -> None:
        for record, _ in txn:
            if record["k"] == "p":
                where = (record["scope"], record["fact"]["subject"])
                if where in self.facts:
                    self.dead += 1
                self.facts[where] = record["fact"]
            elif record["k"] == "x":
                self.facts.pop((record["scope"], record["subject"]), None)
                self.dead += 2  # the fact it removed and the tombstone itself
            else:
                raise ValueError(f"unknown record kind {record['k']!r}")

    def compacted(self) -> list[list[dict[str, Any]]]:
        # a whole rewrite: nothing older remains for a tombstone to hide, so none is kept
        return [[{"k": "p", "scope": s, "fact": f}] for (s, _), f in self.facts.items()]


# -- the store ---------------------------------------------------------------------------


def _decoded(build: Callable[[Any], Any], data: Any, what: str) -> Any:
    try:
        return build(data)
    except (TypeError, ValueError, KeyError) as exc:
        raise StoreError(f"a stored {what} cannot be decoded: {exc}") from None


class SegmentStore:
    """The store; see the Store contract for each method. Safe for several threads
    and several processes on one folder (see the module docstring)."""

    log_class: type[SegmentLog] = SegmentLog
    thread_fold: type[Fold] = ThreadFold
    error_fold: type[Fold] = ListFold
    state_fold: type[Fold] = StateFold
    fact_fold: type[Fold] = FactFold

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        segment_bytes: int = SEGMENT_BYTES,
        compact_after: int = COMPACT_AFTER,
    ) -> None:
        self.root = Path(path)
        self.root.mkdir(parents=True, exist_ok=True)
        self.segment_bytes = segment_bytes
        self.compact_after = compact_after
        self._logs_mutex = threading.Lock()
        self._threads: dict[str, SegmentLog] = {}
        self._errors = self._log(self.root / "errors", "errors", self.error_fold)
        self._records = self._log(self.root / "records", "records", ListFold)
        self._state = self._log(self.root / "state", "state", self.state_fold)
        self._facts = self._log(self.root / "facts", "facts", self.fact_fold)

    def _log(self, folder: Path, name: str, fold: Callable[[], Fold]) -> SegmentLog:
        return self.log_class(folder, name, fold, self.segment_bytes)

    def _thread_folder(self, thread_id: str) -> tuple[Path, str]:
        """The folder of a thread's log and the name its manifest must hold."""
        return self.root / "threads" / folder_name(thread_id), "thread:" + thread_id

    @property
    def capabilities(self) -> frozenset[str]:
        """Every capability of :class:`memconform.contract.Capability`."""
        return frozenset(c.value for c in Capability)

    def _thread_log(self, thread_id: str) -> SegmentLog:
        with self._logs_mutex:
            log = self._threads.get(thread_id)
            if log is None:
                folder, name = self._thread_folder(thread_id)
                log = self._log(folder, name, self.thread_fold)
                self._threads[thread_id] = log
            return log

    def _thread(self, thread_id: str) -> ThreadFold:
        fold = self._thread_log(thread_id).refresh()
        assert isinstance(fold, ThreadFold)
        return fold

    # -- core --------------------------------------------------------------------------

    def _message_frames(self, batch: Sequence[Message]) -> list[bytes]:
        frames = []
        seen: set[str] = set()
        for message in batch:
            if message.id in seen:
                raise DuplicateIdError(f"message id {message.id!r} repeats within the batch")
            seen.add(message.id)
            check_text(f"message {message.id!r}", message.text)
            frames.append(frame({"k": "m", "m": message.to_json()}, f"message {message.id!r}"))
        return frames

    def append(self, thread_id: str, batch: Sequence[Message]) -> None:
        """See :meth:`memconform.contract.Store.append`."""
        batch = list(batch)
        frames = self._message_frames(batch)  # encoded now: the caller's objects stay theirs
        if not frames:
            return
        log = self._thread_log(thread_id)
        with log.writing():
            fold = log.fold
            assert isinstance(fold, ThreadFold)
            repeated = [m.id for m in batch if m.id in fold.index]
            if repeated:
                raise DuplicateIdError(
                    f"message ids {repeated[:5]} are already in thread {thread_id!r}"
                )
            log.commit(frames, row_point=True)

    def _visible(
        self, rows: list[dict[str, Any]], limit: int | None, include_uncommitted: bool
    ) -> list[dict[str, Any]]:
        if not include_uncommitted:
            rows = [row for row in rows if row["committed"]]
        if limit is not None:
            rows = rows[max(0, len(rows) - limit) :] if limit else []
        return rows

    def messages(
        self, thread_id: str, limit: int | None = None, *, include_uncommitted: bool = False
    ) -> list[Message]:
        """See :meth:`memconform.contract.CommitFlagsStore.messages`."""
        check_limit(limit)
        log = self._thread_log(thread_id)
        with log.mutex:
            rows = self._visible(self._thread(thread_id).rows, limit, include_uncommitted)
            return [_decoded(Message.from_json, row, "message") for row in rows]

    def damage(self, thread_id: str) -> None:
        """The optional hook: one byte of the middle message's frame is changed on
        disk, so its checksum no longer holds (as a bad sector would leave it)."""
        log = self._thread_log(thread_id)
        with log.writing():
            fold = log.fold
            assert isinstance(fold, ThreadFold)
            segment, offset = fold.where[damage_index(len(fold.rows))]
            with open(log.folder / segment, "r+b") as handle:
                handle.seek(offset + HEADER.size)
                byte = handle.read(1)
                handle.seek(offset + HEADER.size)
                handle.write(bytes([byte[0] ^ 0x01]))
                handle.flush()
                os.fsync(handle.fileno())
            assert log.manifest is not None
            # every process's parse of this log is dropped by a new generation
            log.write_manifest({**log.manifest, "generation": log.manifest["generation"] + 1})
            log.reset()

    # -- commit-flags ------------------------------------------------------------------

    def set_committed(self, thread_id: str, message_ids: Sequence[str], committed: bool) -> None:
        """See :meth:`memconform.contract.CommitFlagsStore.set_committed`."""
        wanted = list(message_ids)
        log = self._thread_log(thread_id)
        with log.writing():
            fold = log.fold
            assert isinstance(fold, ThreadFold)
            missing = [m for m in wanted if m not in fold.index]
            if missing:
                raise KeyError(f"unknown message ids in thread {thread_id!r}: {missing[:5]}")
            if not wanted:
                return
            log.commit([frame({"k": "f", "ids": wanted, "c": bool(committed)})])
            if fold.flag_records >= self.compact_after:
                log.compact()

    # -- errors and turn records -------------------------------------------------------

    def record_error(self, thread_id: str, record: ErrorRecord) -> None:
        """See :meth:`memconform.contract.ErrorsStore.record_error`."""
        data = frame({"k": "v", "v": {"thread": thread_id, "record": record.to_json()}})
        with self._errors.writing() as log:
            log.commit([data])

    def errors(self, thread_id: str) -> list[ErrorRecord]:
        """See :meth:`memconform.contract.ErrorsStore.errors`."""
        with self._errors.mutex:
            fold = self._errors.refresh()
            assert isinstance(fold, ListFold)
            return [
                _decoded(ErrorRecord.from_json, item["record"], "error record")
                for item in fold.items
                if item["thread"] == thread_id
            ]

    def append_record(self, record: TurnRecord) -> None:
        """See :meth:`memconform.contract.TurnRecordsStore.append_record`."""
        data = frame({"k": "v", "v": record.to_json()}, "turn record")
        with self._records.writing() as log:
            log.commit([data])

    def records(self, thread_id: str | None = None) -> list[TurnRecord]:
        """See :meth:`memconform.contract.TurnRecordsStore.records`."""
        with self._records.mutex:
            fold = self._records.refresh()
            assert isinstance(fold, ListFold)
            return [
                _decoded(TurnRecord.from_json, item, "turn record")
                for item in fold.items
                if thread_id is None or item["thread_id"] == thread_id
            ]

    # -- state -------------------------------------------------------------------------

    def read_state(self, scope: str, key: str) -> StateEntry | None:
        """See :meth:`memconform.contract.StateStore.read_state`."""
        with self._state.mutex:
            fold = self._state.refresh()
            assert isinstance(fold, StateFold)
            entry = fold.entries.get((scope, key))
            if entry is None:
                return None
            return StateEntry(key, freeze_json(entry["value"]), entry["version"])

    def write_state(
        self, scope: str, key: str, value: JSONValue, expected_version: int | None
    ) -> StateEntry:
        """See :meth:`memconform.contract.StateStore.write_state`."""
        with self._state.writing() as log:
            fold = log.fold
            assert isinstance(fold, StateFold)
            current = fold.entries.get((scope, key))
            version = None if current is None else current["version"]
            if version != expected_version:
                raise ConflictError(
                    f"state {scope!r}/{key!r}: expected version {expected_version}, "
                    f"stored version is {version}"
                )
            new_version = (version or 0) + 1
            record = {"k": "s", "scope": scope, "key": key, "value": value, "version": new_version}
            log.commit([frame(record, f"state {key!r}")])
            if fold.dead >= KEYED_DEAD:
                log.compact()
            stored = log.fold
            assert isinstance(stored, StateFold)
            return StateEntry(key, freeze_json(stored.entries[(scope, key)]["value"]), new_version)

    # -- knowledge ---------------------------------------------------------------------

    def put_fact(self, scope: str, fact: Fact) -> None:
        """See :meth:`memconform.contract.KnowledgeStore.put_fact`."""
        check_text(f"fact {fact.subject!r}", fact.statement)
        data = frame({"k": "p", "scope": scope, "fact": fact.to_json()}, "fact")
        with self._facts.writing() as log:
            log.commit([data])
            fold = log.fold
            assert isinstance(fold, FactFold)
            if fold.dead >= KEYED_DEAD:
                log.compact()

    def _fact_fold(self) -> FactFold:
        fold = self._facts.refresh()
        assert isinstance(fold, FactFold)
        return fold

    def get_fact(self, scope: str, subject: str) -> Fact | None:
        """See :meth:`memconform.contract.KnowledgeStore.get_fact`."""
        with self._facts.mutex:
            data = self._fact_fold().facts.get((scope, subject))
            return None if data is None else _decoded(Fact.from_json, data, "fact")

    def facts(self, scope: str) -> list[Fact]:
        """See :meth:`memconform.contract.KnowledgeStore.facts`: ordered by subject
        (code point order)."""
        with self._facts.mutex:
            found = sorted(
                ((subject, data) for (s, subject), data in self._fact_fold().facts.items()
                 if s == scope),
                key=lambda pair: pair[0],
            )
            return [_decoded(Fact.from_json, data, "fact") for _, data in found]

    def forget(self, scope: str, subject: str) -> bool:
        """See :meth:`memconform.contract.KnowledgeStore.forget`."""
        with self._facts.writing() as log:
            fold = log.fold
            assert isinstance(fold, FactFold)
            if (scope, subject) not in fold.facts:
                return False
            log.commit([frame({"k": "x", "scope": scope, "subject": subject})])
            if fold.dead >= KEYED_DEAD:
                log.compact()
            return True


def make(
    path: str, segment_bytes: str | None = None, compact_after: str | None = None
) -> SegmentStore:
    """The factory of ``<package>.base:make?path=FOLDER[&segment_bytes=N][&compact_after=N]``."""
    return SegmentStore(
        path,
        segment_bytes=int(segment_bytes) if segment_bytes else SEGMENT_BYTES,
        compact_after=int(compact_after) if compact_after else COMPACT_AFTER,
    )
