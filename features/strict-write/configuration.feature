Feature: Strict-write configuration and its defaults
  An agent's memory policy has three strict-write settings: `enabled` (off by
  default), `onFailure` (`digest` by default) and `continueOnFailure` (off by
  default). While strict write is off, the other two change nothing. A mode
  name the runtime does not know is a configuration error.

  Troubleshooting: if a disabled policy still hides output or emits
  task_failed actions, the runtime reads `onFailure` without checking `enabled`.

  Background:
    Given a strict-write agent with the pipeline:
      | task        | kind | writes                                            |
      | weather     | tool | data city = "Paris"; output notes += "looking up" |
      | ai.labs.llm | llm  |                                                   |

  Rule: the defaults are off, digest and no continuation

    @SW-001
    Scenario: Strict-write is off for an agent without a memory policy
      Given the strict-write agent has no memory policy
      And the strict-write task "weather" fails on its next call with "HTTP 503: Service Unavailable"
      When the strict-write agent answers "What's the weather?"
      Then everything the strict-write task "weather" wrote in turn 1 is stored and committed
      And the strict-write actions of turn 1 name no failed task
      And the strict-write turn 1 ends in state "ERROR"

    @SW-001 @commit-flags
    Scenario: Strict-write enabled without a mode uses digest
      Given strict write is enabled without naming onFailure
      And the strict-write task "weather" fails on its next call with "HTTP 503: Service Unavailable"
      When the strict-write agent answers "What's the weather?"
      Then everything the strict-write task "weather" wrote in turn 1 is stored but uncommitted
      And the strict-write memory of turn 1 holds the digest for "weather"
      And the strict-write turn 1 ends in state "ERROR"

  Rule: while disabled, onFailure and continueOnFailure have no effect

    @SW-002
    Scenario Outline: Strict-write disabled with onFailure <mode> keeps the raw output
      Given strict write is disabled with onFailure "<mode>"
      And the strict-write continueOnFailure setting is on
      And the strict-write task "weather" fails on its next call with "HTTP 503: Service Unavailable"
      When the strict-write agent answers "What's the weather?"
      Then everything the strict-write task "weather" wrote in turn 1 is stored and committed
      And the strict-write memory of turn 1 holds no digest
      And the strict-write actions of turn 1 name no failed task
      And the strict-write task "ai.labs.llm" does not run in turn 1
      And the strict-write turn 1 ends in state "ERROR"

      Examples: every mode, disabled
        | mode        |
        | digest      |
        | exclude_all |
        | keep_all    |

  Rule: an unknown failure mode is rejected

    @SW-003
    Scenario: Strict-write rejects an unknown onFailure mode before running
      Given strict write is enabled with onFailure "hide_everything"
      When the strict-write agent is constructed
      Then the strict-write configuration is rejected naming "onFailure"
      And nothing reached the strict-write store

    @SW-003
    Scenario: Strict-write mode names are case-sensitive
      Given strict write is enabled with onFailure "Digest"
      When the strict-write agent is constructed
      Then the strict-write configuration is rejected naming "onFailure"

    @SW-003
    Scenario: Strict-write rejects an unknown onFailure mode even while disabled
      Given strict write is disabled with onFailure "keep_everything"
      When the strict-write agent is constructed
      Then the strict-write configuration is rejected naming "onFailure"
