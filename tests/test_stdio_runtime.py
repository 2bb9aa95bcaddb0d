"""The runtime protocol's kit side (``stdio:`` runtimes): what a child asks is
carried out on the kit's environment, and a child that misbehaves is the
adapter's error naming the runtime, never a crash of the kit nor a stray process."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memconform.adapters.memory import MemoryStore
from memconform.adapters.stdio_runtime import (
    ConfigurationRejected,
    StdioRuntime,
    open_stdio_runtime,
    stdio_target,
)
from memconform.harness import answers, process_groups
from memconform.harness.environment import Environment, ScriptError
from memconform.harness.proxy import AdapterContractError, AdapterTimeoutError, RecordingStore
from memconform.runtime_names import UnknownRuntime, runtime_target

FAKES = Path(__file__).parent / "stdio_runtime_fakes.py"
SCRIPT = {
    "schema": "memconform.script/1", "profile": "save-policy",
    "model": {"agent": [{"reply": "hello"}]},
    "tools": {"flaky": {"fail": {"type": "TimeoutError", "message": "slow"}, "effect": "sent"}},
}


_OPENED: list[StdioRuntime] = []


def _runtime(mode: str, timeout: float = 10.0) -> StdioRuntime:
    runtime = StdioRuntime([sys.executable, str(FAKES), mode], timeout=timeout)
    _OPENED.append(runtime)
    return runtime


def _env() -> Environment:
    return Environment(SCRIPT, RecordingStore(MemoryStore()))


def _gone(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return True
    return False


@pytest.fixture(autouse=True)
def _no_stray_groups(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(answers._LIMIT, "hung", None)  # a hang here ends no other test
    before = process_groups.registered()
    yield
    while _OPENED:
        _OPENED.pop().close()
    left = process_groups.registered() - before
    assert not left, f"process groups left running: {sorted(left)}"


def test_every_call_is_carried_out_on_the_kits_environment() -> None:
    runtime = _runtime("ok")
    assert runtime.profiles == {"save-policy"}
    assert runtime.policies == {"message"}
    assert not hasattr(runtime, "hooks")  # declared null: every point is run
    env = _env()
    answer = runtime.execute(SCRIPT, env)
    assert answer["model"] == {"result": {"reply": "hello", "tool_calls": [], "payload": None,
                                          "usage": {}}, "call": 1}
    failing = answer["failing_tool"]
    assert failing["error"]["kind"] == "scripted-failure"
    assert failing["error"]["error"] == {"type": "TimeoutError", "message": "slow"}
    assert answer["id"]["result"] == "msg-1"
    assert answer["now"]["result"] == "2026-01-01T00:00:00Z"
    assert answer["append"] == {"call": 6, "result": None}
    assert answer["again"]["error"]["kind"] == "duplicate-id"
    assert [m["id"] for m in answer["messages"]["result"]] == ["m1"]
    assert answer["ledger"]["result"] == [{"tool": "flaky", "call_id": "c1", "effect": "sent"}]
    kinds = [(e.kind, e.name) for e in env.timeline.entries]
    assert ("store", "append") in kinds
    assert ("event", "done") in kinds


@pytest.mark.parametrize(("mode", "said"), [
    ("not-json", "not JSON: thinking..."),
    ("unknown-call", "'filesystem.read'"),
    ("crash", "exited with status 4 before answering; its standard error ended with: "
              "the runtime fell over"),
    ("error-answer", "failed: no model configured"),
])
def test_a_misbehaving_child_is_the_adapters_error_naming_the_runtime(
        mode: str, said: str) -> None:
    with pytest.raises(AdapterContractError) as raised:
        _runtime("ok" if mode == "x" else mode).execute(SCRIPT, _env())
    assert raised.value.method == "execute"
    assert said in str(raised.value)
    assert f"stdio_runtime_fakes.py {mode}" in str(raised.value)


def test_a_silent_child_times_out_and_its_group_is_killed() -> None:
    with pytest.raises(AdapterTimeoutError, match=r"wrote nothing within 0\.5 s"):
        _runtime("hang", timeout=0.5).execute(SCRIPT, _env())


def test_a_kill_reaches_what_the_runtime_spawned() -> None:
    env = _env()
    with pytest.raises(AdapterTimeoutError):
        _runtime("grandchild", timeout=1.0).execute(SCRIPT, env)
    spawned = [e for e in env.timeline.entries if e.name == "spawned"]
    pid = int(spawned[0].data["pid"])
    assert _gone(pid), "the runtime's own child outlived the kill of its group"


def test_a_refused_configuration_reads_as_a_python_runtimes_value_error() -> None:
    with pytest.raises(ConfigurationRejected, match="history_window") as raised:
        _runtime("refuse-config").execute(SCRIPT, _env())
    assert isinstance(raised.value, ValueError)


def test_the_kits_own_failure_is_never_answered_to_the_runtime() -> None:
    with pytest.raises(ScriptError, match="call 2 was not scripted"):
        _runtime("past-script").execute(SCRIPT, _env())


@pytest.mark.parametrize(("mode", "said"), [
    ("bad-hello", "declared profiles as 'save-policy'"),
    ("old-protocol", "speaks 'memconform.runtime/0'"),
])
def test_a_hello_the_kit_cannot_read_is_the_adapters_error(mode: str, said: str) -> None:
    with pytest.raises(AdapterContractError, match=said):
        _runtime(mode)


def test_a_command_that_does_not_start_is_the_adapters_error() -> None:
    with pytest.raises(AdapterContractError, match="cannot start"):
        open_stdio_runtime("stdio:/nonexistent/runtime --flag")


def test_the_target_names_files_absolutely_and_keeps_links(tmp_path: Path) -> None:
    os.symlink(sys.executable, tmp_path / "python")
    (tmp_path / "agent.mjs").write_text("", encoding="utf-8")
    here = os.getcwd()
    os.chdir(tmp_path)
    try:
        target = stdio_target("stdio:./python agent.mjs --policy 'run now'")
    finally:
        os.chdir(here)
    assert shlex.split(target[len("stdio:"):]) == [
        str(tmp_path / "python"), str(tmp_path / "agent.mjs"), "--policy", "run now"]
    assert runtime_target(target) == target
    with pytest.raises(UnknownRuntime, match="needs a command"):
        runtime_target("stdio:")


@pytest.mark.slow
def test_a_hung_stdio_runtime_ends_the_run_with_exit_3_naming_it(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    command = f"stdio:{shlex.quote(sys.executable)} {shlex.quote(str(FAKES))} hang"
    done = subprocess.run(
        [sys.executable, "-m", "memconform", "run", "--runtime", command,
         "--profile", "save-policy", "--out", "out"],
        capture_output=True, text=True, check=False, cwd=tmp_path,
        env={**env, "MEMCONFORM_STDIO_TIMEOUT": "1"}, timeout=300,
    )
    assert done.returncode == 3, done.stdout[-3000:] + done.stderr[-3000:]
    assert "stdio_runtime_fakes.py hang" in done.stdout
    results = (tmp_path / "out" / "results.json").read_text(encoding="utf-8")
    assert "wrote nothing within 1 s" in results


def _validator() -> Any:
    import jsonschema  # type: ignore[import-untyped]
    from referencing import Registry, Resource

    schemas = Path(__file__).parent.parent / "spec" / "schemas"
    loaded = {name: json.loads((schemas / name).read_text(encoding="utf-8"))
              for name in ("runtime-protocol.schema.json", "stdio-protocol.schema.json")}
    registry = Registry().with_resources(
        (schema["$id"], Resource.from_contents(schema)) for schema in loaded.values())
    return lambda part: jsonschema.Draft202012Validator(
        {"$ref": f"{loaded['runtime-protocol.schema.json']['$id']}#/$defs/{part}"},
        registry=registry)


@pytest.mark.slow
def test_every_line_of_the_reference_exchange_fits_the_schema(tmp_path: Path) -> None:
    """The simulator served over the protocol, on save-policy scenarios with
    tools, failures, error records and kill points, writes and reads only lines
    the published schema allows, and leaves no process running."""
    log = tmp_path / "lines.jsonl"
    command = shlex.join([sys.executable, str(Path(__file__).parent / "runtime_tee.py"),
                          str(log), sys.executable, "-m", "memconform.runtime_server",
                          "simulator"])
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    done = subprocess.run(
        [sys.executable, "-m", "memconform", "run", "--runtime", f"stdio:{command}",
         "--rule", "SP-010", "--rule", "SP-014", "--out", "out"],
        capture_output=True, text=True, check=False, cwd=tmp_path, env=env, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    # the kill points killed whole process groups, and every child was reaped
    left = subprocess.run(["pgrep", "-f", str(log)], capture_output=True, text=True,
                          check=False).stdout.split()
    assert not left, f"runtime processes left running: {left}"
    validators = {"kit": _validator()("request"), "runtime": _validator()("line")}
    lines = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    methods = {json.loads(entry["line"]).get("method") for entry in lines}
    assert {"hello", "execute", "close", "model", "store.append", "ids.next"} <= methods
    for entry in lines:
        errors = list(validators[entry["from"]].iter_errors(json.loads(entry["line"])))
        assert not errors, f"{entry['from']}: {entry['line'][:300]}: {errors[0].message}"


def _verdicts(tmp_path: Path, runtime: str, out: str) -> dict[str, tuple[str, int]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    done = subprocess.run(
        [sys.executable, "-m", "memconform", "run", "--runtime", runtime, "--out", out],
        capture_output=True, text=True, check=False, cwd=tmp_path, env=env, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    rules = json.loads((tmp_path / out / "results.json").read_text(encoding="utf-8"))["rules"]
    return {r["id"]: (r["verdict"], len(r["scenarios"])) for r in rules}


@pytest.mark.slow
def test_the_simulator_over_the_protocol_is_judged_as_in_process(tmp_path: Path) -> None:
    """Every profile: the reference served by ``memconform.runtime_server``
    gets the verdict the reference gets in the kit's own process, rule by
    rule and on as many scenarios, so nothing of a runtime is lost on the pipe."""
    served = shlex.join([sys.executable, "-m", "memconform.runtime_server", "simulator"])
    over_stdio = _verdicts(tmp_path, f"stdio:{served}", "stdio")
    in_process = _verdicts(tmp_path, "simulator", "local")
    differing = {rule: (in_process[rule], over_stdio.get(rule)) for rule in in_process
                 if over_stdio.get(rule) != in_process[rule]}
    assert not differing
    assert sum(1 for verdict, _ in in_process.values() if verdict == "pass") >= 140
