Feature: Store reads and history windows
  Runtimes read a thread either whole (audit, replay) or as a window of the
  newest N stored messages (the history a model sees). A window counts
  messages, not user-assistant pairs, and is always returned oldest first.

  Troubleshooting: a wrong window usually means the store sorts the wrong way,
  slices before filtering, reads "limit 0" as "no limit", or pages the answer.
  A read that can be changed by its caller means the store hands out its own
  objects instead of copies.

  Rule: A window of N gives the newest N, oldest first

    @ST-003
    Scenario Outline: Store window of <size> over 10 messages
      Given store thread "A" holds 10 messages appended in batches of 3
      When the newest <size> messages of store thread "A" are read
      Then the store read returns messages <first> to 10 in append order

      Examples: window sizes
        | size | first |
        | 1    | 10    |
        | 6    | 5     |
        | 10   | 1     |
        | 25   | 1     |

    @ST-003 @golden
    Scenario: Store serves the newest six messages as document 002's recent-messages read does
      Given store thread "A" holds 8 messages appended in batches of 2
      When the newest 6 messages of store thread "A" are read
      Then the store read returns messages 3 to 8 in append order

    @ST-003
    Scenario: Store window follows append order, not caller timestamps
      When store thread "A" is appended 3 messages stamped with decreasing caller timestamps
      And store thread "A" is appended 3 more messages stamped with earlier caller timestamps
      Then the newest 4 messages of store thread "A" are "t1, u3, u2, u1"

    @ST-004
    Scenario: Store window of zero is empty
      Given store thread "A" holds 4 messages appended in batches of 2
      When the newest 0 messages of store thread "A" are read
      Then the store read is empty

    @ST-005
    Scenario: Store refuses a negative window
      Given store thread "A" holds 3 messages appended in batches of 3
      When a window of -1 messages of store thread "A" is requested
      Then the store call is refused with ValueError
      And store thread "A" holds 3 messages

    @ST-005
    Scenario: Store refuses a window size of 2.5, which is not a whole number
      Given store thread "A" holds 3 messages appended in batches of 3
      When a window of 2.5 messages of store thread "A" is requested
      Then the store call is refused
      And store thread "A" holds 3 messages

    @ST-005
    Scenario Outline: Store refuses a window size of <size> or reads it as 2
      Given store thread "A" holds 3 messages appended in batches of 3
      When a window of <size> messages of store thread "A" is requested
      Then the store call is refused or returns messages 2 to 3
      And store thread "A" holds 3 messages

      Examples: a whole size written as a float or as text
        | size |
        | 2.0  |
        | "2"  |

  Rule: Reading without a limit returns everything, never capped

    @ST-006
    Scenario: Store returns all of a long thread when no limit is given
      Given store thread "A" holds 1205 messages appended in batches of 50
      When every message of store thread "A" is read
      Then the store read returns messages 1 to 1205 in append order

  Rule: A read is the caller's own copy

    @ST-007
    Scenario: Store read cannot be changed through what it returned
      Given store thread "A" holds 3 messages appended in batches of 3
      When the store reader changes the returned list and the metadata and parts of a returned message
      Then a fresh read of store thread "A" returns what was appended

  Rule: Threads are independent

    @ST-008
    Scenario: Store returns an empty list for a thread never written
      When every message of store thread "never-written" is read
      Then the store read is empty

    @ST-009
    Scenario: Store threads never see each other's messages
      Given store thread "A" holds 3 messages appended in batches of 3
      And store thread "B" holds 2 messages appended in batches of 1
      When every message of store thread "B" is read
      Then the store read returns messages 1 to 2 of thread "B" in append order
      And the newest 3 messages of store thread "A" are "m1, m2, m3"
