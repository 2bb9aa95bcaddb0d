"""The helpers every library adapter shares (memconform.adapters.libraries)."""

from __future__ import annotations

import asyncio

import pytest

from memconform.adapters.libraries import run_to_end


async def _answer() -> int:
    await asyncio.sleep(0)
    return 42


async def _refuse() -> int:
    raise KeyError("refused")


def test_a_coroutine_runs_to_its_end_from_plain_code() -> None:
    assert run_to_end(_answer) == 42
    with pytest.raises(KeyError, match="refused"):
        run_to_end(_refuse)


def test_inside_a_running_loop_it_runs_on_a_thread_of_its_own() -> None:
    async def caller() -> int:
        with pytest.raises(KeyError, match="refused"):
            run_to_end(_refuse)
        return run_to_end(_answer)

    assert asyncio.run(caller()) == 42
