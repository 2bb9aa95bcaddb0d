"""The property checks of the conformance suite, run against the default store."""

from memconform.steps.generated_checks import (
    test_generated_candidates_answer_like_the_reference,
    test_generated_runs_persist_like_the_reference,
    test_keyed_data_answers_like_the_reference,
    test_the_legal_space_answers_like_the_reference,
    test_transcript_answers_like_the_reference,
)

__all__ = [
    "test_generated_candidates_answer_like_the_reference",
    "test_generated_runs_persist_like_the_reference",
    "test_keyed_data_answers_like_the_reference",
    "test_the_legal_space_answers_like_the_reference",
    "test_transcript_answers_like_the_reference",
]
