Feature: Persisted state: the persisted state exports as readable, diffable text
  A person must be able to read what the agent believes and see a poisoned
  entry as a line in a diff. The export lists job records and facts as
  deterministic text: sorted blocks, sorted keys, one block per fact.

  Troubleshooting: two exports of the same state that differ only in order
  mean the runtime renders in write order; a change to one fact that moves
  other lines means the format is not one block per fact.

  Background:
    Given the persisted-state store declares "knowledge"

  Rule: the export is deterministic

    @PS-023 @knowledge
    Scenario: The export of the same durable facts is the same whatever the write order
      When the agent remembers the facts:
        | subject   | statement                     | kind        | source | evidence |
        | zeta.fact | Zeta is last in the alphabet  | observation | agent  | seen     |
        | alpha.one | Alpha is first                | observation | agent  | seen     |
        | mid.point | Mid sits in the middle        | preference  | agent  | seen     |
      And the persisted state is exported
      And the same facts are remembered in reverse order in a fresh knowledge base and exported
      Then the two exports are identical
      And the export lists the facts in the order "alpha.one, mid.point, zeta.fact"

  Rule: the export is diffable

    @PS-024 @knowledge
    Scenario: Changing one durable fact changes only that fact's lines in the export
      When the agent remembers the facts:
        | subject   | statement            | kind        | source | evidence |
        | alpha.one | Alpha is first       | observation | agent  | seen     |
        | beta.two  | Beta is second       | observation | agent  | seen     |
        | gamma.3   | Gamma is third       | observation | agent  | seen     |
      And the persisted state is exported
      And the agent remembers the facts:
        | subject  | statement               | kind        | source | evidence |
        | beta.two | Beta was poisoned here  | observation | agent  | seen     |
      And the persisted state is exported
      Then the two exports differ only in the lines of "beta.two"

  Rule: state that drives behaviour is readable by a person

    @PS-025 @knowledge @state
    Scenario: The export shows a job's goal, step statuses and values, and each fact in plain text
      Given the persisted-state store declares "state"
      And a job "report-1" with the steps:
        | step  | tool      | args | records           | marks           |
        | fetch | fetch_doc |      | doc_id=$result.id | fetched=true    |
        | sum   | summarise |      |                   | summarised=true |
      And the job tool "fetch_doc" returns {"id": "doc-9"}
      When the job runs and is killed after step 1
      And the agent remembers the facts:
        | subject  | statement                | kind       | source       | evidence |
        | doc.tone | The user wants it brief  | preference | person:alice | said so  |
      And the persisted state is exported
      Then the export contains the lines:
        | line                                          |
        | [job "report-1"]                              |
        | step.001 = {"name": "fetch", "status": "done"}   |
        | step.002 = {"name": "sum", "status": "pending"}  |
        | values.doc_id = "doc-9"                       |
        | [fact "doc.tone"]                             |
        | statement = "The user wants it brief"         |
        | trust = "trusted"                             |
        | origin = "concluded"                          |
