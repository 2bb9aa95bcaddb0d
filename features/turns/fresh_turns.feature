Feature: Turns: every turn starts fresh
  A new turn assembles its context again and starts its execution from nothing: an
  empty current-turn transcript and the first tier of its model chain. It inherits
  no tool result of an earlier turn. continuesFrom only records a relationship; a
  turn record is not a checkpoint, so nothing of the earlier turn is restored.

  Troubleshooting: a first model call that already holds tool results carries an
  earlier turn's transcript over (or restores it through continuesFrom); a first
  call on a backup tier means the chain selection of an earlier turn was kept.

  Background:
    Given a turns script on a fresh thread

  Rule: A new turn starts with an empty transcript

    @TU-022 @with-second-run
    Scenario: Turns do not inherit the tool results of the previous turn
      Given a root turn opened with an envelope "Look up the order" that calls the tool "lookup" and settles completed
      And a root turn opened with an envelope "Thanks" that settles completed
      When the turns script runs
      Then the first model call of "T1" saw an empty transcript
      And the first model call of "T2" saw an empty transcript

    @TU-022 @with-second-run
    Scenario: Turns start empty after a turn that stopped in the middle of a tool step
      Given a root turn opened with an envelope "Scan the drive" that settles stopped
      And a root turn opened with an envelope "Scan again" that settles completed
      When the turns script runs
      Then the first model call of "T2" saw an empty transcript

  Rule: A new turn starts at the first tier of its chain

    @TU-023 @with-second-run
    Scenario: Turns go back to the first tier after an earlier turn fell back
      Given the turns model chain has the tiers "primary, backup"
      And a root turn opened with an envelope "Translate this" whose first tier fails and that settles completed
      And a root turn opened with an envelope "And this" that settles completed
      When the turns script runs
      Then the turn "T1" settled completed
      And the first model call of "T2" went to the tier "primary"

    @TU-023
    Scenario: Turns fall back to the next tier within a turn
      Given the turns model chain has the tiers "primary, backup"
      And a root turn opened with an envelope "Translate that" whose first tier fails and that settles completed
      When the turns script runs
      Then the first model call of "T1" went to the tier "primary"
      And the turn "T1" settled completed
      And the turns thread holds the messages:
        | role      | text                     |
        | user      | Translate that           |
        | assistant | answer to Translate that |

  Rule: continuesFrom records a relationship and restores nothing

    @TU-025 @with-second-run
    Scenario: Turns continuing from a cut turn start with an empty transcript
      Given the turns model chain has the tiers "primary, backup"
      And a root turn opened with an envelope "Start the audit" whose first tier fails and that settles cut
      And a root turn continuing from "T1" opened with an envelope "Carry on" that settles completed
      When the turns script runs
      Then the turn "T1" settled cut
      And the first model call of "T2" saw an empty transcript
      And the first model call of "T2" went to the tier "primary"

    @TU-025 @turn-records @with-second-run
    Scenario: Turns continuing from a cut turn run under their own grant
      Given a root turn opened with an envelope "Start the review" that settles cut
      And a root turn continuing from "T1" opened with an envelope "Go on" that settles completed
      When the turns script runs
      Then the turn record of "T2" shows:
        | field           | value       |
        | outcome         | "completed" |
        | grant.max_steps | 8           |
        | steps_used      | 1           |
        | continues_from  | "T1"        |
