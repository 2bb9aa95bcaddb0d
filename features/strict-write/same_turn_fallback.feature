Feature: Strict-write same-turn fallback with continueOnFailure
  By default a failing task ends the turn in ERROR; the digest and the
  `task_failed_<taskId>` action reach the next turn's behaviour rules. With
  `continueOnFailure` the remaining tasks run after the failure is recorded,
  so an output set or a later model task can answer in the same turn. A
  graceful-shutdown interrupt is never continued past.

  Troubleshooting: if the fallback text only appears one turn late, the
  runtime stopped the pipeline despite continueOnFailure, or injected the
  digest after the pipeline instead of at the failure.

  Background:
    Given a strict-write agent with the pipeline:
      | task              | kind     | writes                             |
      | behavior          | behavior |                                    |
      | ai.labs.httpcalls | tool     | output notes += "calling payments" |
      | ai.labs.llm       | llm      |                                    |
      | output            | output   |                                    |
    And strict write is enabled with onFailure "digest"

  Rule: continueOnFailure answers in the same turn

    @SW-026 @commit-flags
    Scenario: Strict-write continueOnFailure renders the fallback output in the same turn
      Given the strict-write continueOnFailure setting is on
      And the strict-write output set answers "task_failed_ai.labs.httpcalls" with "Sorry, payments are down."
      And the strict-write task "ai.labs.llm" succeeds on its next call
      And the strict-write task "ai.labs.httpcalls" fails on its next call with "HTTP 500"
      When the strict-write agent answers "pay my bill"
      Then the strict-write turn 1 ends in state "READY"
      And the strict-write task "ai.labs.llm" runs in turn 1
      And the strict-write reply of turn 1 is "ai.labs.llm answered\nSorry, payments are down."

    @SW-027 @commit-flags
    Scenario: Strict-write model task after a failed call sees the digest in the same turn
      Given the strict-write continueOnFailure setting is on
      And the strict-write task "ai.labs.httpcalls" fails on its next call with "HTTP 500 from the payment service"
      When the strict-write agent answers "pay my bill"
      Then in turn 1 the strict-write model "ai.labs.llm" sees "Task 'eddi://ai.labs.httpcalls' failed: HTTP 500 from the payment service"
      And in turn 1 the strict-write model "ai.labs.llm" does not see "calling payments"

    @SW-030 @commit-flags
    Scenario: Strict-write two failures in one turn keep both digests and both actions
      Given the strict-write continueOnFailure setting is on
      And the strict-write task "ai.labs.httpcalls" fails on its next call with "HTTP 500"
      And the strict-write task "ai.labs.llm" fails on its next call with "model overloaded"
      When the strict-write agent answers "pay my bill"
      Then the strict-write memory of turn 1 holds 2 digests
      And the strict-write actions of turn 1 are ["task_failed_ai.labs.httpcalls", "task_failed_ai.labs.llm"]

    @SW-007 @SW-008 @commit-flags @with-second-run
    Scenario: Strict-write continueOnFailure leaves the failed task's writes uncommitted after the turn ends
      Given the strict-write continueOnFailure setting is on
      And the strict-write task "ai.labs.httpcalls" fails on its next call with "HTTP 500"
      When the strict-write agent answers "pay my bill" and then "and now?"
      Then the strict-write turn 1 ends in state "READY"
      And everything the strict-write task "ai.labs.httpcalls" wrote in turn 1 is stored but uncommitted
      And the strict-write output "notes" of turn 1 is not visible

  Rule: a graceful shutdown is never continued past

    @SW-028 @commit-flags
    Scenario: Strict-write continueOnFailure stops at a graceful shutdown
      Given the strict-write continueOnFailure setting is on
      And the strict-write task "ai.labs.httpcalls" is interrupted by a graceful shutdown
      When the strict-write agent answers "pay my bill"
      Then the strict-write task "ai.labs.llm" does not run in turn 1
      And the strict-write turn 1 ends in state "ERROR"

  Rule: without continueOnFailure the next turn reacts

    @SW-015 @SW-029 @commit-flags @with-second-run
    Scenario: Strict-write failure action reaches the next turn's behaviour rules
      Given the strict-write behavior rule turns "task_failed_ai.labs.httpcalls" into "fallback_response"
      And the strict-write output set answers "fallback_response" with "Payments are unavailable, try later."
      And the strict-write task "ai.labs.httpcalls" fails on its next call with "HTTP 500"
      When the strict-write agent answers "pay my bill" and then "and now?"
      Then the strict-write turn 1 ends in state "ERROR"
      And the strict-write reply of turn 1 is empty
      And the strict-write task "ai.labs.llm" does not run in turn 1
      And the strict-write actions of turn 2 include "fallback_response"
      And in turn 2 the strict-write model "ai.labs.llm" sees "Task 'eddi://ai.labs.httpcalls' failed: HTTP 500"
      And the strict-write reply of turn 2 is "answer 1\nPayments are unavailable, try later."

  Rule: a failed model task runs again in the next turn

    @SW-037 @commit-flags @with-second-run
    Scenario: Strict-write model task that failed runs again in the turn after the failure
      Given the strict-write behavior rule turns "task_failed_ai.labs.llm" into "fallback_response"
      And the strict-write output set answers "fallback_response" with "Sorry, I can't answer right now."
      And the strict-write task "ai.labs.llm" fails on its next call with "model overloaded"
      When the strict-write agent answers "pay my bill" and then "and now?"
      Then the strict-write turn 1 ends in state "ERROR"
      And the strict-write actions of turn 2 include "fallback_response"
      And the strict-write model task "ai.labs.llm" is called again in turn 2
