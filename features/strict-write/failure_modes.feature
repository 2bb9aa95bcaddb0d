Feature: Strict-write failure modes hide a failed task's output
  With strict write enabled, a lifecycle task that fails must not leave its raw
  output in front of the model. In `digest` and `exclude_all` modes everything
  the task wrote in that step is marked uncommitted (kept in the store, out of
  the model's view) and its conversation output is rolled back, down to single
  appended items, in-place changes and removals. `digest` then injects a short
  error digest; every mode emits `task_failed_<taskId>` for behaviour rules.

  Troubleshooting: if hidden data shows up in the model's view, check that the
  runtime calls set_committed on every message the failed task wrote (not only
  on new keys) and builds the view from the default, committed-only read.

  Background:
    Given a strict-write agent with the pipeline:
      | task        | kind     | writes                                                                                                                                                           |
      | parser      | write    | data intent = "weather"; output notes += "parsed"; output draft += "first draft"                                                                                 |
      | behavior    | behavior |                                                                                                                                                                  |
      | weather     | tool     | data city = "Paris"; data intent ~ "forecast"; output notes += "looking up"; output notes[0] ~ "parsed and edited"; output forecast += "pending"; output draft - |
      | ai.labs.llm | llm      | output notes += "thinking"                                                                                                                                       |
      | output      | output   |                                                                                                                                                                  |

  Rule: digest and exclude_all uncommit what the failed task wrote and roll back its output

    @SW-007 @SW-008 @SW-010 @SW-015 @commit-flags
    Scenario Outline: Strict-write <mode> mode hides everything the failing <task> task wrote
      Given strict write is enabled with onFailure "<mode>"
      And the strict-write task "<task>" fails on its next call with "upstream said no"
      When the strict-write agent answers "What's the weather?"
      Then everything the strict-write task "<task>" wrote in turn 1 is stored but uncommitted
      And everything the strict-write task "parser" wrote in turn 1 is stored and committed
      And the strict-write model-visible memory does not contain "LifecycleException: upstream said no"
      And the strict-write actions of turn 1 include "task_failed_<task>"
      And the strict-write task "output" does not run in turn 1
      And the strict-write turn 1 ends in state "ERROR"
      And the strict-write reply of turn 1 is empty

      Examples: digest, by failure point
        | mode   | task        |
        | digest | weather     |
        | digest | ai.labs.llm |

      Examples: exclude_all, by failure point
        | mode        | task        |
        | exclude_all | weather     |
        | exclude_all | ai.labs.llm |

    @SW-007 @SW-008 @commit-flags
    Scenario Outline: Strict-write <mode> mode restores the memory the earlier task left
      Given strict write is enabled with onFailure "<mode>"
      And the strict-write task "weather" fails on its next call with "HTTP 503: Service Unavailable"
      When the strict-write agent answers "What's the weather?"
      Then the strict-write model-visible memory of turn 1, digests aside, is:
        | kind   | key    | value           |
        | data   | intent | "weather"       |
        | output | notes  | ["parsed"]      |
        | output | draft  | ["first draft"] |
      And the strict-write data "city" of turn 1 is not visible
      And the strict-write output "forecast" of turn 1 is not visible

      Examples: hiding modes
        | mode        |
        | digest      |
        | exclude_all |

  Rule: digest mode injects a digest after the rollback

    @SW-009 @SW-011 @golden @commit-flags @with-second-run
    Scenario: Strict-write digest mode stores a committed digest the next model call sees
      Given strict write is enabled with onFailure "digest"
      And the strict-write task "weather" fails on its next call with "HTTP 503: Service Unavailable"
      When the strict-write agent answers "What's the weather?" and then "Try again?"
      Then the strict-write memory of turn 1 holds the digest for "weather"
      And the strict-write caller gets one task error for "weather" in turn 1
      And in turn 2 the strict-write model "ai.labs.llm" sees "Task 'eddi://weather' failed: HTTP 503: Service Unavailable"
      And in turn 2 the strict-write model "ai.labs.llm" does not see "LifecycleException"

    @SW-011 @SW-010 @commit-flags
    Scenario: Strict-write digest and action name the task by its bare id
      Given strict write is enabled with onFailure "digest"
      And the strict-write task "ai.labs.llm" fails on its next call with "model 'x' not found"
      When the strict-write agent answers "hello"
      Then the strict-write caller gets one task error for "ai.labs.llm" in turn 1
      And the strict-write memory of turn 1 holds the digest for "ai.labs.llm"
      And the strict-write actions of turn 1 include "task_failed_ai.labs.llm"

  Rule: exclude_all tells nobody

    @SW-012 @commit-flags @with-streaming
    Scenario: Strict-write exclude_all mode leaves no digest and tells the caller nothing
      Given strict write is enabled with onFailure "exclude_all"
      And the strict-write task "weather" fails on its next call with "HTTP 503: Service Unavailable"
      When the strict-write agent answers "What's the weather?" while streaming
      Then the strict-write memory of turn 1 holds no digest
      And the strict-write caller gets no task error in turn 1
      And the strict-write stream of turn 1 has no task_failed event
      And the strict-write model-visible memory does not contain "HTTP 503"

  Rule: keep_all keeps the output and still emits the action

    @SW-013 @SW-010 @commit-flags @with-second-run
    Scenario: Strict-write keep_all mode keeps the failed output committed and visible
      Given strict write is enabled with onFailure "keep_all"
      And the strict-write task "weather" fails on its next call with "HTTP 503: Service Unavailable"
      When the strict-write agent answers "What's the weather?" and then "Try again?"
      Then everything the strict-write task "weather" wrote in turn 1 is stored and committed
      And the strict-write model-visible memory of turn 1, digests aside, is:
        | kind   | key           | value                                               |
        | data   | intent        | "forecast"                                          |
        | data   | city          | "Paris"                                             |
        | data   | weather:error | "LifecycleException: HTTP 503: Service Unavailable" |
        | output | notes         | ["parsed and edited", "looking up"]                 |
        | output | forecast      | ["pending"]                                         |
      And the strict-write actions of turn 1 include "task_failed_weather"
      And the strict-write memory of turn 1 holds no digest
      And in turn 2 the strict-write model "ai.labs.llm" sees "HTTP 503: Service Unavailable"
