"""The example Node.js store (``node/store.mjs``) over the stdio protocol.

It must keep the whole Store contract for what it declares, speak the protocol
as the JSON Schema says, and give back every value exactly (numbers included,
which plain ``JSON.parse`` would round). Needs ``node`` (20 or later) on the
PATH: without it the tests are skipped, except in CI (``CI=true``), where
they fail.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from memconform.adapters.stdio import StdioStore
from memconform.values import Message
from tests.adapters_support import (
    NO_ROW_POINT,
    ROOT,
    StoreContract,
    check_conversation,
    check_store_features,
    fresh,
    require_server,
)

STORE = ROOT / "node" / "store.mjs"


def _probe(node: str) -> None:
    path = shutil.which(node)
    if path is None:
        raise FileNotFoundError(f"{node} is not on the PATH")
    version = subprocess.run([path, "--version"], capture_output=True, text=True, check=True)
    major = int(version.stdout.strip().lstrip("v").split(".")[0])
    if major < 20:
        raise RuntimeError(f"Node.js 20 or later is needed, found {version.stdout.strip()}")


@pytest.fixture(scope="module")
def node() -> str:
    return require_server("Node.js", "MEMCONFORM_NODE", "node", _probe)


@pytest.fixture(scope="module")
def opened_store(node: str) -> Iterator[StdioStore]:
    store = StdioStore([node, str(STORE)], timeout=30, cwd=ROOT)
    yield store
    store.close()


class TestNodeStoreContract(StoreContract):
    """Every rule of the Store contract the Node store declares."""


def test_node_store_declares_what_it_keeps(opened_store: StdioStore) -> None:
    assert opened_store.name == "memconform-node-example"
    assert opened_store.capabilities == frozenset(
        {"commit-flags", "errors", "turn-records", "state", "knowledge"}
    )
    assert opened_store.hooks == {"damage"}


def test_node_store_traffic_matches_the_protocol_schema(node: str) -> None:
    check_conversation([node, str(STORE)])


def test_node_store_gives_numbers_back_exactly(opened_store: StdioStore) -> None:
    t = fresh()
    numbers = [12345678901234567890, 2**64 + 1, -(2**70), 1.0, 1e300, 5e-324, 0.1, -0.0, 1e20]
    batch = [Message(id="n", role="tool", text="", parts=({"v": numbers},), round=2**62)]
    opened_store.append(t, batch)
    back = opened_store.messages(t)[0]
    assert back.round == 2**62
    assert back.parts[0]["v"] == numbers
    assert [type(v) for v in back.parts[0]["v"]] == [type(v) for v in numbers]
    assert str(back.parts[0]["v"][7]) == "-0.0"


def test_node_store_keeps_awkward_keys_and_text(opened_store: StdioStore) -> None:
    t = fresh()
    metadata = {"__proto__": {"polluted": True}, "constructor": 1, "": "empty", "1": "one",
                "0": "zero"}
    batch = [Message(id="k", role="user", text="nul \x00 and \u2028 and 😀", metadata=metadata)]
    opened_store.append(t, batch)
    assert opened_store.messages(t) == batch


def test_node_store_answers_close_and_exits(node: str) -> None:
    store = StdioStore([node, str(STORE)], timeout=30, cwd=ROOT)
    store.close()
    assert store.returncode == 0


@pytest.mark.slow
def test_node_store_passes_the_store_features(node: str, tmp_path: Path) -> None:
    check_store_features(f"stdio:{shlex.join([node, str(STORE)])}", tmp_path, NO_ROW_POINT)
