Feature: Candidates: each candidate returns a complete, independent memory
  A package answering a generation service gets one memory per input and returns,
  for each of the N candidates it was asked for, a decision and a complete
  replacement memory. The service keeps each candidate's memory for that
  trajectory alone, so the package must build every prompt from the memory it was
  given and never from state kept in its own process.

  Troubleshooting: compare the commander prompt the timeline shows with the memory
  the script supplied. Text in the prompt that is not in the supplied memory points
  at a process-wide conversation list or a cache keyed by input id; a returned
  memory missing earlier history points at a patch returned instead of the whole
  memory; a sibling's exchange in a candidate's memory points at one memory object
  shared between candidates.

  Background:
    Given a candidates package with the default summary threshold

  Rule: Every candidate returns the whole memory of its trajectory

    @CA-002 @CA-009
    Scenario: Candidates memory carries the prior history, summary and notes plus the new exchange
      Given candidates request "r1" sends input "ep-1" with the memory below, instruction "And the return trip?" and 1 candidate
        """
        {"summary": "The user is planning a ferry trip to Hydra.",
         "history": [{"role": "user", "content": "When does the first ferry leave?"},
                     {"role": "assistant", "content": "At 7:40 from Piraeus."}],
         "memory_list": ["prefers window seats"]}
        """
      And the commander replies "The last ferry back leaves at 19:00." in call order
      When the candidates package answers the requests
      Then candidate 0 of input "ep-1" of request "r1" returns the memory:
        """
        {"summary": "The user is planning a ferry trip to Hydra.",
         "history": [{"role": "user", "content": "When does the first ferry leave?"},
                     {"role": "assistant", "content": "At 7:40 from Piraeus."},
                     {"role": "user", "content": "And the return trip?"},
                     {"role": "assistant", "content": "The last ferry back leaves at 19:00."}],
         "memory_list": ["prefers window seats"]}
        """

  Rule: Candidates of one input share no mutable state

    @CA-003
    Scenario: Candidates each carry only their own exchange
      Given candidates request "r1" sends input "ep-1" with the memory below, instruction "Suggest a dinner place." and 3 candidates
        """
        {"history": [{"role": "user", "content": "We land in Athens at six."},
                     {"role": "assistant", "content": "Noted: arrival at 18:00."}]}
        """
      And the commander replies "Try Kuzina., Try Diporto., Try Karamanlidika." in call order
      When the candidates package answers the requests
      Then no candidate memory of input "ep-1" of request "r1" holds another candidate's exchange
      And changing the memory of candidate 0 of input "ep-1" of request "r1" leaves every other candidate's memory unchanged
      And the memories supplied in the candidates script are unchanged

    @CA-003 @CA-004
    Scenario: Candidates branches continued separately never see each other
      Given candidates request "r1" sends input "ep-1" with an empty memory, instruction "Pick a colour." and 2 candidates
      And the commander replies "Blue., Green." in call order
      And candidates request "r2" continues candidate 0 of input "ep-1" of request "r1" as input "ep-1" with instruction "Why that one?" and 1 candidate
      And candidates request "r3" continues candidate 1 of input "ep-1" of request "r1" as input "ep-1" with instruction "Why that one?" and 1 candidate
      And the commander replies "Calm., Fresh." in call order
      When the candidates package answers the requests
      Then the commander prompt for candidate 0 of input "ep-1" of request "r3" is:
        """
        user: Pick a colour.
        assistant: Green.
        user: Why that one?
        assistant:
        """
      And no commander prompt for input "ep-1" of request "r3" contains "Blue."
      And no commander prompt for input "ep-1" of request "r2" contains "Green."

  Rule: The supplied memory is the only source of interaction state

    @CA-004 @with-second-run
    Scenario: Candidates input id reused with another memory gets a prompt from that memory alone
      Given candidates request "r1" sends input "session-7" with the memory below, instruction "Book it." and 1 candidate
        """
        {"history": [{"role": "user", "content": "Find me a hotel in Nafplio."},
                     {"role": "assistant", "content": "Hotel Byron has a room."}]}
        """
      And candidates request "r2" sends input "session-7" with the memory below, instruction "Book it." and 1 candidate
        """
        {"history": [{"role": "user", "content": "Find me a table for two."},
                     {"role": "assistant", "content": "Aiolos has one at eight."}]}
        """
      And the commander replies "Booked Hotel Byron., Booked Aiolos." in call order
      When the candidates package answers the requests
      Then the commander prompt for candidate 0 of input "session-7" of request "r2" is:
        """
        user: Find me a table for two.
        assistant: Aiolos has one at eight.
        user: Book it.
        assistant:
        """

    @CA-004 @with-second-run
    Scenario: Candidates input id reused with another long memory is summarized from that memory
      Given a candidates package whose summary threshold is 80
      And candidates request "r1" sends input "session-7" with the memory below, instruction "Book it." and 1 candidate
        """
        {"history": [{"role": "user", "content": "Find me a hotel in Nafplio for the weekend."},
                     {"role": "assistant", "content": "Hotel Byron has a room with a sea view."}]}
        """
      And candidates request "r2" sends input "session-7" with the memory below, instruction "Book it." and 1 candidate
        """
        {"history": [{"role": "user", "content": "Find me a table for two tonight."},
                     {"role": "assistant", "content": "Aiolos has one at eight by the harbour."}]}
        """
      And the summarizer replies "Hotel Byron chosen., Aiolos at eight chosen." in call order
      And the commander replies "Booked Hotel Byron., Booked Aiolos." in call order
      When the candidates package answers the requests
      Then the commander prompt for candidate 0 of input "session-7" of request "r2" is:
        """
        summary: Aiolos at eight chosen.
        user: Book it.
        assistant:
        """
      And no commander prompt for input "session-7" of request "r2" contains "Hotel Byron"

    @CA-006 @with-second-run
    Scenario Outline: Candidates memory that is <memory kind> starts a new interaction
      Given candidates request "r1" sends input "session-9" with the memory below, instruction "Remember my name is Ada." and 1 candidate
        """
        {"history": [{"role": "user", "content": "I am allergic to nuts."},
                     {"role": "assistant", "content": "I will keep that in mind."}]}
        """
      And candidates request "r2" sends input "session-9" with the memory '<memory>', instruction "What do you know about me?" and 1 candidate
      And the commander replies "Hello Ada., Nothing yet." in call order
      When the candidates package answers the requests
      Then the commander prompt for candidate 0 of input "session-9" of request "r2" is:
        """
        user: What do you know about me?
        assistant:
        """

      Examples: empty memories
        | memory kind     | memory |
        | an empty object | {}     |
        | null            | null   |

    @CA-006 @with-second-run
    Scenario: Candidates memory initialised by the scenario starts a new interaction
      Given candidates request "r1" sends input "session-9" with the memory below, instruction "Remember my name is Ada." and 1 candidate
        """
        {"history": [{"role": "user", "content": "I am allergic to nuts."},
                     {"role": "assistant", "content": "I will keep that in mind."}]}
        """
      And candidates request "r2" sends input "session-9" with the memory '{"history": [{"role": "system", "content": "The guest is in room 12."}]}', instruction "What do you know about me?" and 1 candidate
      And the commander replies "Hello Ada., You are in room 12." in call order
      When the candidates package answers the requests
      Then the commander prompt for candidate 0 of input "session-9" of request "r2" is:
        """
        system: The guest is in room 12.
        user: What do you know about me?
        assistant:
        """

  Rule: A returned memory is enough to resume

    @CA-005 @CA-002 @with-restart
    Scenario: Candidates fresh package instance resumes from the returned memory alone
      Given a candidates package whose summary threshold is 100
      And candidates request "r1" sends input "trip" with the memory below, instruction "Say hello." and 1 candidate
        """
        {"history": [{"role": "user", "content": "Tell me everything about the ferries between Piraeus and the Saronic islands."},
                     {"role": "assistant", "content": "There are many."}]}
        """
      And the summarizer replies "Ferries discussed." in call order
      And the commander replies "Hello!, Fine., Fine." in call order
      And candidates request "r2" continues candidate 0 of input "trip" of request "r1" as input "trip" with instruction "How are you?" and 1 candidate
      And candidates request "r3" continues candidate 0 of input "trip" of request "r1" as input "trip" with instruction "How are you?" and 1 candidate
      And candidates request "r3" is answered by a fresh package instance in a fresh process
      When the candidates package answers the requests
      Then the commander prompt for candidate 0 of input "trip" of request "r3" is:
        """
        summary: Ferries discussed.
        user: Say hello.
        assistant: Hello!
        user: How are you?
        assistant:
        """
      And the commander prompts for input "trip" of request "r2" and for input "trip" of request "r3" are the same
      And the memories of input "trip" of request "r2" and of input "trip" of request "r3" are the same

  Rule: Accepted initial state is kept and incompatible memory is reported

    @CA-007
    Scenario: Candidates keep memory keys the package does not use
      Given candidates request "r1" sends input "ep-1" with the memory below, instruction "Hi." and 2 candidates
        """
        {"persona": {"name": "Captain Ada", "tone": "brisk"}, "plan": ["board", "sail"], "history": []}
        """
      And the commander replies "Ahoy., Welcome aboard." in call order
      When the candidates package answers the requests
      Then candidate 0 of input "ep-1" of request "r1" returns the memory:
        """
        {"persona": {"name": "Captain Ada", "tone": "brisk"}, "plan": ["board", "sail"],
         "history": [{"role": "user", "content": "Hi."}, {"role": "assistant", "content": "Ahoy."}],
         "summary": null, "memory_list": []}
        """
      And candidate 1 of input "ep-1" of request "r1" returns the memory:
        """
        {"persona": {"name": "Captain Ada", "tone": "brisk"}, "plan": ["board", "sail"],
         "history": [{"role": "user", "content": "Hi."}, {"role": "assistant", "content": "Welcome aboard."}],
         "summary": null, "memory_list": []}
        """

    @CA-008
    Scenario Outline: Candidates report an incompatible memory where <problem>
      Given candidates request "r1" sends input "bad" with the memory '<memory>', instruction "Go on." and 2 candidates
      And candidates request "r1" sends input "good" with an empty memory, instruction "Go on." and 1 candidate
      And the commander replies "Going on., Mixed in., Mixed in again." in call order
      When the candidates package answers the requests
      Then every candidate answer of input "bad" of request "r1" is an "incompatible-memory" error
      And every error of input "bad" of request "r1" names the memory key "<key>"
      And candidate answers of input "bad" of request "r1" that are errors carry no decision and no memory
      And the commander is not called for input "bad" of request "r1"
      And the candidate answers of input "good" of request "r1" are:
        | status | say       |
        | ok     | Going on. |

      Examples: memories the full-history schema cannot read
        | problem                      | memory                                             | key         |
        | history is text              | {"history": "We talked about ferries."}            | history     |
        | the memory is a list         | [{"role": "user", "content": "hi"}]                | memory      |
        | a message has no content     | {"history": [{"role": "user"}]}                    | history[0]  |
        | the summary is a number      | {"summary": 42}                                    | summary     |
        | memory_list is an object     | {"memory_list": {"seat": "window"}}                | memory_list |

  Rule: Inputs sent together are independent episodes

    @CA-022
    Scenario: Candidates episodes sent in one request do not leak into each other
      Given candidates request "r1" sends input "alice" with the memory below, instruction "Who am I?" and 1 candidate
        """
        {"history": [{"role": "user", "content": "My name is Alice."},
                     {"role": "assistant", "content": "Hello Alice."}]}
        """
      And candidates request "r1" sends input "bob" with an empty memory, instruction "Who am I?" and 1 candidate
      And the commander replies "You are Alice., I do not know yet." in call order
      When the candidates package answers the requests
      Then the commander prompt for candidate 0 of input "bob" of request "r1" is:
        """
        user: Who am I?
        assistant:
        """
      And candidate 0 of input "bob" of request "r1" returns the memory:
        """
        {"history": [{"role": "user", "content": "Who am I?"},
                     {"role": "assistant", "content": "I do not know yet."}],
         "summary": null, "memory_list": []}
        """
