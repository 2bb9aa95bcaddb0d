Feature: Strict-write redacts a failed task's reason at every place, in every mode
  The caller's copy of a failed task's reason and the streamed task_failed
  event pass the secret filter whatever the mode. With strict write on in
  digest mode the digest also goes into memory and so into every later model
  request, and all four places are checked on every row of the table of secret
  syntaxes (digest_secrets.feature). Without strict write the task's raw output
  stays in memory and in the model's view as document 001 says, but the
  caller's reason is the caller's alone: it is neither stored nor sent to the
  next model request. A few representative syntaxes (two of the named filter,
  two of the kit's) are run in each default-mode form here.

  Troubleshooting: a secret in the stream event while the caller's copy is
  clean means the event is built from the raw message; the caller's reason in
  the store or the next request means the caller's entry was written to memory.

  Background:
    Given a strict-write agent with the pipeline:
      | task        | kind | writes |
      | ai.labs.llm | llm  |        |

  Rule: without strict write, the caller and the stream get the redacted reason, and only they do

    Scenario Outline: Strict-write <policy> keeps a secret written as <syntax> from the caller, the stream, the store and the model
      Given strict write is <policy>
      And the strict-write task "ai.labs.llm" fails on its next call with the secret syntax "<syntax>"
      When the strict-write agent answers "hello" while streaming and then "again"
      Then the strict-write task error of turn 1 keeps no secret of the syntax "<syntax>"
      And the strict-write stream of turn 1 keeps no secret of the syntax "<syntax>"
      And the strict-write caller's reason of turn 1 is neither stored nor sent to the model "ai.labs.llm" in turn 2

      @SW-019 @SW-017
      Examples: what the named filter covers
        | policy                             | syntax             |
        | disabled with onFailure "digest"   | sk-key/openai      |
        | disabled with onFailure "keep_all" | sk-key/openai      |
        | disabled with onFailure "digest"   | double-quoted/json |
        | disabled with onFailure "keep_all" | double-quoted/json |

      @SW-031 @SW-017
      Examples: what the kit adds
        | policy                             | syntax       |
        | disabled with onFailure "digest"   | url-userinfo |
        | disabled with onFailure "keep_all" | url-userinfo |
        | disabled with onFailure "digest"   | jwt          |
        | disabled with onFailure "keep_all" | jwt          |
