Feature: Strict-write default mode still tells the caller why
  Without strict write a failed task's raw output stays in memory and in the
  model's view, the turn ends in ERROR with an empty reply, and no
  task_failed action is emitted. The caller still gets a `taskErrors` entry
  naming the task and the reason; it is for the caller only and never reaches
  memory or the model. End users see a generic notice, never the reason.

  Troubleshooting: if the reason shows up in a later model call, the runtime
  stored the caller's entry in conversation memory.

  Background:
    Given a strict-write agent with the pipeline:
      | task        | kind   | writes                                            |
      | weather     | tool   | data city = "Paris"; output notes += "looking up" |
      | ai.labs.llm | llm    |                                                   |
      | output      | output |                                                   |

  Rule: the raw output stays visible and the turn stops

    @SW-014 @SW-015 @golden @with-second-run
    Scenario: Strict-write default mode keeps the raw error in the next model call
      Given the strict-write agent has no memory policy
      And the strict-write task "weather" fails on its next call with "java.net.ConnectException: Connection refused"
      When the strict-write agent answers "What's the weather?" and then "Try again?"
      Then the strict-write turn 1 ends in state "ERROR"
      And the strict-write reply of turn 1 is empty
      And the strict-write task "ai.labs.llm" does not run in turn 1
      And the strict-write data "city" of turn 1 is visible as "Paris"
      And in turn 2 the strict-write model "ai.labs.llm" sees "java.net.ConnectException: Connection refused"
      And the strict-write memory of turn 1 holds no digest
      And the strict-write actions of turn 1 name no failed task

  Rule: the caller, and only the caller, learns the reason

    @SW-016 @SW-017 @with-second-run
    Scenario: Strict-write default mode gives the caller a task error that memory never holds
      Given the strict-write agent has no memory policy
      And the strict-write task "weather" fails on its next call with "HTTP 503: Service Unavailable"
      When the strict-write agent answers "What's the weather?" and then "Try again?"
      Then the strict-write caller gets one task error for "weather" in turn 1
      And the strict-write task error of turn 1 reads "Task 'eddi://weather' failed: HTTP 503: Service Unavailable"
      And the strict-write memory of turn 1 holds no digest
      And in turn 2 the strict-write model "ai.labs.llm" does not see "Task 'eddi://weather' failed"
      And the strict-write actions of turn 1 name no failed task

    @SW-016 @commit-flags
    Scenario Outline: Strict-write <mode> mode gives the caller the task error
      Given strict write is enabled with onFailure "<mode>"
      And the strict-write task "weather" fails on its next call with "HTTP 503: Service Unavailable"
      When the strict-write agent answers "What's the weather?"
      Then the strict-write caller gets one task error for "weather" in turn 1

      Examples: reporting modes
        | mode     |
        | digest   |
        | keep_all |

    @SW-025
    Scenario Outline: Strict-write end user sees a generic notice, never the provider's text (<policy>)
      Given strict write is <policy>
      And the strict-write task "ai.labs.llm" fails on its next call with "Provider rejected the request: quota exceeded for org-7"
      When the strict-write agent answers "hello"
      Then the strict-write end user sees only the generic notice in turn 1
      And the strict-write turn 1 ends in state "ERROR"

      Examples: policies
        | policy                            |
        | disabled with onFailure "digest"  |
        | enabled with onFailure "digest"   |
        | enabled with onFailure "keep_all" |
