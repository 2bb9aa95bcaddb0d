Feature: Turns: what a settled turn stores in the conversation
  A turn of document 002 leaves conversation messages only in narrow cases: a root
  turn opened with an envelope stores its user message after admission and before
  its context is assembled, and only a root that settles completed stores an
  answer. Children store nothing, and the partial output of an unfinished turn
  stays in the emitted events.

  Troubleshooting: when a scenario here fails, compare the thread's messages with
  the turn's outcome in the settle event. An extra assistant message usually means
  partial output was promoted to an answer; a missing user message after a failure
  usually means the runtime removed it instead of leaving it in history.

  Background:
    Given a turns script on a fresh thread

  Rule: Only root turns store messages, and only a completed root stores an answer

    Scenario Outline: Turns store messages by kind, opening and outcome
      Given a <kind> turn opened with its <opening> that settles <outcome>
      When the turns script runs
      Then the turns thread holds messages with the roles "<roles>"

      @TU-001 @TU-004
      Examples: a root opened with an envelope that completes
        | kind | opening  | outcome   | roles           |
        | root | envelope | completed | user, assistant |

      @TU-001 @TU-005 @TU-013
      Examples: a root opened with an envelope that does not complete
        | kind | opening  | outcome   | roles |
        | root | envelope | failed    | user  |
        | root | envelope | cut       | user  |
        | root | envelope | stopped   | user  |
        | root | envelope | truncated | user  |

      @TU-003 @TU-005
      Examples: a root refused at admission
        | kind | opening  | outcome | roles   |
        | root | envelope | refused | nothing |
        | root | brief    | refused | nothing |

      @TU-002 @TU-004
      Examples: a brief-only root that completes
        | kind | opening | outcome   | roles     |
        | root | brief   | completed | assistant |

      @TU-002 @TU-005
      Examples: a brief-only root that does not complete
        | kind | opening | outcome   | roles   |
        | root | brief   | failed    | nothing |
        | root | brief   | cut       | nothing |
        | root | brief   | stopped   | nothing |
        | root | brief   | truncated | nothing |

      @TU-007
      Examples: a child spawned by a completed root stores nothing of its own
        | kind  | opening  | outcome   | roles           |
        | child | envelope | completed | user, assistant |
        | child | envelope | failed    | user, assistant |
        | child | envelope | cut       | user, assistant |
        | child | envelope | stopped   | user, assistant |
        | child | envelope | truncated | user, assistant |
        | child | envelope | refused   | user, assistant |
        | child | brief    | completed | user, assistant |
        | child | brief    | failed    | user, assistant |
        | child | brief    | refused   | user, assistant |

    @TU-001
    Scenario: Turns store the user message before the model is called
      Given a root turn opened with an envelope "What changed in the plan?" that settles completed
      When the turns script runs
      Then the user message of the turns thread was stored before the first model call
      And the turns thread holds the messages:
        | role      | text                                |
        | user      | What changed in the plan?           |
        | assistant | answer to What changed in the plan? |

    @TU-004
    Scenario: Turns store the final reply and its payload as the answer
      Given a root turn opened with an envelope "Chart the sales" carrying a structured part that settles completed with a payload
      When the turns script runs
      Then the assistant message of "T1" carries the final reply and its payload part

    @TU-004 @TU-005
    Scenario: Turns store only the final reply of a completed root that used a tool
      Given a root turn opened with an envelope "Find the invoice" that calls the tool "lookup" and settles completed
      When the turns script runs
      Then the turns thread holds the messages:
        | role      | text                       |
        | user      | Find the invoice           |
        | assistant | answer to Find the invoice |

  Rule: A refusal at admission happens before anything is stored

    @TU-003
    Scenario: Turns refused at admission call no model and store nothing
      Given a root turn opened with an envelope "Delete everything" that settles refused
      When the turns script runs
      Then the turn "T1" settled refused
      And no model was called for the turns script
      And the turns thread holds no messages

  Rule: The fit check runs after the user message is stored

    The context counts the brief and the stored user message: an envelope of
    ten characters (Greek letters of two bytes and an emoji of four) makes a
    context of twenty characters and forty-two UTF-8 bytes.

    @TU-014
    Scenario Outline: Turns count a Greek envelope with an emoji in characters against a budget of <budget>
      Given the turns context budget is <budget> characters
      And a root turn opened with an envelope "Καλημέρα 🌍" that settles completed
      When the turns script runs
      Then the turn "T1" settled <outcome>

      Examples: at and just under the context's size in characters
        | budget | outcome   |
        | 20     | completed |
        | 19     | refused   |

    @TU-014 @TU-013
    Scenario: Turns over the context budget are refused and keep their user message
      Given the turns context budget is 20 characters
      And a root turn opened with an envelope "A request far longer than the twenty character budget" that settles completed
      When the turns script runs
      Then the turn "T1" settled refused
      And no model was called for the turns script
      And the turns thread holds the messages:
        | role | text                                                  |
        | user | A request far longer than the twenty character budget |

    @TU-014
    Scenario: Turns within the context budget run normally
      Given the turns context budget is 200 characters
      And a root turn opened with an envelope "Short" that settles completed
      When the turns script runs
      Then the turn "T1" settled completed

    @TU-013 @TU-016 @with-second-run
    Scenario: Turns after a failed turn see two user messages in a row
      Given a root turn opened with an envelope "First try" that settles failed
      And a root turn opened with an envelope "Second try" that settles completed
      When the turns script runs
      Then the first model call of "T2" saw the history:
        | role | text       |
        | user | First try  |
        | user | Second try |

  Rule: Partial output of an unfinished turn stays in the events

    Scenario Outline: Turns keep partial output in events when a root ends <outcome>
      Given a root turn opened with an envelope "Summarise the report" that settles <outcome>
      When the turns script runs
      Then the turn "T1" settled <outcome>
      And the turns events hold the partial output of "T1"
      And the turns thread holds messages with the roles "user"

      @TU-006 @TU-005
      Examples: unfinished outcomes
        | outcome   |
        | failed    |
        | cut       |
        | stopped   |
        | truncated |

    @TU-015 @with-second-run
    Scenario: Turns emit an open and a settle event for every turn
      Given a root turn opened with an envelope "Plan the trip" that spawns a child turn settling completed and settles completed
      And a root turn opened with the brief "Check the weather" that settles failed
      When the turns script runs
      Then every turn of the turns script emitted an open and a settle event in order

    @TU-033
    Scenario: Turns events are available for export, partial output included
      Given a root turn opened with an envelope "Plan the trip" that spawns a child turn settling completed and settles completed
      And a root turn opened with the brief "Check the weather" that settles failed
      When the turns script runs
      Then the turns event export holds every emitted event, in order

  Rule: Messages, records and state are different kinds of data

    @TU-032 @with-second-run
    Scenario: Turns keep records and state out of the conversation
      Given the turns state declares the block "plan" of type "string"
      And a root turn opened with an envelope "Draft a plan" that updates the block "plan" to "visit Lyon" and settles completed
      And a root turn opened with an envelope "Refine it" that spawns a child turn settling completed and settles failed
      When the turns script runs
      Then the turns thread holds only the user and assistant messages of root turns
      And the turns thread holds messages with the roles "user, assistant, user"
