"""Store promises that need several processes: durable, concurrent-writers and
atomic-batch.

Each check takes a store URL and a thread id (unique to the caller), starts
fresh processes (:mod:`memconform.harness.fresh_process`: the kit's import
path as an argument, no environment but ``PATH``) that open the store by that
URL and do one job of :mod:`memconform.steps.check_jobs`, and judges what a
*fresh* process reads back.

- :func:`check_durable`: one process writes, acknowledges and is then killed
  outright (SIGKILL: it never closes the store); a fresh process reads.
- :func:`check_concurrent_writers`: first a writer is held inside its batch
  (at the adapter's row point) while a second writer appends to the same
  thread; then, in rounds that widen, several writers released at the same
  instant append to one shared thread and to threads of their own. Nothing
  acknowledged may be lost, each writer's order must hold, and no batch may
  be interleaved with another.
- :func:`check_atomic_batch`: a writer is killed with SIGKILL in the middle of
  a batch. For stores whose adapter calls
  :func:`memconform.harness.faults.batch_row_pause` the kill lands before a
  known row. For any other store the kit measures how long a large append
  takes and kills writers at times spread over that span until enough kills
  landed while an append was in flight (the writer had said it started and
  not that it returned), while a reader polls the thread being written; too
  few such kills make the result inconclusive.

- :func:`check_reads_during_writes`: a reader process reads a thread again
  and again while a writer process appends batches to it (held first inside
  a batch at the row point, where the store has one); every read must show
  whole batches in order and keep what earlier reads showed.

- :func:`check_racing_writes`: writers released at the same instant append
  the same message ids and increment one state key by compare-and-set; one
  append may win, and no acknowledged increment may be lost.

- :func:`check_raced_writes` and :func:`check_relayed_writes`: writes of one
  kind (commit-flag changes, error records, turn records, new state keys,
  facts; messages in the relay) made by writers released at the same instant,
  or by processes one after another, each in its own time zone: nothing
  acknowledged lost or held twice, and the order kept where the kind has one.

- :func:`check_warm_reads`: a reader process keeps the store open across
  another process's writes (commit flags set, error and turn records made,
  keys and facts rewritten) and must then read what a fresh process reads.

Every result says in its evidence how it was reached (where the kills landed,
how many writers and rounds ran). A child whose store call raised where the
check needs success, or that hangs past the timeout, makes the result an
adapter error (verdict ``error``) naming the method.

One module per check (:mod:`.durability`, :mod:`.concurrent_writers`,
:mod:`.atomic_batch`, :mod:`.reads_during_writes`, :mod:`.racing_writes`,
:mod:`.many_writers`, :mod:`.warm_reads`); :mod:`.result` holds
:class:`CheckResult` and :mod:`.children` how a check starts, holds, reads,
waits for and kills its child processes. This package exports the checks and
their result; the steps import them from here.
"""

from memconform.steps.contract_checks.atomic_batch import check_atomic_batch
from memconform.steps.contract_checks.concurrent_writers import check_concurrent_writers
from memconform.steps.contract_checks.durability import check_durable
from memconform.steps.contract_checks.many_writers import check_raced_writes, check_relayed_writes
from memconform.steps.contract_checks.racing_writes import check_racing_writes
from memconform.steps.contract_checks.reads_during_writes import check_reads_during_writes
from memconform.steps.contract_checks.result import CheckResult
from memconform.steps.contract_checks.warm_reads import check_warm_reads

__all__ = [
    "CheckResult",
    "check_atomic_batch",
    "check_concurrent_writers",
    "check_durable",
    "check_raced_writes",
    "check_racing_writes",
    "check_reads_during_writes",
    "check_relayed_writes",
    "check_warm_reads",
]
