"""Stopping the kit's own test suite with SIGINT or SIGTERM sent to pytest
alone stops every process the session started (:mod:`tests.interruption`)."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.interruption import descendants

ROOT = Path(__file__).resolve().parent.parent


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


def test_descendants_are_read_through_every_generation(tmp_path: Path) -> None:
    for pid, parent, name in [(10, 1, "pytest"), (11, 10, "python (w)"), (12, 10, "x) y"),
                              (13, 11, "sleep"), (14, 1, "other"), (15, 14, "deeper")]:
        (tmp_path / str(pid)).mkdir()
        (tmp_path / str(pid) / "stat").write_text(f"{pid} ({name}) S {parent} 1 1 0\n")
    (tmp_path / "self").mkdir()
    assert descendants(10, tmp_path) == [11, 12, 13]
    assert descendants(13, tmp_path) == []
    assert descendants(10, tmp_path, depth=1) == [11, 12]


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/stat").is_file(), reason="needs /proc (Linux)")
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_to_pytest_alone_stops_its_workers_and_their_children(
    tmp_path: Path, sig: signal.Signals
) -> None:
    (tmp_path / "test_long.py").write_text(
        "import subprocess, pytest\n"
        "@pytest.mark.parametrize('n', range(6))\n"
        "def test_long(n):\n"
        # a grandchild in a session of its own, as a `memconform run` below
        # starts its pytest: killing its parent leaves it running
        "    subprocess.run(['sh', '-c', 'setsid sleep 120 & wait'])\n"
    )
    controller = subprocess.Popen(
        [sys.executable, "-m", "pytest", "-n", "2", "-q", "-p", "no:cacheprovider",
         "-p", "tests.interruption", "--rootdir", str(tmp_path), str(tmp_path)],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    try:
        below: list[int] = []
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # two workers, each in a test's sleep
            below = descendants(controller.pid)
            sleeping = [p for p in below if Path(f"/proc/{p}/cmdline").read_bytes().startswith(
                b"sleep\0")] if below else []
            if len(sleeping) == 2:
                break
            time.sleep(0.2)
        else:
            pytest.fail(f"the workers never reached their tests: {below}")
        controller.send_signal(sig)
        out, _ = controller.communicate(timeout=30)
        left = []
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            left = [pid for pid in below if _alive(pid)]
            if not left:
                break
            time.sleep(0.2)
        assert left == [], f"still running after pytest stopped: {left}\n{out[-2000:]}"
        assert "passed" not in out.splitlines()[-1]
    finally:
        if controller.poll() is None:
            controller.kill()
            controller.communicate()
