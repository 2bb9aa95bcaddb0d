"""Evidence excerpts (:mod:`memconform.excerpt`): lengths, the first differing
position and a short excerpt, never a whole long value."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from memconform.excerpt import (
    CONTEXT,
    LIMIT,
    bounded,
    clip,
    contrast,
    difference,
    first_difference,
    window,
)
from memconform.reports.checks import Mismatch
from memconform.steps.common import expect_equal
from memconform.values import Message
from tests.reports.factory import HOSTILE

_FEW_HUNDRED = 800
"""The most characters one side of a difference may take."""


@pytest.mark.parametrize(
    ("a", "b", "at"),
    [
        ("abc", "abc", None),
        ("", "", None),
        ("xbc", "abc", 0),
        ("", "a", 0),
        ("abc", "abd", 2),
        ("abc", "ab", 2),
        ("a" * 10_000, "a" * 9_999 + "b", 9_999),
        ("a" * 5_000 + "x" + "a" * 5_000, "a" * 10_001, 5_000),
        ([1, 2, 3], [1, 2, 4], 2),
        ([1, 2], [1, True], 1),
        ((1,), (1, 2), 1),
    ],
)
def test_first_difference(a: Any, b: Any, at: int | None) -> None:
    assert first_difference(a, b) == at
    assert first_difference(b, a) == at


def test_first_difference_of_sixteen_mebibytes_is_found() -> None:
    big = "é" * (16 * 1024 * 1024)
    assert first_difference(big, big[:1000]) == 1000
    assert first_difference(big, big[:-1] + "e") == len(big) - 1


def test_clip_keeps_short_text_and_says_the_length_of_long_text() -> None:
    assert clip("short", 10) == "short"
    assert clip("x" * 10, 10) == "x" * 10
    clipped = clip("x" * 100_000, 100)
    assert len(clipped) <= 100
    assert clipped.startswith("xxx")
    assert clipped.endswith("… [100,000 characters]")


def test_contrast_with_an_equal_prefix_names_both_lengths_and_the_position() -> None:
    expected, observed = contrast("a" * 1_048_576, "a" * 1_000)
    assert expected.startswith("1,048,576 characters; first difference at 1,000: …'")
    assert observed.startswith("1,000 characters; first difference at 1,000: …'")
    assert observed.endswith(" + ''")  # the observed text ends where they differ
    assert max(len(expected), len(observed)) < _FEW_HUNDRED


def test_contrast_at_the_start_and_at_the_end() -> None:
    expected, observed = contrast("x" + "a" * 9_999, "y" + "a" * 9_999)
    assert "first difference at 0: '' + 'x" in expected
    assert "first difference at 0: '' + 'y" in observed
    expected, observed = contrast("a" * 9_999 + "x", "a" * 9_999 + "y")
    assert expected.endswith(f"first difference at 9,999: …'{'a' * CONTEXT}' + 'x'")
    assert observed.endswith(f"first difference at 9,999: …'{'a' * CONTEXT}' + 'y'")


def test_contrast_of_equal_texts_says_so() -> None:
    expected, observed = contrast("a" * 5_000, "a" * 5_000)
    assert expected == observed
    assert "5,000 characters, the same on both sides" in expected


def test_window_escapes_control_characters_and_leaves_markup_to_the_renderer() -> None:
    shown = window(HOSTILE, 0, context=len(HOSTILE))
    assert shown.isprintable()
    for escaped in ("\\x00", "\\x1b", "\\ud800"):
        assert escaped in shown
    assert "<script>" in shown  # escaped by each renderer, not here


def test_difference_names_the_path_to_the_differing_text() -> None:
    sent = [Message(id="m1", role="user", text="a" * 20_000),
            Message(id="m2", role="user", text="b" * 20_000)]
    kept = [sent[0], dataclasses.replace(sent[1], text="b" * 1_000)]
    expected, observed = difference(sent, kept)
    assert expected.startswith("at [1].text: 20,000 characters; first difference at 1,000: ")
    assert observed.startswith("at [1].text: 1,000 characters; first difference at 1,000: ")


def test_difference_of_lists_of_different_length_and_of_other_values() -> None:
    expected, observed = difference(["a", "b", "c"], ["a", "b"])
    assert expected == "3 items; first difference at item 2: 'c'"
    assert observed == "2 items; first difference at item 2: none here"
    assert difference({"k": [1, 2]}, {"k": [1, 3]}) == ("at ['k'][1]: 2", "at ['k'][1]: 3")
    assert difference(1, True) == ("1", "True")
    assert difference(None, "x" * 100_000)[1].startswith("'xxx")
    assert len(difference(None, "x" * 100_000)[1]) < _FEW_HUNDRED
    assert difference([1], (1,)) == ("[1]", "(1,)")


def test_difference_of_values_whose_repr_or_equality_raises() -> None:
    class Odd:
        def __repr__(self) -> str:
            raise RuntimeError("no repr")

        def __eq__(self, other: object) -> bool:
            raise RuntimeError("no eq")

        __hash__ = object.__hash__

    expected, observed = difference([Odd()], [Odd()])
    assert expected == observed == "at [0]: <Odd>"


def test_bounded_clips_texts_and_cuts_lists() -> None:
    data = {"args": ["t", [{"text": "x" * 100_000}] * 200], "k" * 1_000: 1}
    out = bounded(data, text=100, items=50)
    assert out["args"][1][0]["text"].endswith("… [100,000 characters]")
    assert len(out["args"][1]) == 51
    assert out["args"][1][-1] == "… 150 more items"
    assert all(len(k) <= 100 for k in out)
    assert bounded({"a": [1, None, True, 1.5, "x"]}) == {"a": [1, None, True, 1.5, "x"]}


def test_expect_equal_bounds_long_evidence_and_keeps_short_evidence_whole() -> None:
    with pytest.raises(Mismatch) as short:
        expect_equal("the text read back", ["abc"], ["ab"])
    assert (short.value.expected, short.value.observed) == ("['abc']", "['ab']")
    with pytest.raises(Mismatch) as long:
        expect_equal("the text read back", ["a" * 16_777_216], ["a" * 1_000])
    assert long.value.expected.startswith(
        "at [0]: 16,777,216 characters; first difference at 1,000: ")
    assert long.value.observed.startswith("at [0]: 1,000 characters; first difference at 1,000: ")
    assert len(str(long.value)) < 2 * _FEW_HUNDRED


def test_a_mismatch_raised_with_long_text_is_bounded_too() -> None:
    failure = Mismatch("w" * 100_000, "a" * 100_000, "a" * 99_999 + "b")
    assert failure.expected.startswith("100,000 characters; first difference at 99,999: ")
    assert failure.observed.startswith("100,000 characters; first difference at 99,999: ")
    assert len(failure.what) <= LIMIT
    assert len(str(failure)) < LIMIT + 2 * _FEW_HUNDRED
    kept = Mismatch("w", "e" * LIMIT, "o")
    assert (kept.expected, kept.observed) == ("e" * LIMIT, "o")
