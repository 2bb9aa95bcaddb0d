"""The ``durable`` check: one process writes, acknowledges and is then killed
outright (SIGKILL: it never closes the store); a fresh process must read back
exactly what was acknowledged."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from memconform.steps.contract_checks.children import (
    child_job,
    finish,
    kill,
    read_line,
    release,
    run_child,
    spawn,
)
from memconform.steps.contract_checks.result import CheckResult, ChildError, error_result
from memconform.values import same_value

__all__ = ["check_durable"]


def check_durable(
    url: str,
    thread: str,
    *,
    capabilities: Iterable[str],
    mutant: str | None = None,
    timeout: float = 30.0,
) -> CheckResult:
    """One process writes messages (and state and a fact, where declared) to
    ``thread``, acknowledges, and is killed with SIGKILL without closing the
    store; a fresh process must read back exactly what was acknowledged."""
    caps = frozenset(capabilities)
    expected = (
        "a fresh process reads back every acknowledged write, field for field, after the "
        "writer was killed outright without closing the store"
    )
    write = child_job(
        "write-durable",
        url,
        mutant,
        timeout,
        thread=thread,
        capabilities=sorted(caps),
        batches=_sample_batches(thread, caps),
        wait_for_kill=True,
    )
    writer = spawn(write, stdin=True)
    try:
        line = read_line(writer, timeout * 4)
        if line is None or "acked" not in line:
            release(writer)
            finish(writer, timeout * 4, "writing")  # raises what went wrong, if anything
            raise ChildError("append", "the writing process ended without acknowledging")
        acked = line["acked"]
        kill(writer)  # acknowledged, never closed: only what is really stored survives
        read = run_child(
            child_job(
                "read-durable", url, mutant, timeout, thread=thread, capabilities=sorted(caps)
            ),
            timeout * 4,
            "reading",
        )[-1]["read"]
    except ChildError as exc:
        kill(writer)
        return error_result(expected, exc)
    problems = [
        f"{part}: wrote {json.dumps(acked[part], ensure_ascii=True)[:600]}, "
        f"read {json.dumps(read.get(part), ensure_ascii=True)[:600]}"
        for part in acked
        if not same_value(acked[part], read.get(part))
    ]
    how = (
        "the writer was killed with SIGKILL right after it acknowledged its writes "
        f"({', '.join(sorted(acked))}), so it never closed the store"
    )
    return CheckResult(
        not problems,
        expected,
        "\n".join([*problems, how]) if problems else
        f"{how}; a fresh process read back everything acknowledged",
        details={"acked": acked, "read": read},
    )


def _sample_batches(thread: str, capabilities: frozenset[str]) -> list[list[dict[str, Any]]]:
    committed_flag = "commit-flags" not in capabilities
    return [
        [
            _msg("d1", "user", "Where is the config? \u202eRTL\u202c e\u0301 😀", thread),
            _msg(
                "d2",
                "assistant",
                "",
                thread,
                parts=[{"type": "tool-call", "id": "c1", "name": "ls", "args": {"path": "."}}],
            ),
            _msg("d3", "tool", "settings/\n  app.toml\n", thread, metadata={"exit": 0}),
        ],
        [
            _msg("d4", "assistant", "It lives in settings/.", thread, committed=committed_flag),
            _msg("d5", "user", "  thanks  ", thread),
        ],
    ]


def _msg(
    mid: str,
    role: str,
    text: str,
    thread: str,
    *,
    parts: list[Any] | None = None,
    metadata: dict[str, Any] | None = None,
    committed: bool = True,
) -> dict[str, Any]:
    return {
        "id": mid,
        "role": role,
        "text": text,
        "parts": parts or [],
        "run_id": "run-1",
        "round": 1,
        "turn_id": "T1",
        "committed": committed,
        "metadata": {"thread": thread, **(metadata or {})},
    }
