Feature: Store error records and turn records are kept apart and exact
  Error records (document 000) and turn records (document 002) explain what
  happened; they are not conversation. They come back exactly and in order,
  per thread, and never show up among the messages.

  Troubleshooting: an error record among the messages means the store writes
  diagnostics into the transcript table; summed usage on a parent record means
  the store aggregates instead of keeping records as given.

  Rule: Error records never appear among the messages

    @ST-021 @errors
    Scenario: Store keeps error records out of the transcript
      Given the store claims the "errors" capability
      And store thread "A" holds 2 messages
      When an error record for run "r1" is recorded in store thread "A"
      Then plain reads of store thread "A" return "m1, m2"
      And store thread "A" holds exactly "m1, m2"

    @ST-022 @errors
    Scenario: Store returns a thread's error records exactly and in order
      Given the store claims the "errors" capability
      When an error record for run "r1" is recorded in store thread "A"
      And an error record for run "r9" is recorded in store thread "B"
      And an error record for run "r2" is recorded in store thread "A"
      Then the error records of store thread "A" are exactly those recorded there, in order
      And the error records of store thread "B" are exactly those recorded there, in order

  Rule: Turn records are kept exactly, child usage on the child

    @ST-023 @turn-records
    Scenario: Store keeps turn records exactly, child usage unchanged
      Given the store claims the "turn-records" capability
      When the turn records of a root turn with two child turns are appended for store thread "A"
      Then the turn records of store thread "A" come back exactly, in append order

    @ST-024 @turn-records
    Scenario: Store filters turn records by thread
      Given the store claims the "turn-records" capability
      When the turn records of a root turn with two child turns are appended for store thread "A"
      And the turn records of a root turn with two child turns are appended for store thread "B"
      Then the turn records of store thread "B" come back exactly, in append order
      And all turn records of this scenario come back, in append order
