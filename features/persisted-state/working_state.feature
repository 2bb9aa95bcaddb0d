Feature: Persisted state: a job's working state is written at verified step boundaries
  A job keeps what it has established (steps done, values found, markers such
  as deployed: true) in one working-state record under its own scope. The record
  is read from the store at the start of every step and rewritten only after a
  step's tool returned success.

  Troubleshooting: when these scenarios fail, compare the timeline of store
  calls with the tool calls. A record write placed before the tool call it
  describes, a step that starts without a read_state of its job's scope, or a
  record that stays at version 1 until the job ends are the usual causes.

  Background:
    Given the persisted-state store declares "state"
    And a job "deploy-1" with the steps:
      | step   | tool           | args                | records               | marks         |
      | lookup | lookup_service |                     | service_id=$result.id |               |
      | build  | build          | service=$service_id |                       |               |
      | deploy | deploy         | service=$service_id |                       | deployed=true |
    And the job tool "lookup_service" returns {"id": "svc-42"}

  Rule: results are written only after the step's effect is verified

    @PS-003 @state @golden
    Scenario: A job writes deployed: true only after the deploy returned success
      When the job runs to the end
      Then the job outcome is "completed"
      And no record write before the "deploy" tool succeeded holds the value "deployed"
      And no record write before the "deploy" tool succeeded marks the step "deploy" done
      And the stored record holds the value "deployed" = true

    @PS-003 @state @golden
    Scenario: A job whose deploy fails never records deployed: true
      Given the job tool "deploy" fails with "quota exceeded"
      When the job runs to the end
      Then the job outcome is "failed"
      And no record write before the "deploy" tool succeeded holds the value "deployed"
      And the stored record holds no value "deployed"
      And the stored record marks the steps:
        | step   | status |
        | lookup | done   |
        | build  | done   |
        | deploy | failed |
      And the stored record gives the error of step "deploy" as "quota exceeded"

  Rule: the record is written after every completed step and read at the start of every step

    @PS-001 @state
    Scenario: A job writes its record after each completed step, before the next one starts
      When the job runs to the end
      Then the record was written after each completed step before the next step began

    @PS-001 @state @with-restart
    Scenario Outline: A job killed after a step leaves that step's results in the store
      When the job runs and is killed after step <k>
      Then the job outcome is "killed"
      And the stored record marks the steps:
        | step   | status   |
        | lookup | done     |
        | build  | <build>  |
        | deploy | <deploy> |

      Examples: kill points
        | k | build   | deploy  |
        | 1 | pending | pending |
        | 2 | done    | pending |

    @PS-002 @state
    Scenario: A job reads its record from the store at the start of every step
      When the job runs to the end
      Then the record was read from the store at the start of every step

    @PS-002 @state @with-restart
    Scenario: A job continued after a hand-off uses the value the person wrote into the record
      When the job runs and is handed off after step 1
      And the person taking over sets the record value "service_id" to "svc-77"
      And the job is resumed in the same process
      Then the job outcome is "completed"
      And the "deploy" tool was called with {"service": "svc-77"}
      And the "build" tool was called with {"service": "svc-77"}

  Rule: a record changed by another writer is re-read, not overwritten

    @PS-032 @state
    Scenario: A job keeps another writer's change made while a step's tool ran
      Given another writer adds the record value "reviewer" = "ops-on-call" while the "build" step runs
      When the job runs to the end
      Then the job outcome is "completed"
      And the stored record holds the value "reviewer" = "ops-on-call"
      And the stored record holds the value "deployed" = true
      And the stored record marks the steps:
        | step   | status |
        | lookup | done   |
        | build  | done   |
        | deploy | done   |

  Rule: the record has a stable, readable shape

    @PS-004 @state
    Scenario: A job record names its goal, steps, values and blocker, one version per write
      When the job runs to the end
      Then the stored record has exactly the fields "blocked, goal, steps, values"
      And the stored record is at version 4

  Rule: conversation history is an audit log, not the model's memory

    @PS-010 @state
    Scenario: A job logs each step's exchange and shows the model only the record
      When the job runs to the end
      Then the job's log holds a call and a result for each of "lookup, build, deploy"
      And the model's view at every step holds only the record and the current step

  Rule: working-state writes are not gated like durable writes

    @PS-011 @state
    Scenario: A job writes its record even when durable writes would be refused
      Given the durable-write confirmation answers "block"
      When the job runs to the end
      Then the job outcome is "completed"
      And the durable-write confirmation was never asked
