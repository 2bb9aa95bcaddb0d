Feature: Store appends are atomic, ordered batches
  A runtime hands the store whole groups of messages (a tool call with its
  result, a round, a run) and relies on each group landing whole, in the order
  it was appended, or not at all. These scenarios drive the store directly.

  Troubleshooting: a failure here usually means the store writes a batch row
  by row outside one transaction, sorts by a caller-supplied field, or checks
  duplicate ids only after writing. The evidence lists the store calls made.

  Rule: A successful append stores the whole batch, side by side and in order

    @ST-001
    Scenario: Store keeps a batch whole and in batch order
      Given store thread "A" holds 2 messages
      When store thread "A" is appended the batch:
        | id | role      | text            |
        | b1 | assistant | calling a tool  |
        | b2 | tool      | tool result     |
        | b3 | assistant | final answer    |
      Then store thread "A" holds exactly "m1, m2, b1, b2, b3"

    @ST-001 @ST-016
    Scenario Outline: Store leaves nothing of a batch that fails at row <row>
      Given store thread "A" holds 2 messages
      And the store will fail before row <row> of its next batch
      When a batch of 4 messages is appended to store thread "A" despite the fault
      Then the store append raised
      And store thread "A" holds exactly "m1, m2"

      Examples: failure points
        | row |
        | 0   |
        | 1   |
        | 2   |
        | 3   |

    @ST-001 @ST-016
    Scenario Outline: Store leaves nothing of a long batch that fails at row <row>
      Given store thread "A" holds 2 messages
      And the store will fail before row <row> of its next batch
      When a batch of 1001 messages is appended to store thread "A" despite the fault
      Then the store append raised
      And store thread "A" holds exactly "m1, m2"

      Examples: failure points past the chunks a store may commit on their own
        | row  |
        | 50   |
        | 100  |
        | 256  |
        | 1000 |

  Rule: A batch of any size is stored whole

    @ST-001
    Scenario Outline: Store keeps a batch of <count> messages whole and in order
      Given store thread "A" holds 1 messages
      When store thread "A" is appended a batch of <count> messages
      Then store thread "A" holds every message appended, in order

      Examples: batch sizes around the limits of drivers and statements
        | count |
        | 1     |
        | 999   |
        | 1000  |
        | 1001  |

      @stress
      Examples: a batch past PostgreSQL's 65,535 statement parameters
        | count |
        | 10000 |

  Rule: Order is append order, never a caller timestamp

    @ST-002
    Scenario: Store orders messages by append, not by their caller timestamps
      When store thread "A" is appended 3 messages stamped with decreasing caller timestamps
      And store thread "A" is appended 3 more messages stamped with earlier caller timestamps
      Then store thread "A" holds exactly "t3, t2, t1, u3, u2, u1"

  Rule: Message ids are unique within a thread

    @ST-010
    Scenario: Store refuses a batch repeating an id already stored
      Given store thread "A" holds 2 messages
      When store thread "A" is appended a batch of new ids with the stored id "m2" in the middle
      Then the store call is refused with DuplicateIdError
      And store thread "A" holds exactly "m1, m2"

    @ST-011
    Scenario: Store refuses a batch repeating an id within itself
      Given store thread "A" holds 1 messages
      When store thread "A" is appended a batch repeating the id "d1" within itself
      Then the store call is refused with DuplicateIdError
      And store thread "A" holds exactly "m1"

    @ST-009 @ST-010
    Scenario: Store accepts the same id in two different threads
      Given store thread "A" holds 2 messages
      When store thread "B" is appended the batch:
        | id | role | text          |
        | m1 | user | same id, in B |
      Then store thread "B" holds exactly "m1"
      And store thread "A" holds exactly "m1, m2"

  Rule: An empty batch is a no-op

    @ST-012
    Scenario: Store accepts an empty batch and stores nothing
      Given store thread "A" holds 2 messages
      When store thread "A" is appended an empty batch
      Then store thread "A" holds exactly "m1, m2"
