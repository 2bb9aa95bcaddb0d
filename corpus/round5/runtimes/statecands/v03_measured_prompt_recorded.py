"""v03: the commander's step record carries the prompt measured before summarizing.

The bug: the tracer captures "the input's prompt" at the point where the
package measures it against the threshold, and the commander's internal step
is filled from that capture. When the prompt is too long and history is
summarized, the commander is then sent a new, shorter prompt (summary + the
instruction), but its step record still shows the long pre-summary prompt and
its elements.

Why a team ships it: without a summary the two prompts are the same string, so
every trace looks right; only the summarizing path, exercised with long
histories, shows a record that is not what the model received.

Breaks CA-018 (the full prompt and input elements are not exactly what the
commander received).
"""

from __future__ import annotations

import copy

from corpus.round5.runtimes.statecands.base import CandidatesPackage, StateCandsRuntime


class MeasuredPromptPackage(CandidatesPackage):
    def should_summarize(self, prompt, memory):
        self._measured = prompt  # the tracer's "prompt of this input"
        return super().should_summarize(prompt, memory)

    def call(self, component, ctx, candidate, prompt):
        step, output = super().call(component, ctx, candidate, prompt)
        if component == "commander":
            # BUG: the record is filled from the measured prompt, not the one sent
            step["full_prompt"] = self._measured.text
            step["input_elements"] = copy.deepcopy(self._measured.elements)
        return step, output


class MeasuredPromptRuntime(StateCandsRuntime):
    package_class = MeasuredPromptPackage


def make() -> MeasuredPromptRuntime:
    return MeasuredPromptRuntime()
