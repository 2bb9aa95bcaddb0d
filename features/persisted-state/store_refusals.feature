Feature: Persisted state: a write the store refused is not progress
  The kit hands the runtime a store that really refuses one write (it raises
  StoreError, as a real store does); nothing in the script tells the runtime.
  A job whose record write was refused stops there and fails; a refused fact
  is not reported as stored.

  Troubleshooting: a job that completes although its record write was refused
  swallowed the store's error (look for a bare except around write_state); a
  later step's tool call after the refusal means the job went on from a record
  only its process held.

  Rule: a refused record write stops the job

    @PS-035 @state @with-store-refusal
    Scenario: A job whose record write for a step is refused fails and runs no later step
      Given the persisted-state store declares "state"
      And a job "deploy-1" with the steps:
        | step   | tool           | args                | records               | marks         |
        | lookup | lookup_service |                     | service_id=$result.id |               |
        | build  | build          | service=$service_id |                       |               |
        | deploy | deploy         | service=$service_id |                       | deployed=true |
      And the job tool "lookup_service" returns {"id": "svc-42"}
      And the store refuses the record write that marks step "build" done
      When the job runs to the end
      Then the job reported the refused write as a failure and ran no later step

  Rule: a refused fact is not reported stored

    @PS-035 @knowledge @with-store-refusal
    Scenario: A fact the store refused is not reported as stored
      Given the persisted-state store declares "knowledge"
      And the store refuses the fact "db.version"
      When the agent remembers the facts:
        | subject    | statement                  | kind        | source        | evidence        |
        | db.version | The database runs 16.2     | observation | tool:psql     | SELECT version  |
      Then the remember request for "db.version" was not reported as stored
