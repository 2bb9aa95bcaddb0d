Feature: Candidates: a summarizer ahead of the commander, run once per input
  The summarizing design of document 003 renders the commander prompt first. When
  that prompt is longer than the threshold (5,000 characters by default, compared
  strictly) and there is history, a summarizer condenses the previous summary and
  the history, never the current instruction. A valid summary replaces the memory's
  summary and empties its history; it is computed once and shared by every
  candidate of the input before the candidates are sampled.

  Troubleshooting: the timeline shows every summarizer and commander call with the
  request, input and candidate it served. A summarizer call per candidate, a
  commander call after a failed summary, or an instruction inside the summarizer's
  prompt are visible there directly; a threshold off by one shows at exactly the
  threshold.

  Rule: The summarizer runs only when the commander prompt is longer than the threshold

    @CA-010
    Scenario Outline: Candidates summarize a <length> character prompt when the threshold is <threshold>
      Given a candidates package whose summary threshold is <threshold>
      And candidates request "r1" sends input "ep-1" with a history making its commander prompt <length> characters long, instruction "Plan the trip." and 1 candidate
      And the summarizer replies "The user asked about ferries." in call order
      And the commander replies "Here is a plan." in call order
      When the candidates package answers the requests
      Then the summarizer is called <calls> times for input "ep-1" of request "r1"
      And the candidate answers of input "ep-1" of request "r1" are:
        | status | say             |
        | ok     | Here is a plan. |

      Examples: the default threshold of 5,000 characters
        | threshold   | length | calls |
        | the default | 4999   | 0     |
        | the default | 5000   | 0     |
        | the default | 5001   | 1     |

      Examples: a configured threshold
        | threshold | length | calls |
        | 120       | 120    | 0     |
        | 120       | 121    | 1     |

    @CA-010
    Scenario Outline: Candidates count a Greek prompt with emoji in characters: <length> against a threshold of <threshold>
      Given a candidates package whose summary threshold is <threshold>
      And candidates request "r1" sends input "ep-1" with a Greek history making its commander prompt <length> characters long, instruction "Σχέδιο για το ταξίδι 🗺" and 1 candidate
      And the summarizer replies "Ο χρήστης ρώτησε για τα πλοία." in call order
      And the commander replies "Ορίστε ένα σχέδιο." in call order
      When the candidates package answers the requests
      Then the summarizer is called <calls> times for input "ep-1" of request "r1"

      Examples: letters of two bytes and emoji of four
        | threshold   | length | calls |
        | 200         | 200    | 0     |
        | 200         | 201    | 1     |
        | the default | 5000   | 0     |

    @CA-010
    Scenario: Candidates send a prompt of exactly the threshold to the commander unchanged
      Given a candidates package with the default summary threshold
      And candidates request "r1" sends input "ep-1" with a history making its commander prompt 5000 characters long, instruction "Plan the trip." and 1 candidate
      And the summarizer replies "The user asked about ferries." in call order
      And the commander replies "Here is a plan." in call order
      When the candidates package answers the requests
      Then the commander prompt for candidate 0 of input "ep-1" of request "r1" is 5000 characters long

    @CA-011
    Scenario: Candidates with empty history are not summarized however long the prompt
      Given a candidates package with the default summary threshold
      And candidates request "r1" sends input "ep-1" with an empty memory and an instruction of 6000 characters, for 1 candidate
      And the summarizer replies "Nothing to summarize." in call order
      And the commander replies "Understood." in call order
      When the candidates package answers the requests
      Then the summarizer is not called for input "ep-1" of request "r1"
      And the commander prompt for candidate 0 of input "ep-1" of request "r1" is 6017 characters long
      And the candidate answers of input "ep-1" of request "r1" are:
        | status | say         |
        | ok     | Understood. |

  Rule: The summarizer sees the previous summary and history, never the current instruction

    @CA-012
    Scenario: Candidates keep the current instruction away from the summarizer
      Given a candidates package whose summary threshold is 80
      And candidates request "r1" sends input "ep-1" with the memory below, instruction "Book the 7:40 ferry to Hydra." and 1 candidate
        """
        {"summary": "The user travels in May.",
         "history": [{"role": "user", "content": "Which islands are close to Athens?"},
                     {"role": "assistant", "content": "Aegina, Poros and Hydra."}]}
        """
      And the summarizer replies "The user travels in May and asked about nearby islands." in call order
      And the commander replies "Booked." in call order
      When the candidates package answers the requests
      Then the summarizer is called 1 time for input "ep-1" of request "r1"
      And the summarizer for input "ep-1" of request "r1" is never shown "7:40 ferry"
      And the summarizer for input "ep-1" of request "r1" is shown the supplied history and the previous summary "The user travels in May."
      And the commander prompt for candidate 0 of input "ep-1" of request "r1" is:
        """
        summary: The user travels in May and asked about nearby islands.
        user: Book the 7:40 ferry to Hydra.
        assistant:
        """

  Rule: A valid summary replaces the summary and empties the history before the commander runs

    @CA-013
    Scenario: Candidates after a summary start from the new summary and an empty history
      Given a candidates package whose summary threshold is 80
      And candidates request "r1" sends input "ep-1" with the memory below, instruction "Anything else?" and 1 candidate
        """
        {"summary": "Older talk about hotels.",
         "history": [{"role": "user", "content": "Which islands are close to Athens?"},
                     {"role": "assistant", "content": "Aegina, Poros and Hydra."}],
         "memory_list": ["likes quiet places"]}
        """
      And the input "ep-1" of request "r1" offers the tools "ferry_times, book_hotel"
      And the summarizer replies "Hotels and nearby islands discussed." in call order
      And the commander replies "Pack light." in call order
      When the candidates package answers the requests
      Then the commander prompt for candidate 0 of input "ep-1" of request "r1" is:
        """
        tools: ferry_times, book_hotel
        summary: Hotels and nearby islands discussed.
        user: Anything else?
        assistant:
        """
      And candidate 0 of input "ep-1" of request "r1" returns the memory:
        """
        {"summary": "Hotels and nearby islands discussed.",
         "history": [{"role": "user", "content": "Anything else?"},
                     {"role": "assistant", "content": "Pack light."}],
         "memory_list": ["likes quiet places"]}
        """

  Rule: The summary is computed once per input and shared by all its candidates

    @CA-014 @CA-017
    Scenario: Candidates share one summary computed before they are sampled
      Given a candidates package whose summary threshold is 80
      And candidates request "r1" sends input "ep-1" with the memory below, instruction "Where should we eat?" and 3 candidates
        """
        {"history": [{"role": "user", "content": "We arrive in Nafplio on Friday evening."},
                     {"role": "assistant", "content": "Friday evening arrival noted."}]}
        """
      And the summarizer replies "Arrival in Nafplio on Friday., A second summary., A third summary." in call order
      And the commander replies "Try the harbour., Try the old town., Try the castle." in call order
      When the candidates package answers the requests
      Then the summarizer is called 1 time for input "ep-1" of request "r1"
      And every candidate of input "ep-1" of request "r1" starts its internal steps with the same summarizer record
      And the memory of candidate 0 of input "ep-1" of request "r1" has the summary "Arrival in Nafplio on Friday."
      And the memory of candidate 1 of input "ep-1" of request "r1" has the summary "Arrival in Nafplio on Friday."
      And the memory of candidate 2 of input "ep-1" of request "r1" has the summary "Arrival in Nafplio on Friday."

  Rule: A failed summary fails every candidate of the input and the commander is not called

    @CA-015 @CA-019
    Scenario Outline: Candidates fail together when the summarizer <failure>
      Given a candidates package whose summary threshold is 80
      And candidates request "r1" sends input "ep-1" with the memory below, instruction "What now?" and 2 candidates
        """
        {"history": [{"role": "user", "content": "We arrive in Nafplio on Friday evening."},
                     {"role": "assistant", "content": "Friday evening arrival noted."}]}
        """
      And <summarizer step>
      And the commander replies "Rest., Walk." in call order
      When the candidates package answers the requests
      Then every candidate answer of input "ep-1" of request "r1" is a "summary-failed" error
      And candidate answers of input "ep-1" of request "r1" that are errors carry no decision and no memory
      And the commander is not called for input "ep-1" of request "r1"
      And the internal steps of candidate 1 of input "ep-1" of request "r1" are:
        | id     | component  | origin | output_raw   | failed |
        | step-0 | summarizer | model  | <output_raw> | yes    |
      And every internal step of input "ep-1" of request "r1" records what the timeline shows the component received and returned

      Examples: summarizer failures
        | failure                 | summarizer step                                          | output_raw |
        | raises                  | the summarizer fails with "summarizer model unavailable" | <null>     |
        | returns a blank summary | the summarizer replies with a blank summary              |            |

  Rule: A commander failure fails that candidate alone

    @CA-016 @CA-019
    Scenario: Candidates keep answering when one commander call fails after a good summary
      Given a candidates package whose summary threshold is 80
      And candidates request "r1" sends input "ep-1" with the memory below, instruction "What now?" and 3 candidates
        """
        {"history": [{"role": "user", "content": "We arrive in Nafplio on Friday evening."},
                     {"role": "assistant", "content": "Friday evening arrival noted."}]}
        """
      And the summarizer replies "Arrival on Friday." in call order
      And the commander replies in call order:
        | reply | fails                  |
        | Rest. |                        |
        |       | commander timed out    |
        | Walk. |                        |
      When the candidates package answers the requests
      Then the candidate answers of input "ep-1" of request "r1" are:
        | status | say   | error            |
        | ok     | Rest. |                  |
        | error  |       | commander-failed |
        | ok     | Walk. |                  |
      And candidate answers of input "ep-1" of request "r1" that are errors carry no decision and no memory
      And the internal steps of candidate 1 of input "ep-1" of request "r1" are:
        | id     | component  | origin | output_raw         | failed |
        | step-0 | summarizer | model  | Arrival on Friday. | no     |
        | step-1 | commander  | model  | <null>             | yes    |
      And every internal step of input "ep-1" of request "r1" records what the timeline shows the component received and returned
      And the memory of candidate 0 of input "ep-1" of request "r1" has the summary "Arrival on Friday."
      And the memory of candidate 2 of input "ep-1" of request "r1" has the summary "Arrival on Friday."
      And candidate 2 of input "ep-1" of request "r1" returns the memory:
        """
        {"summary": "Arrival on Friday.",
         "history": [{"role": "user", "content": "What now?"},
                     {"role": "assistant", "content": "Walk."}],
         "memory_list": []}
        """
