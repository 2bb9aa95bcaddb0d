Feature: Store working state and durable knowledge
  Document 004 separates working state (rewritten at step boundaries, one
  job's lifetime) from durable knowledge (facts keyed by subject, superseded,
  deletable, with provenance). A store keeps state with compare-and-set
  versions and facts one per subject, each scope on its own.

  Troubleshooting: a stale write that succeeds means the store ignores the
  expected version; two facts about one subject mean it inserts instead of
  replacing; missing provenance means fields are dropped on write.

  Rule: State versions start at 1 and grow by one

    @ST-025 @state
    Scenario: Store state versions count the writes
      Given the store claims the "state" capability
      Then state key "plan" of store job "J" reads as absent
      When state key "plan" of store job "J" is written expecting no version
      Then state key "plan" of store job "J" reads version 1 with the last value written
      When state key "plan" of store job "J" is written expecting version 1
      Then state key "plan" of store job "J" reads version 2 with the last value written

  Rule: A stale write is refused and changes nothing

    @ST-026 @state
    Scenario Outline: Store refuses a state write expecting <stale>
      Given the store claims the "state" capability
      And state key "plan" of store job "J" has been written twice
      When a write of state key "plan" of store job "J" expecting <stale> is attempted
      Then the store call is refused with ConflictError
      And state key "plan" of store job "J" reads version 2 with the last value written

      Examples: stale expectations
        | stale        |
        | version 1    |
        | version 3    |
        | no version   |

  Rule: Each job's state is its own

    @ST-027 @state
    Scenario: Store keeps state of one job out of another
      Given the store claims the "state" capability
      When state key "plan" of store job "J" is written expecting no version
      Then state key "plan" of store job "K" reads as absent

  Rule: A new fact about a subject supersedes the old one

    @ST-028 @knowledge
    Scenario: Store supersedes a fact about the same subject
      Given the store claims the "knowledge" capability
      When a fact about "timezone" saying "UTC+1" is stored in store scope "U"
      And a fact about "editor" saying "vim" is stored in store scope "U"
      And a fact about "timezone" saying "UTC-5" is stored in store scope "U"
      Then the fact about "timezone" in store scope "U" says "UTC-5"
      And the facts of store scope "U" are "editor: vim, timezone: UTC-5"

  Rule: Provenance is kept exactly

    @ST-029 @knowledge
    Scenario: Store keeps every provenance field of a fact
      Given the store claims the "knowledge" capability
      When an untrusted copied fact about "deploy-target" is stored in store scope "U"
      Then the fact about "deploy-target" in store scope "U" reads back with every provenance field

  Rule: Forgetting deletes

    @ST-030 @knowledge
    Scenario: Store forgets a fact and says whether one was there
      Given the store claims the "knowledge" capability
      When a fact about "editor" saying "vim" is stored in store scope "U"
      And the fact about "editor" is forgotten in store scope "U"
      Then forgetting answered true
      And store scope "U" has no fact about "editor"
      When the fact about "editor" is forgotten in store scope "U"
      Then forgetting answered false

  Rule: Each knowledge scope is its own

    @ST-031 @knowledge
    Scenario: Store keeps knowledge scopes apart
      Given the store claims the "knowledge" capability
      When a fact about "editor" saying "vim" is stored in store scope "U"
      And a fact about "editor" saying "emacs" is stored in store scope "V"
      And the fact about "editor" is forgotten in store scope "V"
      Then the fact about "editor" in store scope "U" says "vim"
      And store scope "V" has no fact about "editor"
