Feature: Turns: the history window of the next turn
  Each turn assembles its context again: the newest stored messages of the thread
  chosen by the history window (single messages, not user-assistant pairs; six by
  default; zero for none), rendered as role and text only. The current envelope's
  user message is stored before assembly, so it takes one place of the window and
  also appears as the brief.

  Troubleshooting: a window that shows twice as many messages as configured counts
  pairs; a window one message short of what is expected leaves out the current
  user message; history entries with more than role and text replay structured
  parts the model must not receive as native messages; a window that misses
  another writer's messages is built from the runtime's own memory (or from a
  thread read once at start), and one of a fixed size ignores the configuration.

  Background:
    Given a turns script on a fresh thread

  Rule: The window selects the newest stored messages, counting the current one

    Scenario Outline: Turns select <shown> stored messages with a window of <window>
      Given the turns history window is <window>
      And a root turn opened with an envelope "one" that settles completed
      And a root turn opened with an envelope "two" that settles completed
      And a root turn opened with an envelope "three" that settles completed
      When the turns script runs
      Then the first model call of "T3" saw <shown> history messages

      @TU-016 @TU-021
      Examples: windows smaller than the history
        | window | shown |
        | 1      | 1     |
        | 2      | 2     |
        | 3      | 3     |
        | 4      | 4     |

      @TU-016
      Examples: windows as large as or larger than the history
        | window | shown |
        | 5      | 5     |
        | 6      | 5     |
        | 50     | 5     |

      @TU-018
      Examples: a window of zero
        | window | shown |
        | 0      | 0     |

    @TU-016 @TU-021
    Scenario: Turns count messages, not pairs, so a window can start on an answer
      Given the turns history window is 4
      And a root turn opened with an envelope "one" that settles completed
      And a root turn opened with an envelope "two" that settles completed
      And a root turn opened with an envelope "three" that settles completed
      When the turns script runs
      Then the first model call of "T3" saw the history:
        | role      | text          |
        | assistant | answer to one |
        | user      | two           |
        | assistant | answer to two |
        | user      | three         |

    @TU-021
    Scenario: Turns show the current user message in the history and as the brief
      Given the turns history window is 1
      And a root turn opened with an envelope "earlier" that settles completed
      And a root turn opened with an envelope "now" that settles completed
      When the turns script runs
      Then the first model call of "T2" saw the history:
        | role | text |
        | user | now  |
      And the first model call of "T2" saw the brief "now"

    @TU-021 @TU-002
    Scenario: Turns opened with a brief only add nothing to their own history
      Given the turns history window is 2
      And a root turn opened with an envelope "stored" that settles completed
      And a root turn opened with the brief "not stored" that settles completed
      When the turns script runs
      Then the first model call of "T2" saw the history:
        | role      | text             |
        | user      | stored           |
        | assistant | answer to stored |
      And the first model call of "T2" saw the brief "not stored"

  Rule: The window is read from the store at each turn, whoever wrote the messages

    Another writer (a second process sharing the store) fills the thread before the
    runtime starts and adds messages right after the store took each answer, so the
    thread is several times longer than the window and changes between turns. The
    expected window is read back from the store after the run.

    Scenario Outline: Turns read a window of <window> from a long thread another writer also fills
      Given the turns history window is <window>
      And another writer has stored 30 messages in the turns thread
      And another writer stores 3 messages in the turns thread after each answer
      And a root turn opened with an envelope "one" that settles completed
      And a root turn opened with an envelope "two" that settles completed
      And a root turn opened with an envelope "three" that settles completed
      When the turns script runs
      Then the first model call of "T1" saw the newest <window> stored messages up to its own
      And the first model call of "T2" saw the newest <window> stored messages up to its own
      And the first model call of "T3" saw the newest <window> stored messages up to its own

      @TU-016 @TU-021 @with-second-run
      Examples: windows much shorter than the thread
        | window |
        | 2      |
        | 5      |
        | 9      |

    @TU-017 @with-second-run
    Scenario: Turns read the default six from a long thread another writer also fills
      Given the turns history window is left at its default
      And another writer has stored 30 messages in the turns thread
      And another writer stores 3 messages in the turns thread after each answer
      And a root turn opened with an envelope "one" that settles completed
      And a root turn opened with an envelope "two" that settles completed
      When the turns script runs
      Then the first model call of "T1" saw the newest 6 stored messages up to its own
      And the first model call of "T2" saw the newest 6 stored messages up to its own

  Rule: Six messages by default, none for zero, and a negative window is rejected

    @TU-017
    Scenario: Turns show six stored messages when no window is configured
      Given the turns history window is left at its default
      And a root turn opened with an envelope "one" that settles completed
      And a root turn opened with an envelope "two" that settles completed
      And a root turn opened with an envelope "three" that settles completed
      And a root turn opened with an envelope "four" that settles completed
      When the turns script runs
      Then the first model call of "T4" saw the history:
        | role      | text            |
        | assistant | answer to one   |
        | user      | two             |
        | assistant | answer to two   |
        | user      | three           |
        | assistant | answer to three |
        | user      | four            |

    @TU-018
    Scenario: Turns with a window of zero see no stored history at all
      Given the turns history window is 0
      And a root turn opened with an envelope "one" that settles completed
      And a root turn opened with an envelope "two" that settles completed
      When the turns script runs
      Then the first model call of "T2" saw no history
      And the first model call of "T2" saw the brief "two"

    @TU-019
    Scenario: Turns reject a negative history window before anything runs
      Given the turns history window is -1
      And a root turn opened with an envelope "one" that settles completed
      When the turns script runs
      Then the turns runtime rejects its configuration naming "history_window"
      And nothing reached the turns store or the model

  Rule: History reaches the model as role and text only

    @TU-020
    Scenario: Turns do not replay structured parts of stored messages
      Given a root turn opened with an envelope "Chart the sales" carrying a structured part that settles completed with a payload
      And a root turn opened with an envelope "And for May?" that settles completed
      When the turns script runs
      Then the first model call of "T2" saw the history:
        | role      | text                      |
        | user      | Chart the sales           |
        | assistant | answer to Chart the sales |
        | user      | And for May?              |
      And the history entries the model saw for "T2" carry only role and text

  Rule: The store's window is the newest messages in order

    @TU-031 @golden
    Scenario: Turns read the newest six messages of a thread from the store
      Given the turns thread already stores 8 messages
      When the turns store is read
      Then reading the turns thread with a limit of 6 returns messages 3 to 8

    @TU-031
    Scenario: Turns read a whole short thread when the limit is larger than it
      Given the turns thread already stores 3 messages
      When the turns store is read
      Then reading the turns thread with a limit of 10 returns messages 1 to 3
