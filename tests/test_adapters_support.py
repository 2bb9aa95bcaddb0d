"""The shared helpers' own promises: a missing server skips a developer's run
and fails CI's, and the shared contract tests agree with the reference store."""

from __future__ import annotations

import pytest

from memconform.adapters.memory import MemoryStore
from tests.adapters_support import StoreContract, require_server


def _absent(url: str) -> None:
    raise ConnectionRefusedError(f"nothing listens at {url}")


def test_missing_server_skips_outside_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setenv("MEMCONFORM_EXAMPLE_URL", "example://user:secret@127.0.0.1:1")
    with pytest.raises(pytest.skip.Exception) as caught:
        require_server("Example", "MEMCONFORM_EXAMPLE_URL", "example://default", _absent)
    assert "MEMCONFORM_EXAMPLE_URL" in str(caught.value)
    assert "secret" not in str(caught.value)


def test_missing_server_fails_in_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    monkeypatch.delenv("MEMCONFORM_EXAMPLE_URL", raising=False)
    with pytest.raises(pytest.fail.Exception, match="CI=true"):
        require_server("Example", "MEMCONFORM_EXAMPLE_URL", "example://default", _absent)


def test_present_server_gives_its_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    monkeypatch.setenv("MEMCONFORM_EXAMPLE_URL", "example://here")
    seen: list[str] = []
    assert require_server("Example", "MEMCONFORM_EXAMPLE_URL", "x", seen.append) == "example://here"
    assert seen == ["example://here"]


class TestReferenceStoreContract(StoreContract):
    """The shared contract tests hold for the in-process reference store too, so
    they ask nothing of the server stores that the reference does not keep."""

    @pytest.fixture
    def opened_store(self) -> MemoryStore:
        return MemoryStore()
