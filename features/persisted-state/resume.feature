Feature: Persisted state: a killed job resumes from its record alone
  The resume test of document 004: kill a job part-way, start again with the
  store and nothing else, and check that no completed step is redone, no
  intended step is skipped, and every value a later step needs came from the
  record.

  Every kill is real: the job's first run executes in a child process, the
  kit stops it right after the store acknowledged a write (the last write
  before step k+1's tool is called, or, in the last scenario, each write of
  the run in turn) and SIGKILLs it. No exception reaches the runtime and no cleanup runs,
  so a value kept in process memory, in module globals or flushed only when
  the run stops is lost. A kill needs a store that outlives its process
  (capability durable).

  Troubleshooting: compare the ledger of tool effects with the plan. An effect
  listed twice means the resume redid finished work (often by replaying the
  logged transcript); a missing effect means the resume skipped a step; a job
  that ends "blocked" after a resume in a fresh process kept a value outside
  the store (in memory, an environment variable or a temporary file).

  Background:
    Given the persisted-state store declares "state"
    And a job "deploy-1" with the steps:
      | step   | tool           | args                | records               | marks         |
      | lookup | lookup_service |                     | service_id=$result.id |               |
      | build  | build          | service=$service_id |                       |               |
      | deploy | deploy         | service=$service_id |                       | deployed=true |
    And the job tool "lookup_service" returns {"id": "svc-42"}

  Rule: values a later step needs are written down

    @PS-005 @state @with-restart
    Scenario: A job writes the looked-up id into its record before it counts as done
      When the job runs and is killed after step 1
      Then the stored record holds the value "service_id" = "svc-42"

  Rule: a resumed job neither redoes nor skips work

    @PS-006 @PS-007 @state @with-restart
    Scenario Outline: A job resumed in the same process performs each step exactly once
      When the job runs and is killed after step <k>
      And the job is resumed in the same process
      Then the job outcome is "completed"
      And the ledger of all runs holds each effect once, in plan order:
        | effect         |
        | lookup_service |
        | build          |
        | deploy         |
      And the "deploy" tool was called with {"service": "svc-42"}

      Examples: kill points
        | k |
        | 1 |
        | 2 |

    @PS-008 @state @with-restart
    Scenario: A job resumes from its record, not from its logged transcript
      When the job runs and is killed after step 1
      And the job is resumed in the same process
      Then the resumed job did not read the job's log
      And the model's view at every step holds only the record and the current step

  Rule: the logged transcript is disposable

    @PS-033 @state @with-restart
    Scenario: A job whose logged transcript was lost resumes from its record alone
      When the job runs and is killed after step 1
      And the job's logged transcript is lost
      And the job is resumed in the same process
      Then with its log lost, the job completed with each effect once, in plan order:
        | effect         |
        | lookup_service |
        | build          |
        | deploy         |

  Rule: resume on a different machine

    @PS-009 @PS-006 @PS-007 @durable @state @with-restart
    Scenario Outline: A job killed part-way finishes in a fresh process given only the store URL
      When the job runs and is killed after step <k>
      And the job is resumed in a fresh process given only the store URL
      Then the job outcome is "completed"
      And the ledger of all runs holds each effect once, in plan order:
        | effect         |
        | lookup_service |
        | build          |
        | deploy         |
      And the "deploy" tool was called with {"service": "svc-42"}

      Examples: kill points
        | k |
        | 1 |
        | 2 |

  Rule: a kill may come right after any write the store acknowledged

    @PS-009 @PS-006 @PS-007 @durable @state @slow @with-restart
    Scenario: A job killed right after any acknowledged write finishes in a fresh process
      When the job is killed right after each write the store acknowledged and resumed elsewhere
      Then after every kill the resumed job completed
      And after every kill no step the store had marked done ran again
      And after every kill the two runs together left each effect once, in plan order
