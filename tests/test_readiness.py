"""Waiting on a pipe whose descriptor is numbered past select()'s limit."""

from __future__ import annotations

import os
import resource

import pytest

from memconform.harness.readiness import readable


def test_a_descriptor_past_1024_is_waited_on_like_any_other() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 1200:
        pytest.skip(f"the descriptor limit here is {hard}")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 1200), hard))
    held = [os.open(os.devnull, os.O_RDONLY) for _ in range(1030)]
    read, write = os.pipe()
    try:
        assert read > 1024
        assert readable([read], 0) == []
        os.write(write, b"x")
        assert readable([read], 1.0) == [read]
        os.read(read, 1)
        os.close(write)
        write = -1
        assert readable([read], 1.0) == [read]  # end of file is readable, as select says
        assert os.read(read, 1) == b""
    finally:
        for fd in [*held, read, *([write] if write >= 0 else [])]:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
