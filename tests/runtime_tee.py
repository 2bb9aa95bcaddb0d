"""Relay a stdio runtime's lines and keep a copy of both directions.

``python tests/runtime_tee.py LOG COMMAND...`` starts COMMAND and passes the
kit's lines to it and its lines back, appending each to LOG as
``{"from": "kit" | "runtime", "line": ...}``; the protocol's tests validate
that log against the JSON Schema.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading


def main() -> int:
    log_path, command = sys.argv[1], sys.argv[2:]
    child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert child.stdin is not None
    assert child.stdout is not None
    lock = threading.Lock()
    log = open(log_path, "a", encoding="utf-8")  # noqa: SIM115 - closed at exit

    def keep(side: str, line: str) -> None:
        with lock:
            log.write(json.dumps({"from": side, "line": line.rstrip("\n")}) + "\n")
            log.flush()

    def back() -> None:
        assert child.stdout is not None
        for line in child.stdout:
            keep("runtime", line)
            sys.stdout.write(line)
            sys.stdout.flush()

    relay = threading.Thread(target=back, daemon=True)
    relay.start()
    for line in sys.stdin:
        keep("kit", line)
        child.stdin.write(line)
        child.stdin.flush()
    child.stdin.close()
    relay.join(timeout=10)
    return child.wait()


if __name__ == "__main__":
    sys.exit(main())
