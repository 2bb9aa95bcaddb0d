Feature: Strict-write: a memory write the store refused fails the turn
  The kit hands the runtime a store that really refuses one append (it raises
  StoreError, as a real store does); nothing in the script tells the runtime.
  What the task wrote is not in memory, so the turn must not end as if it
  were: it ends in ERROR, whatever the strict-write settings.

  Troubleshooting: a turn that ends READY although the store refused a write
  swallowed the store's error (look for a bare except around the append).

  Background:
    Given a strict-write agent with the pipeline:
      | task   | kind   | writes                                            |
      | parser | write  | data intent = "weather"; output notes += "parsed" |
      | output | output |                                                   |

  Rule: a refused memory write ends the turn in ERROR

    @SW-033 @with-store-refusal
    Scenario: Strict-write off: a turn whose task write the store refused ends in ERROR
      Given the store refuses the strict-write agent's append number 2
      When the strict-write agent answers "What's the weather?"
      Then the strict-write turn 1 ends in state "ERROR" because the store refused a write

    @SW-033 @commit-flags @with-store-refusal
    Scenario: Strict-write digest mode: a turn whose task write the store refused ends in ERROR
      Given strict write is enabled with onFailure "digest"
      And the store refuses the strict-write agent's append number 2
      When the strict-write agent answers "What's the weather?"
      Then the strict-write turn 1 ends in state "ERROR" because the store refused a write

    @SW-033 @commit-flags @with-store-refusal
    Scenario: Strict-write digest mode with continueOnFailure: a turn whose task write the store refused ends in ERROR
      Given strict write is enabled with onFailure "digest"
      And the strict-write continueOnFailure setting is on
      And the store refuses the strict-write agent's append number 2
      When the strict-write agent answers "What's the weather?"
      Then the strict-write turn 1 ends in state "ERROR" because the store refused a write

    @SW-033 @with-store-refusal @with-streaming
    Scenario: Strict-write off: a streamed turn whose task write the store refused ends in ERROR
      Given the store refuses the strict-write agent's append number 2
      When the strict-write agent answers "What's the weather?" while streaming
      Then the strict-write turn 1 ends in state "ERROR" because the store refused a write
