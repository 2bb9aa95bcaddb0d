"""The fork server: a forked child sees what a fresh interpreter would see
(its arguments, folder, exact environment, time zone, temporary folder, only
the descriptors it was given), ends as an interpreter ends, and is killed,
timed out and waited for as a Popen child is; the switch and a broken server
fall back to starting an interpreter."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from memconform.harness import fresh_process
from memconform.harness.fork_server import ForkedProcess

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="forks on Linux only")

PROBE = """
import json, os, sys, tempfile, time
print(json.dumps({
    "argv": sys.argv[1:],
    "cwd": os.getcwd(),
    "env": dict(os.environ),
    "zone": time.strftime("%Z", time.localtime(0)),
    "tmp": tempfile.gettempdir(),
    "fds": sorted(int(n) for n in os.listdir("/proc/self/fd")),
    "main": __name__,
    "flags": [sys.flags.isolated, sys.flags.ignore_environment],
}))
"""


@pytest.fixture
def modules(tmp_path: Path) -> Path:
    folder = tmp_path / "mods"
    folder.mkdir()
    (folder / "probe.py").write_text(PROBE, encoding="utf-8")
    (folder / "exits.py").write_text("import sys\nsys.exit(int(sys.argv[1]))\n", encoding="utf-8")
    (folder / "raises.py").write_text("raise ValueError('from the child')\n", encoding="utf-8")
    (folder / "hangs.py").write_text(
        "import sys, time\nprint('up', flush=True)\ntime.sleep(60)\n", encoding="utf-8"
    )
    (folder / "echo.py").write_text(
        "import sys\nsys.stdout.write(sys.stdin.read().upper())\n", encoding="utf-8"
    )
    (folder / "at_exit.py").write_text(
        textwrap.dedent(
            """
            import atexit, os, sys, threading, time
            def late():
                time.sleep(0.05)
                os.write(1, b"thread\\n")
            threading.Thread(target=late).start()
            atexit.register(lambda: os.write(1, b"atexit\\n"))
            """
        ),
        encoding="utf-8",
    )
    (folder / "writes_fd.py").write_text(
        "import os, sys\nos.write(int(sys.argv[1]), b'through the passed descriptor')\n",
        encoding="utf-8",
    )
    return folder


def _path(modules: Path) -> list[str]:
    return [str(modules), *fresh_process.kit_import_path()]


def _start(modules: Path, module: str, *args: str, **kw: object) -> fresh_process.Process:
    kw.setdefault("env", fresh_process.fresh_environment())
    return fresh_process.start(module, *args, import_path=_path(modules), **kw)  # type: ignore[arg-type]


def _probe(modules: Path, tmp_path: Path, *, fork: bool, monkeypatch: pytest.MonkeyPatch) -> dict:
    monkeypatch.setenv(fresh_process.FORK_SERVER_ENV, "1" if fork else "0")
    work = tmp_path / ("fork" if fork else "plain")
    work.mkdir()
    env = fresh_process.fresh_environment(work, {"TZ": "Asia/Tokyo", "MEMCONFORM_X": "1"})
    proc = _start(modules, "probe", "a", "b c", env=env, cwd=work)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert isinstance(proc, ForkedProcess) is fork
    seen = json.loads(out)
    assert seen["cwd"] == str(work)
    assert seen["tmp"] == str(work)
    return seen


def test_a_forked_child_sees_what_a_fresh_interpreter_sees(
    modules: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    forked = _probe(modules, tmp_path, fork=True, monkeypatch=monkeypatch)
    plain = _probe(modules, tmp_path, fork=False, monkeypatch=monkeypatch)
    assert forked["argv"] == plain["argv"] == ["a", "b c"]
    assert forked["zone"] == plain["zone"] == "JST"
    assert forked["main"] == plain["main"] == "__main__"
    assert forked["flags"] == plain["flags"]
    for seen in (forked, plain):  # the working folder differs on purpose; nothing else may
        seen["env"].pop("TMPDIR")
    assert forked["env"] == plain["env"]
    assert forked["env"]["MEMCONFORM_X"] == "1"
    # 0, 1, 2 and the descriptor listdir itself opened: nothing of the server leaks
    assert len(forked["fds"]) == len(plain["fds"]) == 4


def test_exit_codes_tracebacks_and_the_interpreter_end(modules: Path) -> None:
    for code in (0, 3, 7):
        with _start(modules, "exits", str(code)) as proc:
            assert isinstance(proc, ForkedProcess)
            assert proc.wait(timeout=30) == code
    proc = _start(modules, "raises")
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 1
    assert "ValueError: from the child" in err
    proc = _start(modules, "at_exit")
    out, _ = proc.communicate(timeout=30)
    assert out.splitlines() == ["thread", "atexit"]  # threads joined, then atexit


def test_kill_timeout_and_kept_output(modules: Path) -> None:
    proc = _start(modules, "hangs")
    assert proc.stdout is not None
    assert proc.poll() is None
    with pytest.raises(subprocess.TimeoutExpired):
        proc.communicate(timeout=0.2)
    proc.kill()
    out, _ = proc.communicate()
    assert out == "up\n"  # what was read before the timeout is kept
    assert proc.returncode == -signal.SIGKILL
    proc.kill()  # a second kill of an ended child is harmless


def test_input_and_passed_descriptors(modules: Path) -> None:
    proc = _start(modules, "echo", stdin=subprocess.PIPE)
    out, _ = proc.communicate("hello", timeout=30)
    assert out == "HELLO"
    read, write = os.pipe()
    try:
        with _start(modules, "writes_fd", str(write), pass_fds=[write]) as proc:
            assert proc.wait(timeout=30) == 0
        os.close(write)
        write = -1
        assert os.read(read, 100) == b"through the passed descriptor"
    finally:
        os.close(read)
        if write >= 0:
            os.close(write)


def test_run_is_subprocess_run(modules: Path) -> None:
    env = fresh_process.fresh_environment()
    done = fresh_process.run("raises", env=env, timeout=30, import_path=_path(modules))
    assert done.returncode == 1
    assert "ValueError" in done.stderr
    assert done.stdout == ""
    with pytest.raises(subprocess.TimeoutExpired):
        fresh_process.run("hangs", env=env, timeout=0.3, import_path=_path(modules))


def test_the_switch_and_a_dead_server_fall_back(
    modules: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(fresh_process.FORK_SERVER_ENV, "0")
    with _start(modules, "exits", "0") as plain:
        assert isinstance(plain, subprocess.Popen)
    monkeypatch.delenv(fresh_process.FORK_SERVER_ENV)
    with _start(modules, "exits", "0") as first:
        assert isinstance(first, ForkedProcess)
    server = fresh_process._SERVERS[(os.getpid(), tuple(_path(modules)), ())]
    assert server is not None
    server._proc.kill()
    server._proc.wait()
    with _start(modules, "exits", "4") as again:
        assert isinstance(again, subprocess.Popen)
        assert again.wait(timeout=60) == 4


def test_a_preload_that_fails_falls_back(modules: Path) -> None:
    with fresh_process.start(
        "exits", "2", env=fresh_process.fresh_environment(), import_path=_path(modules),
        preload=("no_such_module_anywhere",),
    ) as proc:
        assert isinstance(proc, subprocess.Popen)
        assert proc.wait(timeout=60) == 2
