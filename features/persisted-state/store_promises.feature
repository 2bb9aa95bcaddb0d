Feature: Persisted state: what a store owes working state and durable knowledge
  These are the store's promises behind document 004: compare-and-set on
  working state, one fact per subject, provenance kept exactly, deletion that
  deletes, scopes that never mix, and data that outlives the process.

  Troubleshooting: every check here calls the store directly through the
  recording proxy; the timeline in the failure shows each call and its answer.

  Rule: working state is compare-and-set

    @PS-026 @state
    Scenario Outline: A working-state write with a stale version changes nothing
      Given the persisted-state store declares "state"
      When the state key "plan" is written as {"step": 1} expecting no version
      And the state key "plan" is written as {"step": 2} expecting version 1
      And the state key "plan" is written as {"step": 3} expecting <stale>
      Then the last state write was refused with a conflict
      And the state key "plan" reads {"step": 2} at version 2

      Examples: stale versions
        | stale      |
        | version 1  |
        | version 3  |
        | no version |

  Rule: facts are keyed by subject

    @PS-027 @knowledge
    Scenario: A stored durable fact is replaced by a newer fact about the same subject
      Given the persisted-state store declares "knowledge"
      When the fact "db.version" is put directly with the statement "The database is version 14"
      And the fact "db.version" is put directly with the statement "The database is version 16"
      Then the store returns only "The database is version 16" for "db.version"

  Rule: provenance is kept exactly

    @PS-028 @knowledge
    Scenario: A stored durable fact keeps every provenance field exactly
      Given the persisted-state store declares "knowledge"
      When a fact is put directly with the fields:
        | field      | value                                |
        | subject    | café.hours                           |
        | statement  | Le café ouvre à 7 h — fermé le lundi |
        | writer     | agent:runner-7                       |
        | source     | tool:web:café.example                |
        | evidence   | page fetched, «horaires» section     |
        | written_at | 2026-01-02T03:04:05Z                 |
        | kind       | observation                          |
        | trust      | untrusted                            |
        | origin     | copied                               |
        | recheck_at | 2026-04-02T03:04:05Z                 |
      Then the fact "café.hours" reads back with exactly those fields

  Rule: forget deletes

    @PS-029 @knowledge
    Scenario: A forgotten durable fact is gone and a second forget finds nothing
      Given the persisted-state store declares "knowledge"
      When the fact "old.host" is put directly with the statement "The build host is ci-3"
      And the fact "old.host" is forgotten directly
      Then forget answered true
      And the store returns no fact for "old.host"
      When the fact "old.host" is forgotten directly
      Then forget answered false

  Rule: scopes never mix

    @PS-030 @knowledge
    Scenario: Durable facts and working state of one scope stay out of another scope
      Given the persisted-state store declares "knowledge"
      When the fact "shared.name" is put directly in scope "left" with the statement "left side"
      And the fact "shared.name" is put directly in scope "right" with the statement "right side"
      And the fact "shared.name" is forgotten directly in scope "right"
      Then scope "left" returns only "left side" for "shared.name"
      And scope "right" holds no facts
      And working state written in scope "left" is not visible in scope "right"

  Rule: stored data outlives the process

    @PS-031 @durable
    Scenario: Working state and durable facts are read back by a fresh process
      Given the persisted-state store declares "durable"
      When the state key "handoff" is written as {"owner": "ops", "ticket": 42} expecting no version
      And the fact "db.version" is put directly with the statement "The database is version 16"
      Then a fresh process opening the store URL reads the state key "handoff" as {"owner": "ops", "ticket": 42} at version 1
      And a fresh process opening the store URL reads the fact "db.version" unchanged
