Feature: Save-policy failure records are kept apart from the transcript
  After a run fails, under every policy, the runtime hands the store one error
  record (record_error) holding the run's error and every new message of the
  run, stored ones included. A store keeping error records never returns them
  as messages. Blocks and suspensions are not failures and leave no record.
  A store that does not declare the errors capability is simply not asked.
  A guardrail that fails leaves what it was shown in the record (the prompt, or
  the model's answer), though nothing of it is stored. Document 000 names no
  error for a cancelled run and each runtime throws its own, so the tables write
  that error `cancellation`: any named error of a run its caller was told was
  cancelled, the record's of the same type.

  Troubleshooting: these scenarios end as unsupported when the store does not
  declare the errors capability. A record_error count of two usually means
  both the failing step and the run's failure handler reported the failure; a
  record without the already stored messages means the runtime sent only what
  it had not appended.

  Rule: every failed run is recorded exactly once, with all its new messages

    @errors
    Scenario Outline: Save-policy <policy> run failing at <point> is recorded once with all its new messages
      Given the save-policy store keeps error records
      And a save-policy agent with the "<policy>" save policy
      And the save-policy run meets the failure point "<point>"
      When the save-policy script is executed
      Then record_error was called once for the save-policy run with "<roles>"
      And the save-policy error record holds the error "<error>"
      And the caller of the save-policy run gets the error "<error>"

      @SP-013 @SP-014
      Examples: under message
        | policy  | point                     | roles                         | error             |
        | message | first model call          | user                          | ModelError        |
        | message | tool-error hook terminate | user,assistant                | cancellation      |
        | message | later model call          | user,assistant,tool           | ModelError        |
        | message | run-end hook              | user,assistant,tool,assistant | HookError         |
        | message | cancellation              | user,assistant,tool           | cancellation      |

      @SP-013 @SP-014
      Examples: under turn
        | policy | point            | roles                         | error             |
        | turn   | first model call | user                          | ModelError        |
        | turn   | later model call | user,assistant,tool           | ModelError        |
        | turn   | run-end cancel   | user,assistant,tool,assistant | cancellation      |

      @SP-013 @SP-014
      Examples: under run
        | policy | point                     | roles                         | error             |
        | run    | first model call          | user                          | ModelError        |
        | run    | tool-error hook           | user,assistant                | HookError         |
        | run    | later model call          | user,assistant,tool           | ModelError        |
        | run    | run-end cancel            | user,assistant,tool,assistant | cancellation      |

      @SP-013 @SP-014 @with-guardrail
      Examples: a guardrail fails
        | policy  | point            | roles               | error          |
        | message | input guardrail  | user                          | GuardrailError |
        | turn    | output guardrail | user,assistant,tool,assistant | GuardrailError |
        | run     | input guardrail  | user                          | GuardrailError |

      @SP-013 @SP-014 @with-store-refusal
      Examples: the store refuses an append
        | policy  | point        | roles                         | error      |
        | message | last append  | user,assistant,tool,assistant | StoreError |
        | turn    | first append | user,assistant,tool           | StoreError |
        | run     | last append  | user,assistant,tool,assistant | StoreError |

      @SP-016 @SP-013 @with-store-refusal
      Examples: record_error itself fails
        | policy  | point        | roles               | error      |
        | message | record_error | user,assistant,tool | ModelError |
        | turn    | record_error | user,assistant,tool | ModelError |
        | run     | record_error | user,assistant,tool | ModelError |

      @SP-016 @SP-013
      Examples: the run_error hook itself fails
        | policy  | point          | roles               | error      |
        | message | run_error hook | user,assistant,tool | ModelError |
        | turn    | run_error hook | user,assistant,tool | ModelError |
        | run     | run_error hook | user,assistant,tool | ModelError |

    @errors @SP-020 @SP-013 @with-store-refusal
    Scenario Outline: Save-policy <policy> run whose final append is refused reports the failure in order
      Given the save-policy store keeps error records
      And a save-policy agent with the "<policy>" save policy
      And the save-policy run meets the failure point "last append"
      When the save-policy script is executed
      Then the save-policy timeline order is "append raised > error hook > record_error > outcome reported"

      Examples:
        | policy  |
        | message |
        | turn    |
        | run     |

  Rule: a resumed run that fails is recorded like any failed run

    @errors @SP-013 @SP-014 @with-approval @with-second-run
    Scenario Outline: Save-policy <policy> resumed run failing at its model call is recorded once with its new messages
      Given the save-policy store keeps error records
      And a save-policy agent with the "<policy>" save policy
      And the save-policy tool call needs approval
      And a later save-policy run approves the pending tool call
      And the save-policy run meets the failure point "later model call"
      When the save-policy script is executed
      Then save-policy run 2 ends "failed"
      And record_error was called once, for save-policy run 2, with "<roles>"
      And the save-policy error record holds the error "ModelError"

      Examples:
        | policy  | roles     |
        | message | tool,tool |
        | turn    | tool,tool |
        | run     | tool,tool |

  Rule: blocks, suspensions and completed runs leave no error record

    @errors @SP-015
    Scenario Outline: Save-policy <policy> run that <ending> calls no record_error
      Given the save-policy store keeps error records
      And a save-policy agent with the "<policy>" save policy
      And <setup>
      When the save-policy script is executed
      Then the save-policy run ends "<outcome>"
      And the save-policy store received no record_error call

      Examples: completed runs
        | policy  | ending                | setup                                                                  | outcome           |
        | message | completes             | the save-policy run meets the failure point "none"                      | completed         |
        | turn    | survives a tool error | the save-policy run meets the failure point "tool"                      | completed         |

      @with-guardrail
      Examples: blocked runs
        | policy  | ending                | setup                                                                  | outcome           |
        | message | is blocked at input   | the save-policy input guardrail blocks the input                        | blocked at input  |
        | run     | is blocked at input   | the save-policy input guardrail blocks the input                        | blocked at input  |
        | turn    | is blocked at output  | the save-policy output guardrail blocks the answer with "Not today."    | blocked at output |

      @with-approval
      Examples: suspended runs
        | policy  | ending                | setup                                                                  | outcome           |
        | message | is suspended          | the save-policy tool call needs approval                                | suspended         |
        | run     | is suspended          | the save-policy tool call needs approval                                | suspended         |

  Rule: a store keeps error records out of the messages

    @errors @SP-018
    Scenario Outline: Save-policy error record of a failed <policy> run never shows among the thread's messages
      Given the save-policy store keeps error records
      And a save-policy agent with the "<policy>" save policy
      And the save-policy run meets the failure point "later model call"
      When the save-policy script is executed
      Then the save-policy messages hold no error record

      Examples:
        | policy  |
        | message |
        | run     |

    @errors @SP-018
    Scenario: Save-policy error records never reach the next run's context
      Given the save-policy store keeps error records
      And a save-policy agent with the "run" save policy
      And the save-policy run meets the failure point "later model call"
      And a later save-policy run sends "Did it work?" and gets the answer "Partly."
      When the save-policy script is executed
      Then the save-policy model saw at the first call of run 2:
        | role | text         |
        | user | Did it work? |
