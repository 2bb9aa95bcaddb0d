Feature: Turns: state blocks change only through validated updates
  State holds application data apart from the conversation. It changes only when a
  block update passes validation (a declared block, a value of the declared type)
  and the store's compare-and-set; a rejected update changes nothing. An update
  that succeeded stays when the turn later fails: failure is not rollback. Each
  turn's context renders only the blocks its agent reads.

  Troubleshooting: a block holding a value of the wrong type, or a version that
  moved on a conflict, means an update skipped validation; a block back at its old
  value after a failed turn means the runtime rolled state back; a model seeing
  blocks its agent does not read means the reader views are not applied.

  Background:
    Given a turns script on a fresh thread
    And the turns state declares the block "plan" of type "string"

  Rule: Only successful, validated updates change state

    @TU-008 @state
    Scenario: Turns apply a valid block update
      Given a root turn opened with an envelope "Draft the plan" that updates the block "plan" to "visit Lyon" and settles completed
      When the turns script runs
      Then the turns block "plan" holds "visit Lyon" at version 1

    Scenario Outline: Turns reject an update <problem>
      Given a root turn opened with an envelope "Draft the plan" that updates the block <block> to <value> and settles completed
      When the turns script runs
      Then the turn "T1" settled completed
      And the turns block <block> was never written

      @TU-008 @state
      Examples: invalid updates
        | problem                     | block    | value          |
        | with a value of a wrong type | "plan"   | 42             |
        | with a list for a string    | "plan"   | ["visit Lyon"] |
        | naming an undeclared block  | "secret" | "hidden"       |

    @TU-008 @state
    Scenario: Turns leave a block unchanged when an update names a stale version
      Given a root turn opened with an envelope "Draft the plan" that updates the block "plan" to "visit Lyon" and settles completed
      And a root turn opened with an envelope "Change the plan" that updates the block "plan" to "visit Nice" expecting version 7 and settles completed
      When the turns script runs
      Then the turns block "plan" holds "visit Lyon" at version 1

  Rule: Failure is not rollback

    @TU-009 @state
    Scenario Outline: Turns keep a state update made before the turn ended <outcome>
      Given a root turn opened with an envelope "Draft the plan" that updates the block "plan" to "visit Lyon" and settles <outcome>
      When the turns script runs
      Then the turn "T1" settled <outcome>
      And the turns block "plan" holds "visit Lyon" at version 1

      Examples: unfinished outcomes
        | outcome   |
        | failed    |
        | cut       |
        | stopped   |
        | truncated |

    @TU-009 @golden
    Scenario: Turns keep the side effect of a tool run before the turn failed
      Given a root turn opened with an envelope "Book the hotel" that calls the tool "book_hotel" and settles failed
      When the turns script runs
      Then the turn "T1" settled failed
      And the turns ledger holds the effect "book_hotel ran for Book the hotel"

  Rule: The model sees only the blocks its agent reads

    @TU-024 @state
    Scenario Outline: Turns render the blocks the agent "<agent>" reads
      Given the turns state declares the block "notes" of type "string"
      And the turns agent "planner" reads the blocks "plan"
      And the turns agent "scribe" reads the blocks "notes, plan"
      And the turns agent "blind" reads the blocks "nothing"
      And a root turn opened with an envelope "Draft the plan" that updates the block "plan" to "visit Lyon" and settles completed
      And a root turn opened with an envelope "Take notes" that updates the block "notes" to "bring a coat" and settles completed
      And a root turn opened with an envelope "What is planned?" as the agent "<agent>" that settles completed
      When the turns script runs
      Then the first model call of "T3" saw the state blocks "<blocks>"

      Examples: agents and their reads
        | agent   | blocks      |
        | planner | plan        |
        | scribe  | notes, plan |
        | blind   | nothing     |
        | main    | plan, notes |
