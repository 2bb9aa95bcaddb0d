Feature: Store reads and writes hand over copies
  A runtime keeps using the objects it appended and the objects it read: it
  adds a key to a message's metadata, reuses a state value for the next step,
  edits a fact before showing it. None of that may reach what is stored. Each
  scenario changes every dict and list inside what was handed over or handed
  back (metadata, parts, error details, usage, state values, the returned
  list) and reads again.

  Troubleshooting: a failure here usually means the store keeps the caller's
  objects instead of copying them (an in-memory dict of the values given), or
  hands out its own objects from a cache instead of copies.

  Rule: Changing what was handed to the store changes nothing stored

    @ST-007
    Scenario: Store keeps its own copy of an appended message
      Given store thread "A" holds 2 messages
      When store thread "A" is appended a message with every field set, which the caller then changes
      Then store thread "A" holds exactly "m1, m2, full-1"

    @ST-007 @errors
    Scenario: Store keeps its own copy of an error record
      Given the store claims the "errors" capability
      When an error record for run "r1" is recorded in store thread "A", which the caller then changes
      Then the error records of store thread "A" are exactly those recorded there, in order

    @ST-007 @turn-records
    Scenario: Store keeps its own copy of turn records
      Given the store claims the "turn-records" capability
      When the turn records of a root turn with two child turns are appended for store thread "A", which the caller then changes
      Then the turn records of store thread "A" come back exactly, in append order

    @ST-007 @state
    Scenario: Store keeps its own copy of a state value
      Given the store claims the "state" capability
      When state key "plan" of store job "J" is written expecting no version, which the caller then changes
      Then state key "plan" of store job "J" reads version 1 with the last value written

    @ST-007 @knowledge
    Scenario: Store keeps its own copy of a fact
      Given the store claims the "knowledge" capability
      When an untrusted copied fact about "deploy-target" is stored in store scope "U", which the caller then changes
      Then the fact about "deploy-target" in store scope "U" reads back with every provenance field

  Rule: Changing what the store handed back changes nothing stored

    @ST-007 @errors
    Scenario: Store error records read cannot be changed through what was returned
      Given the store claims the "errors" capability
      When an error record for run "r1" is recorded in store thread "A"
      And the caller changes the error records read from store thread "A"
      Then the error records of store thread "A" are exactly those recorded there, in order

    @ST-007 @turn-records
    Scenario: Store turn records read cannot be changed through what was returned
      Given the store claims the "turn-records" capability
      When the turn records of a root turn with two child turns are appended for store thread "A"
      And the caller changes the turn records read for store thread "A"
      Then the turn records of store thread "A" come back exactly, in append order
      And all turn records of this scenario come back, in append order

    @ST-007 @state
    Scenario: Store state read cannot be changed through what was returned
      Given the store claims the "state" capability
      When state key "plan" of store job "J" is written expecting no version
      And the caller changes the state read from key "plan" of store job "J"
      Then state key "plan" of store job "J" reads version 1 with the last value written

    @ST-007 @knowledge
    Scenario: Store facts read cannot be changed through what was returned
      Given the store claims the "knowledge" capability
      When an untrusted copied fact about "deploy-target" is stored in store scope "U"
      And the caller changes the facts read from store scope "U"
      Then the fact about "deploy-target" in store scope "U" reads back with every provenance field
