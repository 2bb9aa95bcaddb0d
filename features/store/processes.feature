Feature: Store promises that need several processes
  Durability, concurrent writers and atomic batches under a crash can only be
  shown with real processes: the kit starts child processes that open the
  store by its URL. For built-in stores the kill lands at a known row through
  the adapter's pause point; for other stores the kills are timed over the
  measured span of a large append while another process polls the thread,
  and too few kills during an append make the result inconclusive. The
  evidence of every verdict says how it was reached.

  Troubleshooting: a durable failure usually means data lives in a process
  cache; a concurrent failure means positions are computed outside the write
  transaction or batches are written row by row; an atomic failure means the
  batch is not one transaction; a reader seeing part of a batch means rows are
  committed one by one, or read outside the writer's transaction; a batch
  appearing before messages a reader already saw means rows are ordered by a
  clock read before the write rather than by commit; writes of another kind
  lost under racing writers mean they live in one document that each write
  reads and rewrites whole; an order that follows the writers' time zones
  means rows are ordered by a local wall-clock stamp; a process that kept
  the store open reading what another process already replaced means reads are
  served from a cache in the process, checked by something those writes leave
  alone (a count, a key's existence).

  Rule: What was acknowledged survives its writer being killed

    @ST-032 @durable
    Scenario: Store data is read back identically by a fresh process
      Given the store claims the "durable" capability
      When one process writes to store thread "A" and is killed after acknowledging
      Then a fresh process reads back everything that was acknowledged

  Rule: Concurrent writers lose nothing and never interleave a batch

    @ST-033 @concurrent-writers
    Scenario: Store keeps every writer's batches whole and in order
      Given the store claims the "concurrent-writers" capability
      When 3 writer processes append at once to a shared store thread and to threads of their own
      Then no acknowledged message is lost, each writer's order holds and no batch is interleaved

  Rule: A batch killed in the middle is all there or all gone

    @ST-034 @atomic-batch
    Scenario: Store batch interrupted by a killed process is all or nothing
      Given the store claims the "atomic-batch" capability
      When a writer process is killed in the middle of appending a batch to store thread "A"
      Then a fresh process finds that batch wholly stored or wholly absent

  Rule: Readers in other processes see whole batches while a writer appends

    @ST-036 @concurrent-writers
    Scenario: Store shows another process whole batches in order while they are appended
      Given the store claims the "concurrent-writers" capability
      When another process reads store thread "A" again and again while a writer process appends batches to it
      Then every read showed whole batches in their order and kept what earlier reads showed

  Rule: Writes that exclude each other still do when processes race

    @ST-010 @concurrent-writers
    Scenario: Store keeps an id raced by several processes once
      Given the store claims the "concurrent-writers" capability
      When 4 writer processes race to append the same message ids to store thread "R"
      Then one racing append is acknowledged and each raced id is stored once

    @ST-026 @state @concurrent-writers
    Scenario: Store keeps every compare-and-set increment raced by several processes
      Given the store claims the "concurrent-writers" capability
      And the store claims the "state" capability
      When 4 writer processes race to increment a state key of scope "R" by compare-and-set
      Then no acknowledged increment is lost

  Rule: Writes of every kind survive writers racing in other processes

    @concurrent-writers
    Scenario Outline: Store keeps every <write> raced by several processes
      Given the store claims the "concurrent-writers" capability
      And the store claims the "<capability>" capability
      When 4 writer processes in different time zones race to make 25 <write>s each in store thread "W"
      Then a fresh process finds every acknowledged <write> held once, each writer's in its order

      @ST-018
      Examples: Uncommitted messages committed by their writers
        | write              | capability    |
        | commit-flag change | commit-flags  |

      @ST-022
      Examples: Error records of one thread
        | write        | capability |
        | error record | errors     |

      @ST-023
      Examples: Turn records of one thread
        | write       | capability   |
        | turn record | turn-records |

      @ST-025
      Examples: New keys of one working-state scope
        | write         | capability |
        | new state key | state      |

      @ST-028
      Examples: Facts about new subjects in one scope
        | write | capability |
        | fact  | knowledge  |

  Rule: A process that keeps the store open sees what other processes wrote since

    @concurrent-writers
    Scenario Outline: Store shows a process that read before another process's <write>s what they changed
      Given the store claims the "concurrent-writers" capability
      And the store claims the "<capability>" capability
      When a process reads store thread "V" and keeps the store open while another process makes 5 <write>s there
      Then its next read shows what a fresh process reads

      @ST-018 @SW-004
      Examples: Flags of messages the reader saw uncommitted
        | write              | capability   |
        | commit-flag change | commit-flags |

      @ST-022
      Examples: Error records of one thread
        | write        | capability |
        | error record | errors     |

      @ST-023
      Examples: Turn records of one thread
        | write       | capability   |
        | turn record | turn-records |

      @ST-025
      Examples: Keys of one scope rewritten
        | write             | capability |
        | state-key rewrite | state      |

      @ST-028
      Examples: Facts of one scope replaced
        | write            | capability |
        | fact replacement | knowledge  |

  Rule: Order is the order of writing, whatever the writer's time zone

    @durable
    Scenario Outline: Store keeps the order of <write>s made by processes in different time zones
      Given the store claims the "durable" capability
      And the store claims the "<capability>" capability
      When 3 processes in time zones UTC+14, UTC-11 and UTC+5:45 each make 3 <write>s in store thread "Z", one process after another
      Then a fresh process finds every <write> held once, in the order the processes made them

      @ST-002
      Examples: Messages appended one by one
        | write   | capability |
        | message | durable    |

      @ST-022
      Examples: Error records of one thread
        | write        | capability |
        | error record | errors     |

      @ST-023
      Examples: Turn records of one thread
        | write       | capability   |
        | turn record | turn-records |
