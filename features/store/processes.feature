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
  clock read before the write rather than by commit.

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
