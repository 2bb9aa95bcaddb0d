Feature: Candidates: answers match the request in count and order
  A request asks for N candidates for each of its inputs. The answer holds one
  entry per input, in input order, and one answer per candidate, in candidate
  order, whatever order the package computed them in. A candidate that failed
  keeps its place as an error.

  Troubleshooting: every commander call on the timeline names its request, input
  and candidate. When the decisions come back in the order the timeline shows
  them computed rather than in candidate order, the package returned its work
  list instead of reassembling the answer.

  Rule: Exactly one answer per requested candidate, in candidate order

    @CA-001 @CA-021
    Scenario Outline: Candidates <n> computed in <order> order come back in candidate order
      Given the candidates package computes inputs and candidates in <order> order
      And candidates request "r1" sends input "ep-1" with an empty memory, instruction "Name a harbour." and <n> candidates
      And the commander replies "<replies>" in call order
      When the candidates package answers the requests
      Then input "ep-1" of request "r1" gets <n> candidate answers
      And the decisions of input "ep-1" of request "r1" say "<decisions>"
      And each candidate answer of input "ep-1" of request "r1" carries the commander output the timeline shows for that candidate

      Examples: computed in request order
        | order   | n | replies                       | decisions                     |
        | request | 1 | Piraeus                       | Piraeus                       |
        | request | 2 | Piraeus, Rafina               | Piraeus, Rafina               |
        | request | 3 | Piraeus, Rafina, Lavrio       | Piraeus, Rafina, Lavrio       |

      Examples: computed back to front
        | order   | n | replies                       | decisions                     |
        | reverse | 1 | Piraeus                       | Piraeus                       |
        | reverse | 2 | Piraeus, Rafina               | Rafina, Piraeus               |
        | reverse | 3 | Piraeus, Rafina, Lavrio       | Lavrio, Rafina, Piraeus       |

    @CA-001 @CA-021
    Scenario: Candidates that fail keep their place among the answers
      Given the candidates package computes inputs and candidates in reverse order
      And candidates request "r1" sends input "ep-1" with an empty memory, instruction "Name a harbour." and 3 candidates
      And the commander replies in call order:
        | reply   | fails             |
        | Lavrio  |                   |
        |         | sampling failed   |
        | Piraeus |                   |
      When the candidates package answers the requests
      Then input "ep-1" of request "r1" gets 3 candidate answers
      And the candidate answers of input "ep-1" of request "r1" are:
        | status | say     | error            |
        | ok     | Piraeus |                  |
        | error  |         | commander-failed |
        | ok     | Lavrio  |                  |

  Rule: One entry per input, in input order

    @CA-021 @CA-022
    Scenario: Candidates answer several episodes of one request in input order
      Given the candidates package computes inputs and candidates in reverse order
      And candidates request "r1" sends input "athens" with an empty memory, instruction "Name a harbour." and 1 candidate
      And candidates request "r1" sends input "crete" with an empty memory, instruction "Name a harbour." and 2 candidates
      And candidates request "r1" sends input "rhodes" with an empty memory, instruction "Name a harbour." and 1 candidate
      And the commander replies "Mandraki, Souda, Heraklion, Piraeus" in call order
      When the candidates package answers the requests
      Then the answers to candidates request "r1" are for the inputs "athens, crete, rhodes"
      And the decisions of input "athens" of request "r1" say "Piraeus"
      And the decisions of input "crete" of request "r1" say "Heraklion, Souda"
      And the decisions of input "rhodes" of request "r1" say "Mandraki"
      And no candidate memory of input "crete" of request "r1" holds another candidate's exchange
