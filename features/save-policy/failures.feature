Feature: Save-policy runs that fail keep only what each policy had completed
  A run can fail at many points: the input guardrail, a model call, a tool's
  error hook, the output guardrail, the run-end hook, a cancellation or the
  store's own append. Whatever a policy appended before the failure stays
  stored; whatever it had not yet appended is never appended afterwards.

  Troubleshooting: each row names the failure point. Compare the batches the
  store received with the expected ones; a batch too many usually means an
  unfinished round or a failed run was flushed, a batch missing means a
  completed batch was held back until the end of the run.

  Rule: under message, completed batches survive a later failure

    Scenario Outline: Save-policy message run meeting <point> keeps only its completed batches
      Given a save-policy agent with the "message" save policy
      And the save-policy run meets the failure point "<point>"
      When the save-policy script is executed
      Then the save-policy run ends "<outcome>"
      And the save-policy appends are "<batches>"

      @SP-004 @with-guardrail
      Examples: input not accepted
        | point           | outcome | batches |
        | input guardrail | failed  | none    |

      @SP-005 @SP-012
      Examples: input stored before the model loop
        | point            | outcome | batches |
        | first model call | failed  | [user]  |

      @SP-012
      Examples: completed rounds survive
        | point            | outcome | batches                 |
        | later model call | failed  | [user] [assistant,tool] |
        | output guardrail | failed  | [user] [assistant,tool] |

      @SP-007 @SP-012
      Examples: the answer is stored before the run-end hook
        | point        | outcome | batches                             |
        | run-end hook | failed  | [user] [assistant,tool] [assistant] |

      @SP-024 @SP-025
      Examples: a terminated tool round is not stored
        | point                     | outcome | batches |
        | tool-error hook terminate | cancelled | [user]  |
        | tool-error hook           | failed  | [user]  |

      @SP-032
      Examples: cancellation
        | point          | outcome   | batches                             |
        | cancellation   | cancelled | [user] [assistant,tool]             |
        | run-end cancel | cancelled | [user] [assistant,tool] [assistant] |

      @SP-020 @with-store-refusal
      Examples: a refused append
        | point        | outcome | batches                 |
        | first append | failed  | none                    |
        | last append  | failed  | [user] [assistant,tool] |

  Rule: under turn, a round is stored whole or not at all

    Scenario Outline: Save-policy turn run meeting <point> keeps only its completed rounds
      Given a save-policy agent with the "turn" save policy
      And the save-policy run meets the failure point "<point>"
      When the save-policy script is executed
      Then the save-policy run ends "<outcome>"
      And the save-policy appends are "<batches>"

      @SP-004 @with-guardrail
      Examples: input not accepted
        | point           | outcome | batches |
        | input guardrail | failed  | none    |

      @SP-009
      Examples: an unfinished first round is dropped, prompt included
        | point                     | outcome | batches |
        | first model call          | failed  | none    |
        | tool-error hook terminate | cancelled | none    |
        | tool-error hook           | failed  | none    |

      @SP-009 @SP-012
      Examples: an unfinished later round is dropped, completed rounds stay
        | point            | outcome | batches               |
        | later model call | failed  | [user,assistant,tool] |
        | output guardrail | failed  | [user,assistant,tool] |
        | run-end hook     | failed  | [user,assistant,tool] |

      @SP-032
      Examples: cancellation
        | point          | outcome   | batches               |
        | cancellation   | cancelled | [user,assistant,tool] |
        | run-end cancel | cancelled | [user,assistant,tool] |

      @SP-020 @with-store-refusal
      Examples: a refused append
        | point        | outcome | batches               |
        | first append | failed  | none                  |
        | last append  | failed  | [user,assistant,tool] |

  Rule: under run, only a response outcome is stored

    Scenario Outline: Save-policy run-policy run meeting <point> stores nothing of its work
      Given a save-policy agent with the "run" save policy
      And the save-policy run meets the failure point "<point>"
      When the save-policy script is executed
      Then the save-policy run ends "<outcome>"
      And the save-policy appends are "none"

      @SP-004 @SP-011 @with-guardrail
      Examples: input not accepted
        | point           | outcome |
        | input guardrail | failed  |

      @SP-011
      Examples: failed runs
        | point                     | outcome |
        | first model call          | failed  |
        | tool-error hook terminate | cancelled |
        | tool-error hook           | failed  |
        | later model call          | failed  |
        | output guardrail          | failed  |
        | run-end hook              | failed  |

      @SP-011 @SP-032
      Examples: cancelled runs
        | point          | outcome   |
        | cancellation   | cancelled |
        | run-end cancel | cancelled |

      @SP-020 @with-store-refusal
      Examples: a refused append
        | point       | outcome |
        | last append | failed  |

  Rule: a cancelled run leaves nothing held back for the next run

    @SP-008 @SP-032 @with-second-run
    Scenario: Save-policy turn run cancelled before its first model call leaves its input out of the next run's batch
      Given a save-policy agent with the "turn" save policy
      And the save-policy model answers directly with "Hello."
      And the first save-policy run is cancelled before model call 1
      And a later save-policy run sends "Did it work?" and gets the answer "Partly."
      When the save-policy script is executed
      Then save-policy run 1 ends "cancelled"
      And save-policy run 2 ends "completed"
      And the save-policy appends are "[user,assistant]"
      And the save-policy model saw at the first call of run 2:
        | role | text         |
        | user | Did it work? |

    @SP-011 @SP-032 @with-second-run
    Scenario: Save-policy run-policy run cancelled mid-run leaves nothing for the next run
      Given a save-policy agent with the "run" save policy
      And the save-policy run meets the failure point "cancellation"
      And a later save-policy run sends "Did it work?" and gets the answer "Partly."
      When the save-policy script is executed
      Then save-policy run 1 ends "cancelled"
      And save-policy run 2 ends "completed"
      And the save-policy appends are "[user,assistant]"
      And the save-policy model saw at the first call of run 2:
        | role | text         |
        | user | Did it work? |

  Rule: memory is stored before success is reported, and a refused append fails the run

    @SP-019
    Scenario Outline: Save-policy <policy> run reports its outcome only after its memory is stored
      Given a save-policy agent with the "<policy>" save policy
      When the save-policy script is executed
      Then the save-policy timeline order is "last append > outcome reported"

      Examples:
        | policy  |
        | message |
        | turn    |
        | run     |

    @SP-019 @with-guardrail
    Scenario Outline: Save-policy <policy> run blocked at output reports only after storing the guardrail text
      Given a save-policy agent with the "<policy>" save policy
      And the save-policy output guardrail blocks the answer with "I cannot share that."
      When the save-policy script is executed
      Then save-policy run 1 ends "blocked at output"
      And the save-policy timeline order is "last append > outcome reported"

      Examples:
        | policy  |
        | message |
        | run     |

    @SP-020 @with-store-refusal
    Scenario Outline: Save-policy <policy> run whose final append is refused fails with the store's error
      Given a save-policy agent with the "<policy>" save policy
      And the save-policy run meets the failure point "last append"
      When the save-policy script is executed
      Then the save-policy run ends "failed"
      And the caller of the save-policy run gets the error "StoreError"
      And the save-policy timeline order is "append raised > error hook > outcome reported"

      Examples:
        | policy  |
        | message |
        | turn    |
        | run     |

    @SP-020 @SP-005 @with-store-refusal
    Scenario: Save-policy message run whose input append is refused never calls the model
      Given a save-policy agent with the "message" save policy
      And the save-policy run meets the failure point "first append"
      When the save-policy script is executed
      Then the save-policy run ends "failed"
      And the caller of the save-policy run gets the error "StoreError"
      And the save-policy model was called 0 times

  Rule: a tool that throws does not fail the run

    @SP-023
    Scenario Outline: Save-policy <policy> run keeps going when a tool throws
      Given a save-policy agent with the "<policy>" save policy
      And the save-policy run meets the failure point "tool"
      When the save-policy script is executed
      Then the save-policy run ends "completed"
      And the save-policy model was called 2 times
      And the save-policy appends are "<batches>"
      And the save-policy thread holds:
        | role      | text                             |
        | user      | <prompt>                         |
        | assistant |                                  |
        | tool      | ToolCallError: mail server said no |
        | assistant | <answer>                         |

      Examples:
        | policy  | batches                             |
        | message | [user] [assistant,tool] [assistant] |
        | turn    | [user,assistant,tool] [assistant]   |
        | run     | [user,assistant,tool,assistant]     |

    @SP-023 @SP-025
    Scenario Outline: Save-policy <policy> run keeps two results in call order when the first tool of the round throws
      Given a save-policy agent with the "<policy>" save policy
      And the save-policy model calls two tools at once in its first round
      And the save-policy run meets the failure point "tool"
      When the save-policy script is executed
      Then the save-policy run ends "completed"
      And every stored save-policy tool message holds its results in the order of the calls

      Examples:
        | policy  |
        | message |
        | turn    |
        | run     |

    @SP-024
    Scenario: Save-policy tool-error hook that terminates cancels the run without storing the tool call
      Given a save-policy agent with the "message" save policy
      And the save-policy run meets the failure point "tool-error hook terminate"
      When the save-policy script is executed
      Then the save-policy run ends "cancelled"
      And the caller of the save-policy run gets the error "cancellation"
      And the save-policy model was called 1 times
      And the save-policy thread holds:
        | role | text     |
        | user | <prompt> |

  Rule: no stored tool call lacks its result

    @SP-025
    Scenario Outline: Save-policy <policy> run meeting <point> stores no tool call without its result
      Given a save-policy agent with the "<policy>" save policy
      And the save-policy run meets the failure point "<point>"
      When the save-policy script is executed
      Then every stored save-policy tool call has its result in the same batch

      Examples:
        | policy  | point                     |
        | message | none                      |
        | message | tool-error hook terminate |
        | message | tool-error hook           |
        | message | cancellation              |
        | turn    | tool-error hook terminate |
        | run     | none                      |

    @SP-025 @SP-006
    Scenario Outline: Save-policy <policy> run stores both results of two tool calls made at once
      Given a save-policy agent with the "<policy>" save policy
      And the save-policy model calls two tools at once in its first round
      When the save-policy script is executed
      Then every stored save-policy tool call has its result in the same batch
      And the save-policy tools ran with the arguments the model gave their calls
      And the save-policy appends are "<batches>"

      Examples:
        | policy  | batches                               |
        | message | [user] [assistant,tool] [assistant]   |
        | turn    | [user,assistant,tool] [assistant]     |
        | run     | [user,assistant,tool,assistant]       |

    @SP-025 @SP-006
    Scenario Outline: Save-policy <policy> run stores both results of one tool called twice at once
      Given a save-policy agent with the "<policy>" save policy
      And the save-policy model calls its tool twice at once in its first round
      When the save-policy script is executed
      Then every stored save-policy tool call has its result in the same batch
      And the save-policy tools ran with the arguments the model gave their calls
      And the save-policy appends are "<batches>"

      Examples:
        | policy  | batches                               |
        | message | [user] [assistant,tool] [assistant]   |
        | turn    | [user,assistant,tool] [assistant]     |
        | run     | [user,assistant,tool,assistant]       |

  Rule: side effects are never rolled back

    @SP-022
    Scenario Outline: Save-policy <policy> run meeting <point> leaves its tool's side effect in place
      Given a save-policy agent with the "<policy>" save policy
      And the save-policy run meets the failure point "<point>"
      When the save-policy script is executed
      Then the save-policy ledger still holds the tool's effect

      Examples:
        | policy  | point                     |
        | message | later model call          |
        | message | tool-error hook terminate |
        | turn    | tool-error hook terminate |
        | run     | later model call          |
        | run     | run-end cancel            |
        | run     | last append               |

    @SP-022
    Scenario Outline: Save-policy run meeting <point> never calls the compensating tool, under any policy
      Given a save-policy agent with the "message" save policy
      And the save-policy run meets the failure point "<point>"
      When the save-policy script is executed under each save policy
      Then under every save policy the tools ran as the model asked and no undo tool was called

      Examples:
        | point                     |
        | none                      |
        | first model call          |
        | tool                      |
        | tool-error hook terminate |
        | tool-error hook           |
        | later model call          |
        | run-end hook              |
        | run-end cancel            |
        | cancellation              |

      @with-guardrail
      Examples: a guardrail fails
        | point            |
        | input guardrail  |
        | output guardrail |

      @with-store-refusal
      Examples: the store refuses
        | point        |
        | first append |
        | last append  |
        | record_error |

  Rule: record_error is optional for a store

    @SP-017
    Scenario Outline: Save-policy <policy> run failing on a store without error records still reports its error
      Given a save-policy agent with the "<policy>" save policy
      And the save-policy store does not declare the errors capability
      And the save-policy run meets the failure point "later model call"
      When the save-policy script is executed
      Then the save-policy run ends "failed"
      And the caller of the save-policy run gets the error "ModelError"
      And the save-policy store received no record_error call

      Examples:
        | policy  |
        | message |
        | run     |
