"""Deliberately broken stdio stores, for the adapter's failure tests.

Run as ``python tests/stdio_fakes.py MODE``. Each mode answers ``hello``
correctly (unless the mode is about ``hello``) and then breaks the protocol
in one way on the first store request. Nothing here sleeps: a store that
"never answers" just keeps reading its input until it is killed.
"""

from __future__ import annotations

import json
import sys

HELLO = {
    "protocol": "memconform.stdio/1",
    "name": "broken",
    "version": "0",
    "capabilities": ["errors"],
}


def say(obj: object) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def never_answer() -> None:
    for _ in sys.stdin:
        pass


def main(mode: str) -> int:
    if mode == "exit-at-once":
        print("the fake store gives up before saying anything", file=sys.stderr)
        return 3
    if mode == "silent-hello":
        never_answer()
        return 0
    if mode == "chatty":
        sys.stdout.write("starting up...\n")
    hello = json.loads(sys.stdin.readline())
    if mode == "wrong-protocol":
        say({"id": hello["id"], "result": {**HELLO, "protocol": "other/9"}})
    elif mode == "bad-capabilities":
        say({"id": hello["id"], "result": {**HELLO, "capabilities": "errors"}})
    elif mode == "unknown-hook":
        say({"id": hello["id"], "result": {**HELLO, "hooks": ["rewind"]}})
    else:
        say({"id": hello["id"], "result": HELLO})
    request = json.loads(sys.stdin.readline())
    rid = request["id"]
    if mode == "die":
        print("fake store crashed on purpose", file=sys.stderr)
        return 5
    if mode == "garbage":
        sys.stdout.write("this is not json\n")
        sys.stdout.flush()
    elif mode == "wrong-id":
        say({"id": rid + 100, "result": None})
    elif mode == "never-answers":
        never_answer()
        return 0
    elif mode == "bad-shape":
        say({"id": rid, "result": [{"id": 1, "role": "user"}]})
    elif mode == "not-a-list":
        say({"id": rid, "result": {"messages": []}})
    elif mode == "both":
        say({"id": rid, "result": None, "error": {"kind": "store", "message": "x"}})
    elif mode == "internal":
        say({"id": rid, "error": {"kind": "internal", "message": "NullPointerException"}})
    elif mode == "unknown-kind":
        say({"id": rid, "error": {"kind": "weird", "message": "?"}})
    elif mode == "not-null":
        say({"id": rid, "result": "ok"})
    elif mode == "refuse":
        say({"id": rid, "error": {"kind": "store", "message": "disk full"}})
        say({"id": rid + 1, "result": []})
    return answer_close_only()


def answer_close_only() -> int:
    """After the misbehaviour, say nothing more except to a ``close``."""
    for line in sys.stdin:
        request = json.loads(line)
        if request.get("method") == "close":
            say({"id": request["id"], "result": None})
            return 0
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
