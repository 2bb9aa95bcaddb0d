"""Stdio runtimes that misbehave on purpose, for the runtime protocol's tests.

Run as ``python tests/stdio_runtime_fakes.py MODE``. Each mode answers
``hello`` correctly (unless the mode is about ``hello``) and then acts out one
way a runtime in another language can go wrong, or right, on ``execute``.
"""

from __future__ import annotations

import json
import subprocess
import sys

PROTOCOL = "memconform.runtime/1"
HELLO = {"protocol": PROTOCOL, "name": "fake", "version": "0", "profiles": ["save-policy"],
         "policies": ["message"], "hooks": None, "provides": []}


def say(obj: object) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def read() -> dict:
    line = sys.stdin.readline()
    if not line:
        raise SystemExit(0)
    found: dict = json.loads(line)
    return found


class Calls:
    def __init__(self) -> None:
        self.n = 0

    def __call__(self, method: str, **params: object) -> dict:
        self.n += 1
        say({"call": self.n, "method": method, "params": params})
        return read()


def execute(mode: str, request_id: int, script: dict) -> None:
    call = Calls()
    if mode == "not-json":
        sys.stdout.write("thinking...\n")
        sys.stdout.flush()
    elif mode == "unknown-call":
        call("filesystem.read", path="/etc/passwd")
    elif mode == "hang":
        for _ in sys.stdin:
            pass
    elif mode == "crash":
        print("the runtime fell over", file=sys.stderr)
        sys.stderr.flush()
        raise SystemExit(4)
    elif mode == "grandchild":
        sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        call("emit", name="spawned", data={"pid": sleeper.pid})
        for _ in sys.stdin:
            pass
    elif mode == "error-answer":
        say({"id": request_id, "error": {"kind": "internal", "message": "no model configured"}})
    elif mode == "refuse-config":
        say({"id": request_id, "error": {"kind": "configuration",
                                         "message": "history_window: must be 0 or more"}})
    elif mode == "past-script":
        call("model", component="agent", request="first")
        call("model", component="agent", request="second")  # never answered
        say({"id": request_id, "result": {"reached": "past the script"}})
    else:  # "ok": every kind of call, and what came back
        answers = {
            "model": call("model", component="agent", request="hi"),
            "failing_tool": call("tool", name="flaky", args={}, call_id="c1"),
            "id": call("ids.next", prefix="msg"),
            "now": call("clock.now"),
            "has": call("store.has", capability="errors"),
            "append": call("store.append", thread_id="t", batch=[_message("m1")]),
            "again": call("store.append", thread_id="t", batch=[_message("m1")]),
            "messages": call("store.messages", thread_id="t", limit=None,
                             include_uncommitted=False),
            "ledger": call("ledger"),
            "emit": call("emit", name="done", data={"n": 1}),
        }
        say({"id": request_id, "result": answers})


def _message(message_id: str) -> dict:
    return {"id": message_id, "role": "user", "text": "hello", "parts": [], "run_id": None,
            "round": None, "turn_id": None, "committed": True, "metadata": {}}


def main(mode: str) -> int:
    while True:
        request = read()
        if request["method"] == "hello":
            if mode == "bad-hello":
                say({"id": request["id"], "result": {**HELLO, "profiles": "save-policy"}})
            elif mode == "old-protocol":
                say({"id": request["id"], "result": {**HELLO, "protocol": "memconform.runtime/0"}})
            else:
                say({"id": request["id"], "result": HELLO})
        elif request["method"] == "execute":
            execute(mode, request["id"], request["params"]["script"])
        elif request["method"] == "close":
            say({"id": request["id"], "result": None})
            return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
