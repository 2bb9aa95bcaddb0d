Feature: A read never hides a stored message it cannot decode
  Stored rows get damaged: a disk fails, someone edits a row by hand, a
  migration stops half way, an older version of the code reads a newer row.
  When a store then reads a thread, its caller must be able to tell: the read
  either fails with StoreError, or returns every message the store
  acknowledged, unaltered and in order. A read that skips the row, returns it
  changed or moves it, without an error, hands a runtime a history with a hole
  it cannot see.

  The kit damages one stored message through the store's optional hook
  damage(thread_id) (see memconform.contract.DamageHook): the store
  writes something its own decoder cannot read into its own storage, for
  example text that is not JSON into the row's JSON column. A store without
  the hook is unsupported here.

  Troubleshooting: a failure here usually means the read decodes row by row
  and drops, with a log line at most, a row whose decoding raises (a
  try/except around json.loads inside the loop), or fills in defaults for the
  fields it could not read.

  Rule: A damaged stored message makes a read fail or is returned whole

    @ST-037
    Scenario: Store reads a thread holding a damaged message loudly or whole
      Given store thread "A" holds 8 messages appended in batches of 3
      When the store damages one stored message of store thread "A"
      Then a read of store thread "A" raises StoreError or returns every acknowledged message unaltered and in order
      And a read of the newest 6 messages of store thread "A" raises StoreError or returns them unaltered and in order
