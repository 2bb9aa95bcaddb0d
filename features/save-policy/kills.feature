Feature: Save-policy runs killed part-way keep what their policy had stored
  A save policy decides what survives a failure, and the hardest failure is a
  process that dies: no exception reaches the runtime, no cleanup runs. Here
  the run executes in a child process on a durable store; the kit stops it
  right after the store acknowledged a write, or as the run asks the model for
  a reply, and kills it (SIGKILL). A second fresh process then reads the thread.

  Troubleshooting: each failure names the kill point, the batches the store had
  acknowledged before it (seen by the kit's proxy in the killed process) and
  the roles the thread holds afterwards. A thread holding less than the
  policy owed at a model call means completed batches were kept in memory and
  written later (at the outcome or in a cleanup step, which a kill never
  reaches); part of a batch means a round or run was split over several writes.

  Rule: a kill right after any acknowledged write leaves whole batches only

    @durable @with-restart
    Scenario Outline: Save-policy <policy> run killed right after any acknowledged write leaves whole batches
      Given a save-policy agent with the "<policy>" save policy
      When the save-policy run is killed right after each write the store acknowledged
      Then after every save-policy kill the thread holds the batches of "<batches>" acknowledged before it, whole

      @SP-006 @SP-012 @SP-025
      Examples: message
        | policy  | batches                             |
        | message | [user] [assistant,tool] [assistant] |

      @SP-008 @SP-012 @SP-025
      Examples: turn
        | policy | batches                           |
        | turn   | [user,assistant,tool] [assistant] |

      @SP-010
      Examples: run
        | policy | batches                          |
        | run    | [user,assistant,tool,assistant] |

  Rule: a kill while the model is asked keeps everything the policy owed before it

    @durable @with-restart
    Scenario Outline: Save-policy <policy> run killed as it asks for model call <n> keeps "<stored>"
      Given a save-policy agent with the "<policy>" save policy
      When the save-policy run is killed as it asks for model call <n>
      Then after the save-policy kill the thread holds "<stored>"

      @SP-005
      Examples: under message the input is stored before the first call
        | policy  | n | stored |
        | message | 1 | [user] |

      @SP-006 @SP-012
      Examples: under message the tool round is stored before the next call
        | policy  | n | stored                  |
        | message | 2 | [user] [assistant,tool] |

      @SP-009
      Examples: under turn a completed round is stored, an unfinished one is not
        | policy | n | stored                |
        | turn   | 1 | nothing               |
        | turn   | 2 | [user,assistant,tool] |

      @SP-010 @SP-011
      Examples: under run nothing is stored before the outcome
        | policy | n | stored |
        | run    | 2 | nothing |
