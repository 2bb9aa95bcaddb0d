Feature: Persisted state: durable knowledge carries provenance, is superseded, rechecked, capped and deletable
  Durable facts outlive the job that wrote them. Each one says who wrote it,
  from what, with what evidence and when; a new fact about a subject replaces
  the old one; past its recheck date a fact is shown as unverified; the
  knowledge base has a cap with a documented eviction order; and forgetting is
  an operation.

  Troubleshooting: read the stored fact with get_fact and compare its fields
  with the request. A written_at that is not the scenario clock means the
  runtime used the wall clock; two facts for one subject mean the runtime (or
  the store) appends instead of superseding.

  Background:
    Given the persisted-state store declares "knowledge"

  Rule: every fact carries its provenance

    @PS-012 @knowledge
    Scenario: A durable fact keeps who wrote it, from what, with what evidence and when
      Given 3 days have passed on the scenario clock
      When the agent remembers the facts:
        | subject        | statement                        | kind        | source         | evidence                        | writer       |
        | billing.limit  | The billing API allows 50 calls  | observation | tool:http_get  | HTTP 429 after the 51st request | agent:runner |
      Then the stored fact "billing.limit" has the provenance:
        | field      | value                           |
        | writer     | agent:runner                    |
        | source     | tool:http_get                   |
        | evidence   | HTTP 429 after the 51st request |
        | written_at | 2026-01-04T00:00:00Z            |

  Rule: a new fact about a subject replaces the old one

    @PS-015 @knowledge
    Scenario: A durable fact about a known subject supersedes the earlier one
      When the agent remembers the facts:
        | subject    | statement                      | kind        | source       | evidence       |
        | user.role  | The user is a staff engineer   | observation | person:alice | stated in chat |
        | user.role  | The user is an engineering lead | observation | person:alice | stated in chat |
      And the agent recalls "user.role"
      Then the recall shows only "The user is an engineering lead" for "user.role"
      And the knowledge base holds the subjects "user.role"

  Rule: facts past their recheck date are unverified

    @PS-013 @knowledge
    Scenario Outline: A durable fact is shown as unverified once its recheck date has passed
      Given the lifetime of "observation" facts is 30 days
      When the agent remembers the facts:
        | subject       | statement                      | kind        | source        | evidence          |
        | service.limit | The service allows 100 workers | observation | tool:describe | describe output   |
      And <days> days pass on the scenario clock
      And the agent recalls "service.limit"
      Then the recalled fact "service.limit" is shown as "<status>"

      Examples: a day before and after the recheck date, and long after
        | days | status     |
        | 29   | current    |
        | 31   | unverified |
        | 200  | unverified |

    @PS-013 @knowledge
    Scenario: A durable fact written again after its recheck date is current again
      Given the lifetime of "observation" facts is 30 days
      When the agent remembers the facts:
        | subject       | statement                      | kind        | source        | evidence        |
        | service.limit | The service allows 100 workers | observation | tool:describe | describe output |
      And 45 days pass on the scenario clock
      And the agent remembers the facts:
        | subject       | statement                      | kind        | source        | evidence        |
        | service.limit | The service allows 100 workers | observation | tool:describe | checked again   |
      And the agent recalls "service.limit"
      Then the recalled fact "service.limit" is shown as "current"

    @PS-014 @knowledge @golden
    Scenario: A durable preference a person stated outlives an inference by default
      When the agent remembers the facts:
        | subject        | statement                          | kind       | source       | evidence              |
        | reply.language | The user wants replies in French   | preference | person:alice | said so in chat       |
        | user.timezone  | The user probably works from Paris | inference  | agent        | message timestamps    |
      Then the stored fact "reply.language" is rechecked later than "user.timezone"

  Rule: the knowledge base has a cap

    @PS-016 @knowledge
    Scenario: Durable knowledge at its cap evicts a fact to keep a new one
      Given the knowledge base holds at most 3 facts
      And the lifetime of "inference" facts is 10 days
      When the agent remembers the facts:
        | subject | statement             | kind        | source | evidence |
        | fact.a  | A is an observation   | observation | agent  | seen     |
        | fact.b  | B is an inference     | inference   | agent  | guessed  |
        | fact.c  | C is an observation   | observation | agent  | seen     |
      And 20 days pass on the scenario clock
      And the agent remembers the facts:
        | subject | statement             | kind        | source | evidence |
        | fact.d  | D is an observation   | observation | agent  | seen     |
      Then the knowledge base holds 3 facts, among them "fact.d"
      And the remember request for "fact.d" evicted one fact, now gone from the store

    @PS-016 @knowledge
    Scenario: Durable knowledge at its cap evicts nothing when a known subject is restated
      Given the knowledge base holds at most 2 facts
      When the agent remembers the facts:
        | subject | statement           | kind        | source | evidence |
        | fact.b  | B came first        | observation | agent  | seen     |
        | fact.a  | A came second       | observation | agent  | seen     |
        | fact.a  | A was restated      | observation | agent  | seen     |
      Then the knowledge base holds 2 facts, among them "fact.a, fact.b"
      And the remember request for "fact.a" evicted nothing

  Rule: deletion is an operation

    @PS-017 @knowledge
    Scenario: A forgotten durable fact is gone from the store and from recall
      When the agent remembers the facts:
        | subject     | statement                     | kind        | source | evidence |
        | deploy.slot | Deploys happen at 14:00 UTC   | observation | agent  | calendar |
        | team.size   | The team has six engineers    | observation | agent  | roster   |
      And the agent forgets "deploy.slot"
      And the agent recalls every fact
      Then the knowledge base holds the subjects "team.size"
      And the recall does not show "deploy.slot"
