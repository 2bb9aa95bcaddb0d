Feature: Candidates: internal steps record every component call
  Alongside its decision, every candidate returns the internal steps it ran: one
  record per component call, in execution order, with an id stable within the
  candidate, the component, the origin (model or coaching), the full prompt as
  the model received it, the structured input elements and the raw output. A
  candidate that failed keeps the records it got through, the failing one
  included.

  Troubleshooting: each record is compared with what the kit's timeline saw the
  component receive and return. A full prompt that differs from the timeline's
  request was recorded from the wrong rendering (often the one before a
  summary); records missing from a failed candidate were dropped on the error
  path.

  Background:
    Given a candidates package with the default summary threshold

  Rule: Each record carries id, component, origin, full prompt, input elements and raw output

    @CA-018 @CA-017 @golden
    Scenario: Candidates golden example: the record of a single commander call
      Given candidates request "r1" sends input "ep-1" with an empty memory, instruction "Say hello." and 1 candidate
      And the commander replies in call order:
        | reply                        |
        | {"say":"Hello!","action":{}} |
      When the candidates package answers the requests
      Then the internal step "step-0" of candidate 0 of input "ep-1" of request "r1" is:
        """
        {"id": "step-0",
         "component": "commander",
         "origin": "model",
         "full_prompt": "user: Say hello.\nassistant:",
         "input_elements": {"messages": [{"role": "user", "content": "Say hello."}]},
         "output_raw": "{\"say\":\"Hello!\",\"action\":{}}"}
        """
      And the decisions of input "ep-1" of request "r1" say "Hello!"

  Rule: Records follow execution order with positional ids in every candidate

    @CA-017 @CA-018
    Scenario: Candidates record the summarizer before the commander in each candidate
      Given a candidates package whose summary threshold is 60
      And candidates request "r1" sends input "ep-1" with the memory below, instruction "And tomorrow?" and 2 candidates
        """
        {"history": [{"role": "user", "content": "What is the weather in Hydra today?"},
                     {"role": "assistant", "content": "Sunny and calm."}]}
        """
      And the summarizer replies "Weather in Hydra: sunny." in call order
      And the commander replies "Windy., Rainy." in call order
      When the candidates package answers the requests
      Then the internal steps of candidate 0 of input "ep-1" of request "r1" are:
        | id     | component  | origin | output_raw               |
        | step-0 | summarizer | model  | Weather in Hydra: sunny. |
        | step-1 | commander  | model  | Windy.                   |
      And the internal steps of candidate 1 of input "ep-1" of request "r1" are:
        | id     | component  | origin | output_raw               |
        | step-0 | summarizer | model  | Weather in Hydra: sunny. |
        | step-1 | commander  | model  | Rainy.                   |
      And every internal step of input "ep-1" of request "r1" records what the timeline shows the component received and returned

  Rule: A failed candidate keeps the records it got through

    @CA-019 @CA-017
    Scenario: Candidates keep the record of a failed commander call
      Given candidates request "r1" sends input "ep-1" with an empty memory, instruction "Say hello." and 1 candidate
      And the commander replies in call order:
        | reply | fails                     |
        |       | commander returned no JSON |
      When the candidates package answers the requests
      Then the candidate answers of input "ep-1" of request "r1" are:
        | status | error            |
        | error  | commander-failed |
      And the internal step "step-0" of candidate 0 of input "ep-1" of request "r1" is:
        """
        {"id": "step-0",
         "component": "commander",
         "origin": "model",
         "full_prompt": "user: Say hello.\nassistant:",
         "input_elements": {"messages": [{"role": "user", "content": "Say hello."}]},
         "output_raw": null,
         "error": {"type": "CommanderError", "message": "commander returned no JSON"}}
        """

  Rule: Coached calls are recorded with origin coaching

    @CA-020
    Scenario: Candidates record a coached commander call as coaching
      Given candidates request "r1" sends input "ep-1" with an empty memory, instruction "Say hello." and 2 candidates
      And the commander call of candidate 1 of input "ep-1" of request "r1" is coached with '{"say":"Good morning!","action":{}}'
      And the commander replies "Hello!" in call order
      When the candidates package answers the requests
      Then the internal steps of candidate 0 of input "ep-1" of request "r1" are:
        | id     | component | origin | output_raw |
        | step-0 | commander | model  | Hello!     |
      And the internal steps of candidate 1 of input "ep-1" of request "r1" are:
        | id     | component | origin   | output_raw                          |
        | step-0 | commander | coaching | {"say":"Good morning!","action":{}} |
      And every internal step of input "ep-1" of request "r1" records what the timeline shows the component received and returned
      And the decisions of input "ep-1" of request "r1" say "Hello!, Good morning!"
