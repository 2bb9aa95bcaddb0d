Feature: Strict-write failure actions route behaviour rules
  A failed task's step ends with the action `task_failed_<taskId>` (the bare
  task name) in every strict-write mode. The actions the failed task itself
  added are part of its output: `digest` and `exclude_all` roll them back,
  `keep_all` keeps them. Behaviour rules match on the failure action.

  Troubleshooting: an action list that still holds what the failed task added
  means the rollback restored the actions key only when the task created it.

  Background:
    Given a strict-write agent with the pipeline:
      | task    | kind  | writes                       |
      | greeter | write | action greet                 |
      | search  | tool  | action search; action lookup |

  Rule: the failure action replaces what the failed task added

    @SW-008 @SW-010 @commit-flags
    Scenario Outline: Strict-write <mode> mode drops the actions the failed task added
      Given strict write is enabled with onFailure "<mode>"
      And the strict-write task "search" fails on its next call with "index offline"
      When the strict-write agent answers "find it"
      Then the strict-write actions of turn 1 are ["greet", "task_failed_search"]

      Examples: hiding modes
        | mode        |
        | digest      |
        | exclude_all |

    @SW-013 @SW-010 @commit-flags
    Scenario: Strict-write keep_all mode keeps the failed task's actions and adds the failure
      Given strict write is enabled with onFailure "keep_all"
      And the strict-write task "search" fails on its next call with "index offline"
      When the strict-write agent answers "find it"
      Then the strict-write actions of turn 1 are ["greet", "search", "lookup", "task_failed_search"]

    @SW-017 @SW-014
    Scenario: Strict-write default mode adds no failure action
      Given the strict-write agent has no memory policy
      And the strict-write task "search" fails on its next call with "index offline"
      When the strict-write agent answers "find it"
      Then the strict-write actions of turn 1 are ["greet", "search", "lookup"]
