"""Digest 1 MB of realistic log text and 1 MB of adversarial text; print the times.

Targets: each under 0.5 s of CPU time (the best of three rounds, so a busy machine
does not skew it) on the reference machine (2 cores); the best wall time is
printed beside it. The realistic text is a
seeded mix of what failing agents log: timestamped lines with logger names,
``key=value`` fields (a few of them secrets), provider JSON error bodies, URLs
with and without credentials, Bearer and ``sk-`` keys, Java and Python stack
traces. The adversarial text is the inputs that make backtracking expressions
take minutes: repeated dots (``a.a.a.…``), nested brackets and braces, JSON keys
that never close, and long key-like runs (``tokentoken…``, ``password=password=…``).
Each adversarial shape is also timed alone, as are two shapes that are slow by
their number of matches rather than by backtracking (a secret-named key every
few bytes): linear too, at a higher cost per byte; they are printed without a
target.
Run: ``.venv/bin/python bench/digest_bench.py``. Not a timed test: nothing here
fails on the figures; it only says whether the targets were met.
"""

from __future__ import annotations

import random
import sys
import time
from collections.abc import Callable

from memconform.simulator.digest import digest_text

TARGET_SECONDS = 0.5
ROUNDS = 3
SIZE = 1_000_000


def realistic_log(size: int = SIZE, seed: int = 7) -> str:
    """``size`` characters of seeded, realistic failure logs."""
    rng = random.Random(seed)
    words = ("request", "upstream", "timeout", "retry", "model", "tool", "weather", "quota",
             "session", "billing", "invoice", "cache", "worker", "conversation", "step")
    loggers = ("ai.labs.eddi.engine.lifecycle.internal.LifecycleManager",
               "ai.labs.eddi.modules.httpcalls.impl.HttpCallsTask",
               "agent.tools.weather", "httpx", "botocore.endpoint", "psycopg.pool")

    def token(n: int) -> str:
        return "".join(rng.choice("ABCDEFGHJKLMNPQRSTUVWXYZabcdefghjkmnpqrstuvwxyz23456789")
                       for _ in range(n))

    def line() -> str:
        kind = rng.randrange(12)
        stamp = (f"2026-11-30T12:{rng.randrange(60):02d}:{rng.randrange(60):02d}"
                 f".{rng.randrange(1000):03d}Z")
        head = f"{stamp} {rng.choice(('INFO', 'WARN', 'ERROR'))} [{rng.choice(loggers)}]"
        prose = " ".join(rng.choice(words) for _ in range(rng.randrange(4, 12)))
        if kind == 0:
            return (f"{head} call failed: {{\"error\": {{\"message\": \"{prose}\", "
                    f"\"type\": \"invalid_request_error\", \"code\": \"{rng.choice(words)}\"}}}}")
        if kind == 1:
            return (f"{head} GET https://api.example.com/v1/{rng.choice(words)}"
                    f"?id={rng.randrange(10**6)} returned 503")
        if kind == 2:
            return (f"{head} connect postgresql://app:{token(12)}@db.internal:5432/main "
                    f"failed: {prose}")
        if kind == 3:
            return f"{head} Authorization: Bearer {token(40)} rejected: {prose}"
        if kind == 4:
            return f"{head} invalid key sk-proj-{token(32)} for {prose}"
        if kind == 5:
            return (f"{head} request_id={token(16)} user=bot{rng.randrange(100)} "
                    f"api_key={token(20)} elapsed_ms={rng.randrange(5000)} status=401")
        if kind == 6:
            return ("java.net.ConnectException: Connection refused\n"
                    "\tat java.base/sun.nio.ch.Net.pollConnect(Native Method)\n"
                    "\tat ai.labs.eddi.modules.httpcalls.impl.HttpCallsTask"
                    ".execute(HttpCallsTask.java:212)\n"
                    "\t... 12 more")
        if kind == 7:
            return ("Traceback (most recent call last):\n"
                    '  File "/srv/agent/tools/weather.py", line 41, in fetch\n'
                    "    response = session.get(endpoint, timeout=5)\n"
                    f"requests.exceptions.ConnectionError: {prose}")
        if kind == 8:
            return (f"{head} {{\"user\": \"bot\", \"password\": \"{token(14)}\", "
                    f"\"step\": {rng.randrange(99)}}}")
        if kind == 9:
            return (f"{head} max_tokens={rng.randrange(10**8)} "
                    f"prompt_tokens={rng.randrange(10**5)} {prose}")
        return f"{head} {prose}"

    parts: list[str] = []
    total = 0
    while total < size:
        piece = line() + "\n"
        parts.append(piece)
        total += len(piece)
    return "".join(parts)[:size]


ADVERSARIAL_SHAPES: dict[str, str] = {
    "repeated dots": "a." * (SIZE // 2),
    "nested brackets": "[" * SIZE,
    "nested braces": "{" * SIZE,
    "unclosed JSON keys": '{"a":' * (SIZE // 5),
    "key-like run": "token" * (SIZE // 5),
    "key=key=key run": "password=" * (SIZE // 9),
    "backslashes": "\\" * SIZE,
}

MANY_MATCHES: dict[str, str] = {
    "a short secret-named key every 11 bytes": "password=x " * (SIZE // 11),
    "user:password@host every 6 bytes": "a:b@c " * (SIZE // 6),
}


def adversarial(size: int = SIZE) -> str:
    """Repeated dots, nested brackets and long key-like runs, a third of each."""
    third = size // 3
    return ("a." * (third // 2) + "[" * third + "token" * (third // 5)).ljust(size, "{")


def best_seconds(work: Callable[[], object]) -> tuple[float, float]:
    """The best CPU time and the best wall time of :data:`ROUNDS` runs."""
    cpu = wall = float("inf")
    for _ in range(ROUNDS):
        started_cpu, started_wall = time.process_time(), time.perf_counter()
        work()
        cpu = min(cpu, time.process_time() - started_cpu)
        wall = min(wall, time.perf_counter() - started_wall)
    return cpu, wall


def digest(text: str) -> Callable[[], object]:
    return lambda: digest_text("ai.labs.llm", {"type": "LifecycleException", "message": text})


def main() -> int:
    rows: list[tuple[str, tuple[float, float], bool]] = []
    targeted = [("realistic log text, 1 MB", realistic_log()),
                ("adversarial text, 1 MB", adversarial())]
    targeted += [(f"  {name}, 1 MB", text) for name, text in ADVERSARIAL_SHAPES.items()]
    for name, text in targeted:
        rows.append((name, best_seconds(digest(text)), True))
    for name, text in MANY_MATCHES.items():
        rows.append((f"  {name}, 1 MB", best_seconds(digest(text)), False))
    print(f"{'input':50} {'CPU s':>7} {'wall s':>7}  CPU target < {TARGET_SECONDS} s")
    missed = False
    for name, (cpu, wall), has_target in rows:
        verdict = ("met" if cpu < TARGET_SECONDS else "MISSED") if has_target else "-"
        missed = missed or verdict == "MISSED"
        print(f"{name:50} {cpu:7.3f} {wall:7.3f}  {verdict}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
