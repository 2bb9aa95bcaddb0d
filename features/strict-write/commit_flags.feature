Feature: Strict-write commit flags decide what the model sees
  Every message the runtime writes carries a committed flag. Committed data is
  in the model's view; uncommitted data stays stored, in its place, but is
  left out of the model's view. The store keeps the flag and reads it back as
  set; the runtime builds every model call from committed data, outputs that
  were not rolled back, and digests.

  Troubleshooting: a store that forgets the flag on read, or ignores
  set_committed, lets a failed task's raw error back into the model's view.

  Background:
    Given a strict-write agent with the pipeline:
      | task        | kind | writes                                            |
      | weather     | tool | data city = "Paris"; output notes += "looking up" |
      | ai.labs.llm | llm  |                                                   |

  Rule: the store keeps the flag and hides uncommitted data from the default read

    @SW-004 @SW-005 @commit-flags
    Scenario: Strict-write store keeps a failed task's raw error stored but uncommitted
      Given strict write is enabled with onFailure "digest"
      And the strict-write task "weather" fails on its next call with "socket closed"
      When the strict-write agent answers "What's the weather?"
      Then the strict-write store reads back the raw error of "weather" in turn 1 as uncommitted
      And everything the strict-write task "weather" wrote in turn 1 is stored but uncommitted

  Rule: the model's view holds committed data only

    @SW-006 @SW-005 @commit-flags @with-second-run
    Scenario: Strict-write model view leaves out uncommitted data
      Given strict write is enabled with onFailure "exclude_all"
      And the strict-write task "weather" fails on its next call with "socket closed"
      When the strict-write agent answers "What's the weather?" and then "Again?"
      Then in turn 2 the strict-write model "ai.labs.llm" does not see "socket closed"
      And in turn 2 the strict-write model "ai.labs.llm" does not see "weather:error"
      And in turn 2 the strict-write model "ai.labs.llm" sees "What's the weather?"

    @SW-006 @with-second-run
    Scenario: Strict-write model view holds committed data of earlier steps
      Given the strict-write agent has no memory policy
      When the strict-write agent answers "What's the weather?" and then "Again?"
      Then in turn 2 the strict-write model "ai.labs.llm" sees "looking up"
      And in turn 2 the strict-write model "ai.labs.llm" sees "Paris"
