Feature: Strict-write digests keep no secret, however it is written
  A digest text has passed the secret filter before it goes anywhere. Each row
  names one way of writing a secret from the table of secret syntaxes
  (spec/secret-syntaxes.toml): the task fails with that row's error in a
  streamed turn, and none of the row's secrets may reach any place the digest
  goes: the caller's copy, the digest stored in memory, the stream event and
  the next turn's model request (read from the kit's fake model). The digest
  must still name the task. How much text a runtime removes around a secret is
  not judged here.

  Troubleshooting: a row that fails names the family of the secret filter that
  let it through (the table's `family`); the filter document 001 names is
  judged by SW-019, what the kit adds by SW-031 (a warning). A row that fails
  only at the stored digest or the model request while the caller's copy is
  clean redacts the caller's copy alone and stores or forwards the secret.

  Background:
    Given a strict-write agent with the pipeline:
      | task        | kind | writes |
      | ai.labs.llm | llm  |        |
    And strict write is enabled with onFailure "digest"

  Rule: the digest is redacted at every place it goes

    Scenario Outline: Strict-write digest removes a secret written as <syntax> everywhere it goes
      Given the strict-write task "ai.labs.llm" fails on its next call with the secret syntax "<syntax>"
      When the strict-write agent answers "hello" while streaming and then "again"
      Then the strict-write task error of turn 1 keeps no secret of the syntax "<syntax>"
      And the strict-write stored digest of turn 1 keeps no secret of the syntax "<syntax>"
      And the strict-write stream of turn 1 keeps no secret of the syntax "<syntax>"
      And in turn 2 the strict-write model "ai.labs.llm" is sent no secret of the syntax "<syntax>"
      And the strict-write task error of turn 1 names the task "ai.labs.llm"

      @SW-019 @commit-flags @with-streaming @with-second-run
      Examples: what the named filter covers
        | syntax                      |
        | sk-key/openai               |
        | sk-key/anthropic            |
        | bearer                      |
        | unquoted/equals             |
        | unquoted/colon              |
        | unquoted/minimum-length     |
        | unquoted/json-number        |
        | double-quoted/json          |
        | double-quoted/phrase        |
        | double-quoted/escaped-quote |
        | escaped-json/once           |
        | escaped-json/twice          |
        | key-case/upper              |
        | key-case/camel              |

      @SW-031 @commit-flags @with-streaming @with-second-run
      Examples: what the kit adds
        | syntax                    |
        | single-quoted/python-repr |
        | single-quoted/yaml        |
        | single-quoted/libpq       |
        | unquoted-phrase           |
        | key-name/inner-word       |
        | key-name/spaced           |
        | key-name/cyrillic         |
        | key-name/zero-width       |
        | url-userinfo              |
        | provider-key/aws          |
        | provider-key/github       |
        | provider-key/google       |
        | jwt                       |
        | private-key-block         |
        | basic-auth-pair           |
        | error-type                |
