Feature: Save policies decide when a run's messages reach the store
  A save policy (message, turn or run) chooses which batches of a run's new
  messages are appended to the thread, and when. The standard conversation of
  these scenarios is one tool round and an answer: the user asks, the model
  calls notify_customer, the tool answers, the model answers.

  Troubleshooting: a failed check prints the batches the store received (the
  roles in each batch, in append order) beside the expected ones. The evidence
  holds the timeline: look for the append that came too early, too late, or
  not at all, and for the outcome event that preceded it.

  Rule: message is the policy used when none is configured

    @SP-001
    Scenario: Save-policy default stores each completed batch as message does
      Given a save-policy agent with no save policy configured
      When the save-policy script is executed
      Then the save-policy run ends "completed"
      And the save-policy appends are "[user] [assistant,tool] [assistant]"

  Rule: an unknown policy name is refused before anything runs

    @SP-002
    Scenario: Save-policy configuration with an unknown policy name is refused at construction
      Given a save-policy agent with the "message" save policy
      And the save-policy configuration names the save policy "batch"
      When the save-policy script is executed
      Then the save-policy configuration is rejected naming the save_policy setting
      And the save-policy runtime neither called the model nor the store

  Rule: each policy appends its own batches of a completed run

    @golden
    Scenario Outline: Save-policy golden batches of one tool round under <policy>
      Given a save-policy agent with the "<policy>" save policy
      When the save-policy script is executed
      Then the save-policy run ends "completed"
      And the save-policy appends are "<batches>"
      And the save-policy thread holds:
        | role      | text     |
        | user      | <prompt> |
        | assistant |          |
        | tool      | notified |
        | assistant | <answer> |

      @SP-005 @SP-006 @SP-007
      Examples: message
        | policy  | batches                             |
        | message | [user] [assistant,tool] [assistant] |

      @SP-008
      Examples: turn
        | policy | batches                           |
        | turn   | [user,assistant,tool] [assistant] |

      @SP-010
      Examples: run
        | policy | batches                          |
        | run    | [user,assistant,tool,assistant] |

  Rule: under message, each batch is appended as soon as it completes

    @SP-005
    Scenario: Save-policy message appends the accepted input before the first model call
      Given a save-policy agent with the "message" save policy
      When the save-policy script is executed
      Then the save-policy timeline order is "input appended > first model call"

    @SP-006
    Scenario: Save-policy message appends a tool call only after its tool ran
      Given a save-policy agent with the "message" save policy
      When the save-policy script is executed
      Then the save-policy timeline order is "tool run > tool call appended > last model call"
      And every stored save-policy tool call has its result in the same batch

    @SP-007
    Scenario: Save-policy message appends the answer after the output guardrail and before the run-end hook
      Given a save-policy agent with the "message" save policy
      When the save-policy script is executed
      Then the save-policy timeline order is "output guardrail > answer appended > run-end hook"

    @SP-007 @with-guardrail
    Scenario: Save-policy message stores the answer as the output guardrail rewrote it
      Given a save-policy agent with the "message" save policy
      And the save-policy output guardrail replaces the answer with "Order A-1 ships on Monday."
      When the save-policy script is executed
      Then the save-policy run ends "completed"
      And the save-policy reply is "Order A-1 ships on Monday."
      And the stored save-policy answer is not the model's own text
      And the save-policy thread holds:
        | role      | text                       |
        | user      | <prompt>                   |
        | assistant |                            |
        | tool      | notified                   |
        | assistant | Order A-1 ships on Monday. |

  Rule: every stored message names its run and its round
    A message carries the round in which it was appended: under run the run's
    one batch is appended in its last round, and all of it carries that round.

    @SP-030
    Scenario Outline: Save-policy <policy> messages carry the run id and a 1-based round
      Given a save-policy agent with the "<policy>" save policy
      When the save-policy script is executed
      Then every stored save-policy message carries its run id and a round counted from 1
      And the stored save-policy rounds are "<rounds>"

      Examples:
        | policy  | rounds  |
        | message | 1,1,1,2 |
        | turn    | 1,1,1,2 |
        | run     | 2,2,2,2 |

    @SP-030 @with-second-run
    Scenario Outline: Save-policy <policy> messages of two runs carry each run's own id and rounds from 1
      Given a save-policy agent with the "<policy>" save policy
      And a later save-policy run sends "Thanks!" and gets the answer "You are welcome."
      When the save-policy script is executed
      Then save-policy run 2 ends "completed"
      And every stored save-policy message carries its run id and a round counted from 1
      And the stored save-policy messages belong to the runs "1,1,1,1,2,2"
      And the stored save-policy rounds are "<rounds>"

      Examples:
        | policy  | rounds      |
        | message | 1,1,1,2,1,1 |
        | turn    | 1,1,1,2,1,1 |
        | run     | 2,2,2,2,1,1 |

  Rule: a run sees the stored history first, then its own new messages

    @SP-031 @SP-012 @with-second-run
    Scenario: Save-policy message run after a failed run sees the completed batches of the failed run
      Given a save-policy agent with the "message" save policy
      And the save-policy run meets the failure point "later model call"
      And a later save-policy run sends "Did it work?" and gets the answer "Partly."
      When the save-policy script is executed
      Then save-policy run 1 ends "failed"
      And save-policy run 2 ends "completed"
      And the save-policy model saw at the first call of run 2:
        | role      | text         |
        | user      | <prompt>     |
        | assistant |              |
        | tool      | notified     |
        | user      | Did it work? |

    @SP-031 @SP-011 @with-second-run
    Scenario: Save-policy run policy keeps a failed run out of the next run's context
      Given a save-policy agent with the "run" save policy
      And the save-policy run meets the failure point "later model call"
      And a later save-policy run sends "Did it work?" and gets the answer "Partly."
      When the save-policy script is executed
      Then save-policy run 2 ends "completed"
      And the save-policy appends are "[user,assistant]"
      And the save-policy model saw at the first call of run 2:
        | role | text         |
        | user | Did it work? |

    @SP-031 @with-second-run
    Scenario: Save-policy turn run sees the previous completed run before its own input
      Given a save-policy agent with the "turn" save policy
      And a later save-policy run sends "Thanks!" and gets the answer "You are welcome."
      When the save-policy script is executed
      Then save-policy run 2 ends "completed"
      And the save-policy model saw at the first call of run 2:
        | role      | text     |
        | user      | <prompt> |
        | assistant |          |
        | tool      | notified |
        | assistant | <answer> |
        | user      | Thanks!  |

    @SP-031 @SP-021 @with-second-run
    Scenario: Save-policy run on a fresh runtime instance sees the history another instance stored
      Given a save-policy agent with no save policy configured
      And a later save-policy run sends "Thanks!" and gets the answer "You are welcome."
      And every later save-policy run runs on a fresh runtime instance
      When the save-policy script is executed
      Then no save-policy append repeats a message id already in the thread
      And the save-policy model saw at the first call of run 2:
        | role      | text     |
        | user      | <prompt> |
        | assistant |          |
        | tool      | notified |
        | assistant | <answer> |
        | user      | Thanks!  |

  Rule: the policy changes what is persisted, never what the run does

    @SP-003
    Scenario Outline: Save-policy run meeting <point> behaves the same under message, turn and run
      Given a save-policy agent with the "message" save policy
      And the save-policy run meets the failure point "<point>"
      When the save-policy script is executed under each save policy
      Then the save-policy run behaves the same under every policy

      Examples:
        | point                     |
        | none                      |
        | tool                      |
        | tool-error hook terminate |
        | later model call          |
        | run-end cancel            |
        | cancellation              |

      @with-guardrail
      Examples: a guardrail fails
        | point            |
        | input guardrail  |
        | output guardrail |

  Rule: buffered and streamed runs persist the same

    @SP-029 @with-streaming
    Scenario Outline: Save-policy <policy> run meeting <point> persists the same batches when streamed
      Given a save-policy agent with the "<policy>" save policy
      And the save-policy run meets the failure point "<point>"
      When the save-policy script is executed buffered and streamed
      Then the buffered and streamed save-policy runs persist the same batches
      And the streamed save-policy run emitted chunk events

      Examples:
        | policy  | point            |
        | message | none             |
        | turn    | none             |
        | run     | none             |
        | message | run-end hook     |
        | turn    | run-end hook     |
        | run     | run-end hook     |

      Examples: cancelled at run end, after the answer streamed
        | policy  | point          |
        | message | run-end cancel |
        | turn    | run-end cancel |
        | run     | run-end cancel |

      @with-store-refusal
      Examples: a refused append
        | policy  | point            |
        | message | last append      |
        | turn    | last append      |
        | run     | last append      |

    @SP-029 @with-streaming
    Scenario Outline: Save-policy <policy> run ending early at <point> persists the same batches when streamed
      Given a save-policy agent with the "<policy>" save policy
      And the save-policy run meets the failure point "<point>"
      When the save-policy script is executed buffered and streamed
      Then the buffered and streamed save-policy runs persist the same batches

      Examples:
        | policy  | point                     |
        | turn    | cancellation              |
        | turn    | later model call          |
        | turn    | tool-error hook terminate |
        | run     | later model call          |
