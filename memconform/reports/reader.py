"""Reading the parts of a results file: typed access that names the path of
whatever is wrong (:class:`Reader`), and the checks of the optional
``coverage`` and ``fingerprint`` sections. A file of the wrong shape raises
:class:`ResultsError`; :func:`memconform.reports.results.load_results` reads
the rest.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["Reader", "ResultsError", "coverage_of", "fingerprint_of", "names"]


class ResultsError(ValueError):
    """A results file cannot be read as results: not JSON, or the wrong shape."""


class Reader:
    """Typed access to one JSON object that names the path of whatever is wrong.

    Every key in ``required`` must be present (``nullable`` reads accept a
    null value); no key outside ``required`` and ``also`` may appear.
    """

    def __init__(
        self, data: Any, path: str, required: Sequence[str], also: Sequence[str] = ()
    ) -> None:
        if not isinstance(data, dict):
            raise ResultsError(f"{path}: expected an object")
        missing = [k for k in required if k not in data]
        if missing:
            raise ResultsError(f"{path}.{missing[0]}: missing")
        unknown = sorted(set(data) - set(required) - set(also))
        if unknown:
            raise ResultsError(f"{path}.{unknown[0]}: unknown field")
        self.data = data
        self.path = path

    def get(self, key: str, kind: type | tuple[type, ...], nullable: bool = False) -> Any:
        value = self.data.get(key)
        if value is None and (nullable or key not in self.data):
            return None
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise ResultsError(f"{self.path}.{key}: has type {type(value).__name__}")
        if isinstance(value, int) and not isinstance(value, bool) and value < 0:
            raise ResultsError(f"{self.path}.{key}: is negative")
        return value

    def text(self, key: str, nullable: bool = False) -> Any:
        return self.get(key, str, nullable)

    def choice(self, key: str, allowed: Sequence[str]) -> str:
        value: str = self.get(key, str)
        if value not in allowed:
            raise ResultsError(f"{self.path}.{key}: {value!r} is not one of {', '.join(allowed)}")
        return value


def names(data: list[Any], path: str) -> tuple[str, ...]:
    """``data`` as a tuple of names (text), or :class:`ResultsError` at ``path``."""
    if not all(isinstance(name, str) for name in data):
        raise ResultsError(f"{path}: expected names")
    return tuple(data)


_FINGERPRINT_KEYS = (
    "schema", "runtime", "save_policy", "components", "nearest", "distance", "distances",
    "points", "differences", "references", "unsupported",
)
_FINGERPRINT_POINT_KEYS = ("name", "doc", "stored", "nearest", "differs")


def fingerprint_of(data: Any) -> dict[str, Any]:
    """The save-policy fingerprint of ``memconform run --fingerprint`` (see
    :mod:`memconform.fingerprint`), checked for the parts the report shows."""
    f = Reader(data, "fingerprint", _FINGERPRINT_KEYS)
    f.text("runtime")
    f.text("save_policy", nullable=True)
    f.text("nearest")
    f.get("distance", int)
    components = names(f.get("components", list), "fingerprint.components")
    distances = f.get("distances", dict)
    for name, value in distances.items():
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise ResultsError(f"fingerprint.distances.{name}: expected a count")
    for i, raw in enumerate(f.get("points", list)):
        where = f"fingerprint.points[{i}]"
        p = Reader(raw, where, _FINGERPRINT_POINT_KEYS)
        p.text("name")
        p.text("doc")
        names(p.get("differs", list), f"{where}.differs")
        for key in ("stored", "nearest"):
            seen = Reader(p.get(key, dict), f"{where}.{key}", components)
            for component in components:
                seen.text(component)
    f.get("differences", list)
    f.get("references", dict)
    for i, raw in enumerate(f.get("unsupported", list)):
        u = Reader(raw, f"fingerprint.unsupported[{i}]", ("name", "doc", "needs"))
        u.text("name")
        u.text("doc")
        names(u.get("needs", list), f"fingerprint.unsupported[{i}].needs")
    checked: dict[str, Any] = data
    return checked


_COVERAGE_KEYS = ("packages", "source_html", "totals", "files", "not_found", "not_measured")
_COVERAGE_FIGURES = ("statements", "lines_covered", "branches", "branches_covered")
_COVERAGE_FILE_KEYS = (
    "path", *_COVERAGE_FIGURES, "missing_lines", "setup_only_lines", "missing_branches",
    "reached",
)


def _lines(data: Any, path: str, size: int = 0) -> None:
    """Check a list of line numbers (``size`` > 0: of lists of that many numbers)."""
    for i, item in enumerate(data if isinstance(data, list) else [None]):
        numbers = item if size else [item]
        if (
            not isinstance(numbers, list) or (size and len(numbers) != size)
            or not all(isinstance(n, int) and not isinstance(n, bool) for n in numbers)
        ):
            raise ResultsError(f"{path}[{i}]: expected line numbers")


def coverage_of(data: Any) -> dict[str, Any]:
    """The ``coverage`` section of ``memconform run --coverage``, checked."""
    c = Reader(data, "coverage", _COVERAGE_KEYS)
    for key in ("packages", "not_found"):
        names(c.get(key, list), f"coverage.{key}")
    c.text("source_html", nullable=True)
    totals = Reader(c.get("totals", dict), "coverage.totals", _COVERAGE_FIGURES)
    for key in _COVERAGE_FIGURES:
        totals.get(key, int)
    for i, raw in enumerate(c.get("files", list)):
        where = f"coverage.files[{i}]"
        f = Reader(raw, where, _COVERAGE_FILE_KEYS)
        f.text("path")
        for key in _COVERAGE_FIGURES:
            f.get(key, int)
        _lines(f.get("missing_lines", list), f"{where}.missing_lines")
        _lines(f.get("setup_only_lines", list), f"{where}.setup_only_lines")
        _lines(f.get("missing_branches", list), f"{where}.missing_branches", size=2)
        for j, run in enumerate(f.get("reached", list)):
            reach = Reader(run, f"{where}.reached[{j}]", ("from", "to", "rules"))
            reach.get("from", int)
            reach.get("to", int)
            names(reach.get("rules", list), f"{where}.reached[{j}].rules")
    for i, raw in enumerate(c.get("not_measured", list)):
        note = Reader(raw, f"coverage.not_measured[{i}]", ("rules", "scenario", "process"))
        names(note.get("rules", list), f"coverage.not_measured[{i}].rules")
        note.text("scenario", nullable=True)
        note.text("process")
    return dict(data)
