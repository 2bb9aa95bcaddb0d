Feature: Turns: turn records explain every settled turn
  Every turn that settles, root or child, completed or not, refused included,
  appends one turn record: its parent, grant, steps used, tier, fallback history,
  usage, timing and outcome. A child's usage stays on the child's record. Turn ids
  come from a per-runtime counter (T1, T2, ...) that starts again after a restart,
  or from an injected generator. A restart is real: the turns after it run in a
  fresh process on the same store, so these scenarios need a durable store.

  Troubleshooting: a missing record for a refused turn usually means records are
  written only after execution starts; a parent's usage that is too large by
  exactly the child's usage means the runtime folds children into parents; ids that
  never repeat across a restart with the default counter mean the counter is not
  per runtime.

  Background:
    Given a turns script on a fresh thread

  Rule: Every settled turn appends exactly one record

    Scenario Outline: Turns append one record for a <kind> turn that settles <outcome>
      Given a <kind> turn opened with its envelope that settles <outcome>
      When the turns script runs
      Then every settled turn has exactly one turn record

      @TU-010 @turn-records
      Examples: roots
        | kind | outcome   |
        | root | completed |
        | root | failed    |
        | root | cut       |
        | root | stopped   |
        | root | truncated |
        | root | refused   |

      @TU-010 @turn-records
      Examples: children
        | kind  | outcome   |
        | child | completed |
        | child | failed    |
        | child | cut       |
        | child | stopped   |
        | child | truncated |
        | child | refused   |

    @TU-010 @TU-014 @turn-records
    Scenario: Turns refused by the fit check still append a record
      Given the turns context budget is 10 characters
      And a root turn opened with an envelope "This request is too long to fit" that settles completed
      When the turns script runs
      Then every settled turn has exactly one turn record
      And the turn record of "T1" shows:
        | field               | value       |
        | outcome             | "refused"   |
        | steps_used          | 0           |
        | metadata.refused_at | "fit-check" |

  Rule: A record carries parent, grant, steps, tier, fallbacks, usage, timing and outcome

    @TU-011 @turn-records
    Scenario: Turns record the execution of a root and its child
      Given the turns clock starts at "2031-03-01T09:00:00Z"
      And the turns model chain has the tiers "primary, backup"
      And a root turn opened with an envelope "Plan the trip" that spawns a child turn settling completed and settles completed
      When the turns script runs
      Then the turn record of "T1" shows:
        | field            | value                                       |
        | outcome          | "completed"                                 |
        | parent_turn_id   | null                                        |
        | grant.max_steps  | 8                                           |
        | steps_used       | 2                                           |
        | tier             | "primary"                                   |
        | fallbacks        | []                                          |
        | usage            | {"input_tokens": 200, "output_tokens": 40}  |
      And the turn record of "T2" shows:
        | field          | value       |
        | outcome        | "completed" |
        | parent_turn_id | "T1"        |
        | steps_used     | 1           |
        | tier           | "helper"    |
      And the turn record of "T1" has timing from the injected clock
      And the turn record of "T2" has timing from the injected clock

    @TU-011 @turn-records
    Scenario: Turns record the fallback from a failing tier
      Given the turns model chain has the tiers "primary, backup"
      And a root turn opened with an envelope "Translate this" whose first tier fails and that settles completed
      When the turns script runs
      Then the turn record of "T1" shows:
        | field   | value       |
        | outcome | "completed" |
        | tier    | "backup"    |
      And the turn record of "T1" lists fallbacks from the tiers "primary"

    @TU-011 @turn-records
    Scenario: Turns record every tier a failed turn fell back from
      Given the turns model chain has the tiers "primary, backup"
      And a root turn opened with an envelope "Translate everything" that settles failed
      When the turns script runs
      Then the turn record of "T1" lists fallbacks from the tiers "primary, backup"
      And the turn record of "T1" shows:
        | field      | value    |
        | outcome    | "failed" |
        | steps_used | 2        |

    @TU-011 @turn-records
    Scenario: Turns record the grant and steps of a cut turn
      Given a root turn opened with an envelope "Keep searching" that settles cut
      When the turns script runs
      Then the turn record of "T1" shows:
        | field           | value |
        | outcome         | "cut" |
        | grant.max_steps | 1     |
        | steps_used      | 1     |
        | parent_turn_id  | null  |

  Rule: A child's usage stays on the child's record

    @TU-012 @turn-records
    Scenario: Turns keep child usage off the parent's totals
      Given a root turn opened with an envelope "Research this" that spawns a child turn settling completed and settles completed
      When the turns script runs
      Then the turn record of "T1" totals the usage of its own model calls
      And the turn record of "T2" totals the usage of its own model calls
      And the turn record of "T2" shows:
        | field                | value |
        | usage.input_tokens   | 7     |
        | usage.output_tokens  | 3     |

    @TU-012 @turn-records
    Scenario: Turns keep the usage of a failed child on the child
      Given a root turn opened with an envelope "Research that" that spawns a child turn settling failed and settles completed
      When the turns script runs
      Then the turn record of "T1" shows:
        | field  | value                                      |
        | usage  | {"input_tokens": 200, "output_tokens": 40} |

  Rule: continuesFrom is recorded

    @TU-026 @turn-records @with-second-run
    Scenario: Turns record the turn they continue from
      Given a root turn opened with an envelope "Start the audit" that settles cut
      And a root turn continuing from "T1" opened with an envelope "Carry on" that settles completed
      When the turns script runs
      Then the turn record of "T2" shows:
        | field          | value  |
        | continues_from | "T1"   |
      And the turn record of "T1" shows:
        | field          | value |
        | continues_from | null  |

  Rule: Turn ids come from a per-runtime counter or an injected generator

    @TU-027 @turn-records
    Scenario: Turns number ids from a counter that includes children
      Given a root turn opened with an envelope "one" that spawns a child turn settling completed and settles completed
      And a root turn opened with an envelope "two" that settles completed
      When the turns script runs
      Then the turn records of the turns thread have the ids "T2, T1, T3"

    @TU-027 @turn-records @with-restart @durable
    Scenario: Turns ids from the default counter collide after a restart
      Given a root turn opened with an envelope "before the restart" that settles completed
      And a root turn opened with an envelope "still before" that settles completed
      And the turns runtime restarts
      And a root turn opened with an envelope "after the restart" that settles completed
      When the turns script runs
      Then the turn records of the turns thread have the ids "T1, T2, T1"

    @TU-028 @turn-records @with-restart @durable
    Scenario: Turns ids from an injected generator stay unique across a restart
      Given turn ids come from the uuid generator
      And a root turn opened with an envelope "before the restart" that spawns a child turn settling completed and settles completed
      And the turns runtime restarts
      And a root turn opened with an envelope "after the restart" that settles completed
      When the turns script runs
      Then every turn id of the turns thread is a distinct UUID

  Rule: The store keeps records exactly and filters them by thread

    @TU-029 @turn-records @golden
    Scenario: Turns store keeps a child record with its usage exactly
      Given the turns store keeps the child record "T2" of "T1" with the usage {"input_tokens": 7, "output_tokens": 3}
      When the turns store is read
      Then the turns store returns the kept record unchanged

    @TU-030 @turn-records @golden
    Scenario: Turns store filters records by thread in append order
      Given the turns store keeps the records "T1, T2" for the turns thread
      And the turns store keeps the records "T1" for another thread
      And the turns store keeps the records "T3" for the turns thread
      When the turns store is read
      Then the turns store returns the records "T1, T2, T3" for the turns thread
      And the turns store returns the records of both threads when no thread is named
