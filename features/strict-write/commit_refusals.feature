Feature: Strict-write: a failed task whose writes the store refused to hide stops the turn
  Under strict write a failed task's writes are hidden from the model
  (`set_committed(..., false)`); `continueOnFailure` lets later tasks run only
  once that is done. The kit hands the runtime a store that really refuses
  every `set_committed` and `record_error` call (it raises StoreError, as a
  real store does); nothing in the script tells the runtime. The failed output
  is then still visible, so no later task may run over it: the turn stops
  there and ends in ERROR.

  Troubleshooting: a model task that runs after the refusal, or a turn that
  ends READY, swallowed the store's error around `set_committed`.

  Background:
    Given a strict-write agent with the pipeline:
      | task        | kind | writes                                            |
      | weather     | tool | data city = "Paris"; output notes += "looking up" |
      | ai.labs.llm | llm  |                                                   |

  Rule: a refused set_committed stops the turn in ERROR, even with continueOnFailure

    @SW-043 @commit-flags @with-store-refusal
    Scenario: Strict-write digest mode with continueOnFailure: the store refuses to hide a failed task's writes
      Given strict write is enabled with onFailure "digest"
      And the strict-write continueOnFailure setting is on
      And the strict-write task "weather" fails on its next call with "HTTP 503: Service Unavailable"
      And the store refuses every strict-write set_committed and record_error call
      When the strict-write agent answers "What's the weather?"
      Then the strict-write turn 1 stops at task "weather" because the store refused to hide its writes

    @SW-043 @commit-flags @with-store-refusal
    Scenario: Strict-write exclude_all mode with continueOnFailure: the store refuses to hide a failed task's writes
      Given strict write is enabled with onFailure "exclude_all"
      And the strict-write continueOnFailure setting is on
      And the strict-write task "weather" fails on its next call with "HTTP 503: Service Unavailable"
      And the store refuses every strict-write set_committed and record_error call
      When the strict-write agent answers "What's the weather?"
      Then the strict-write turn 1 stops at task "weather" because the store refused to hide its writes
