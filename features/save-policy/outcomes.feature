Feature: Save-policy blocks, suspensions and retries are outcomes, not failures
  Only input the input guardrail accepted is ever stored. A block by the
  output guardrail and a suspension for tool approval are response outcomes:
  they end the run without an error and are stored like a completed run. A
  model call retried after a transient provider error stores nothing twice.
  A suspended run is resumed on a fresh runtime instance, in a second fresh
  process when the store is durable, given only the continuation its caller got.
  The approval answer is a tool message read by its parts, whatever its wording
  (`<approval approved>`); whether the model is shown it is the runtime's own
  affair, so what the model saw is compared without it.

  Troubleshooting: when a blocked run stored its input, the runtime appended
  before the input guardrail answered; when a suspended run is reported as
  failed, the runtime treated the approval request as an error; when the
  resumed run fails with nothing to resume, the runtime kept the pending tool
  call in process memory instead of finding it in the store.

  Rule: only accepted input is stored

    @SP-004 @with-guardrail
    Scenario Outline: Save-policy <policy> run blocked by the input guardrail stores nothing
      Given a save-policy agent with the "<policy>" save policy
      And the save-policy input guardrail blocks the input
      When the save-policy script is executed
      Then the save-policy run ends "blocked at input"
      And the caller of the save-policy run gets no error
      And the save-policy model was called 0 times
      And the save-policy appends are "none"

      Examples:
        | policy  |
        | message |
        | turn    |
        | run     |

  Rule: an output-guardrail block completes the run with the guardrail's text

    @SP-026 @with-guardrail
    Scenario Outline: Save-policy <policy> run blocked by the output guardrail stores the guardrail's text
      Given a save-policy agent with the "<policy>" save policy
      And the save-policy output guardrail blocks the answer with "I cannot share that."
      When the save-policy script is executed
      Then the save-policy run ends "blocked at output"
      And the caller of the save-policy run gets no error
      And the save-policy reply is "I cannot share that."
      And the stored save-policy answer is not the model's own text
      And the save-policy thread holds:
        | role      | text                 |
        | user      | <prompt>             |
        | assistant |                      |
        | tool      | notified             |
        | assistant | I cannot share that. |

      Examples:
        | policy  |
        | message |
        | turn    |

      @SP-010
      Examples: a block is a response outcome under run
        | policy |
        | run    |

  Rule: a run suspended for approval stores its pending tool call and is not a failure

    @SP-027 @with-approval
    Scenario Outline: Save-policy <policy> run suspended for approval stores the pending tool call
      Given a save-policy agent with the "<policy>" save policy
      And the save-policy tool call needs approval
      When the save-policy script is executed
      Then the save-policy run ends "suspended"
      And the caller of the save-policy run gets no error
      And the save-policy pending tool call is stored without a result
      And the save-policy appends are "<batches>"

      Examples:
        | policy  | batches            |
        | message | [user] [assistant] |
        | turn    | [user,assistant]   |

      @SP-010
      Examples: a suspension is a response outcome under run
        | policy | batches          |
        | run    | [user,assistant] |

    @SP-028 @with-approval @with-second-run @with-restart
    Scenario Outline: Save-policy <policy> resumed run stores the approval and the result as two tool messages
      Given a save-policy agent with the "<policy>" save policy
      And the save-policy tool call needs approval
      And a later save-policy run approves the pending tool call
      When the save-policy script is executed
      Then save-policy run 1 ends "suspended"
      And save-policy run 2 ends "completed"
      And the save-policy appends are "<batches>"
      And the save-policy tools ran with the arguments the model gave their calls
      And the resumed save-policy run 2 continued from the suspended run, its model seeing:
        | role | text              |
        | user | <prompt>          |
        | assistant |              |
        | tool | notified          |
      And the save-policy thread holds:
        | role      | text              |
        | user      | <prompt>          |
        | assistant |                   |
        | tool      | <approval approved> |
        | tool      | notified          |
        | assistant | <answer>          |

      Examples:
        | policy  | batches                                   |
        | message | [user] [assistant] [tool] [tool] [assistant] |
        | turn    | [user,assistant] [tool,tool] [assistant]  |
        | run     | [user,assistant] [tool,tool,assistant]    |

    @SP-028 @with-approval @with-second-run @with-restart
    Scenario Outline: Save-policy <policy> resumed run answers both calls that awaited approval
      Given a save-policy agent with the "<policy>" save policy
      And the save-policy model calls two tools at once in its first round
      And every save-policy tool call of the first round needs approval
      And a later save-policy run approves the pending tool call
      When the save-policy script is executed
      Then save-policy run 1 ends "suspended"
      And save-policy run 2 ends "completed"
      And every stored save-policy tool call has an approval answer and a result
      And the save-policy tools ran with the arguments the model gave their calls

      Examples:
        | policy  |
        | message |
        | turn    |
        | run     |

    @SP-028 @SP-031 @with-approval @with-second-run @with-restart
    Scenario Outline: Save-policy <policy> resumed run shows the model the runs before the suspended one
      Given a save-policy agent with the "<policy>" save policy
      And the save-policy tool call needs approval
      And an earlier save-policy run on the thread sent "Is order A-1 packed?" and got the answer "Yes, it is packed."
      And a later save-policy run approves the pending tool call
      When the save-policy script is executed
      Then save-policy run 2 ends "suspended"
      And save-policy run 3 ends "completed"
      And the resumed save-policy run 3 continued from the suspended run, its model seeing:
        | role      | text                |
        | user      | Is order A-1 packed? |
        | assistant | Yes, it is packed.  |
        | user      | <prompt>            |
        | assistant |                     |
        | tool      | notified            |

      Examples:
        | policy  |
        | message |
        | turn    |
        | run     |

    @SP-028 @with-approval @with-second-run @with-restart
    Scenario Outline: Save-policy <policy> resumed run persists the approval response at its point
      Given a save-policy agent with the "<policy>" save policy
      And the save-policy tool call needs approval
      And a later save-policy run approves the pending tool call
      When the save-policy script is executed
      Then save-policy run 2 ends "completed"
      And the save-policy timeline order is "<order>"

      Examples:
        | policy  | order                                              |
        | message | approval appended > tool run > last model call     |
        | turn    | tool run > approval appended > last model call     |

    @SP-009 @SP-028 @with-approval @with-second-run @with-restart
    Scenario Outline: Save-policy <policy> resumed run whose model call fails keeps the approved tool's result
      Given a save-policy agent with the "<policy>" save policy
      And the save-policy tool call needs approval
      And a later save-policy run approves the pending tool call
      And the save-policy run meets the failure point "later model call"
      When the save-policy script is executed
      Then save-policy run 2 ends "failed"
      And the save-policy appends are "<batches>"

      Examples:
        | policy  | batches                   |
        | message | [user] [assistant] [tool] [tool] |
        | turn    | [user,assistant] [tool,tool]     |
        | run     | [user,assistant]                 |

  Rule: retried model calls never duplicate messages

    @SP-021
    Scenario Outline: Save-policy <policy> run retried after a 503 stores every message once
      Given a save-policy agent with the "<policy>" save policy
      And the save-policy model call fails 2 times with status 503
      When the save-policy script is executed
      Then the save-policy run ends "completed"
      And the save-policy model was called 4 times
      And the save-policy appends are "<batches>"
      And no save-policy message is stored twice

      Examples:
        | policy  | batches                             |
        | message | [user] [assistant,tool] [assistant] |
        | turn    | [user,assistant,tool] [assistant]   |
        | run     | [user,assistant,tool,assistant]     |

    @SP-021
    Scenario: Save-policy direct answer retried after a 503 is stored once
      Given a save-policy agent with the "message" save policy
      And the save-policy model answers directly with "Order A-1 ships on Monday."
      And the save-policy model call fails 1 times with status 503
      When the save-policy script is executed
      Then the save-policy run ends "completed"
      And the save-policy appends are "[user] [assistant]"
      And no save-policy message is stored twice
