Feature: Strict-write error digest text is short, specific and safe
  The digest text reads `Task 'eddi://<name>' failed: <reason>`. The reason is
  the most specific one in the failure's cause chain, a provider's JSON error
  body reduced to its `message`. Secrets are redacted with the secret filter,
  URLs become `[url]`, stack frames and fully-qualified class names are
  stripped, all before the whole text is cut to at most 200 characters. The
  streaming `task_failed` event carries the same reason.

  Troubleshooting: a fragment of a key at the end of a long digest means the
  text was cut before it was redacted.

  Background:
    Given a strict-write agent with the pipeline:
      | task        | kind | writes |
      | ai.labs.llm | llm  |        |
    And strict write is enabled with onFailure "digest"

  Rule: the text names the task and the most specific reason

    @SW-018 @golden @commit-flags
    Scenario: Strict-write digest of a missing model matches the documented example
      Given the strict-write task "ai.labs.llm" fails on its next call with the error:
        """
        {"type": "ai.labs.eddi.engine.lifecycle.exceptions.LifecycleException",
         "message": "Chat model execution failed: model 'x' not found",
         "cause": {"type": "dev.langchain4j.exception.ModelNotFoundException",
                   "message": "model 'x' not found", "status": 404}}
        """
      When the strict-write agent answers "hello"
      Then the strict-write task error of turn 1 reads "Task 'eddi://ai.labs.llm' failed: Chat model execution failed: model 'x' not found"
      And the strict-write memory of turn 1 holds the digest for "ai.labs.llm"

    @SW-018 @SW-024 @golden @commit-flags @with-streaming
    Scenario: Strict-write digest of a provider rejection reads the provider's message
      Given the strict-write task "ai.labs.llm" fails on its next call with the error:
        """
        {"type": "ai.labs.eddi.engine.lifecycle.exceptions.LifecycleException",
         "message": "Error while executing lifecycle!",
         "cause": {"type": "ai.labs.eddi.modules.llm.impl.StreamingChatException",
                   "message": "Streaming chat failed: {\"error\": {\"message\": \"`temperature` is deprecated for this model.\", \"type\": \"invalid_request_error\", \"param\": \"temperature\"}}",
                   "cause": {"type": "dev.langchain4j.http.client.HttpException", "status": 400,
                             "message": "{\"error\": {\"message\": \"`temperature` is deprecated for this model.\", \"type\": \"invalid_request_error\", \"param\": \"temperature\"}}"}}}
        """
      When the strict-write agent answers "hello" while streaming
      Then the strict-write task error of turn 1 reads "Task 'eddi://ai.labs.llm' failed: Streaming chat failed: `temperature` is deprecated for this model."
      And the strict-write stream of turn 1 has a task_failed event with the caller's reason

    @SW-018 @commit-flags
    Scenario: Strict-write digest reduces a provider body given apart from the message
      Given the strict-write task "ai.labs.llm" fails on its next call with the error:
        """
        {"type": "HttpException", "message": "HTTP 429 Too Many Requests", "status": 429,
         "body": "{\"error\": {\"message\": \"Rate limit reached for requests\", \"type\": \"requests\", \"code\": \"rate_limit_exceeded\"}}"}
        """
      When the strict-write agent answers "hello"
      Then the strict-write task error of turn 1 reads "Task 'eddi://ai.labs.llm' failed: Rate limit reached for requests"

    @SW-018 @commit-flags
    Scenario: Strict-write digest reduces a provider body whose message is its detail
      Given the strict-write task "ai.labs.llm" fails on its next call with the error:
        """
        {"type": "HttpException", "message": "HTTP 422 Unprocessable Entity", "status": 422,
         "body": "{\"detail\": \"Input should be a valid integer\"}"}
        """
      When the strict-write agent answers "hello"
      Then the strict-write task error of turn 1 reads "Task 'eddi://ai.labs.llm' failed: Input should be a valid integer"

    @SW-018 @commit-flags
    Scenario: Strict-write digest reduces a provider body that lists its errors
      Given the strict-write task "ai.labs.llm" fails on its next call with the error:
        """
        {"type": "HttpException", "message": "HTTP 400 Bad Request", "status": 400,
         "body": "{\"errors\": [{\"message\": \"max_tokens is too large\", \"code\": 17}]}"}
        """
      When the strict-write agent answers "hello"
      Then the strict-write task error of turn 1 reads "Task 'eddi://ai.labs.llm' failed: max_tokens is too large"

    @SW-018 @commit-flags
    Scenario: Strict-write digest reduces a provider body whose error is plain text
      Given the strict-write task "ai.labs.llm" fails on its next call with the error:
        """
        {"type": "HttpException", "message": "HTTP 503 Service Unavailable", "status": 503,
         "body": "{\"error\": \"upstream model is overloaded\"}"}
        """
      When the strict-write agent answers "hello"
      Then the strict-write task error of turn 1 reads "Task 'eddi://ai.labs.llm' failed: upstream model is overloaded"

  Rule: the text is redacted and stripped of noise

    @SW-019 @commit-flags
    Scenario Outline: Strict-write digest redacts <secret kind>
      Given the strict-write task "ai.labs.llm" fails on its next call with "<message>"
      When the strict-write agent answers "hello"
      Then the strict-write task error of turn 1 does not contain "<secret>"
      And the strict-write task error of turn 1 contains "<REDACTED>"

      Examples: secret shapes
        | secret kind            | message                                                               | secret                           |
        | a bearer token         | upstream answered 401 to Bearer eyJhbGciOiJIUzI1NiJ9abcdefgh123       | eyJhbGciOiJIUzI1NiJ9abcdefgh123  |
        | an OpenAI-style key    | invalid key sk-proj4a7b9c2d1e8f3a6b5c4d2e1f0 supplied                 | sk-proj4a7b9c2d1e8f3a6b5c4d2e1f0 |
        | an Anthropic-style key | invalid key sk-ant-api03-Zx8Yw7Vu6Ts5Rq4Po3Nm2 supplied               | api03-Zx8Yw7Vu6Ts5Rq4Po3Nm2      |
        | a password in JSON     | login refused for {'user': 'bot'} {\"password\": \"hunter2-hunter2\"} | hunter2-hunter2                  |
        | an api_key assignment  | request failed with api_key=f00dfeedcafe1234 in the query             | f00dfeedcafe1234                 |
        | a token in key: value  | refresh failed, token: 9f8e7d6c5b4a3210 expired                       | 9f8e7d6c5b4a3210                 |

    @SW-020 @commit-flags
    Scenario Outline: Strict-write digest replaces <url kind> by [url]
      Given the strict-write task "ai.labs.llm" fails on its next call with "<message>"
      When the strict-write agent answers "hello"
      Then the strict-write task error of turn 1 does not contain "<leak>"
      And the strict-write task error of turn 1 contains "[url]"

      Examples: URLs
        | url kind               | message                                                        | leak                 |
        | an https URL           | GET https://api.payments.example/v1/charges?id=42 returned 500 | api.payments.example |
        | a URL with credentials | cannot reach postgresql://app:s3cr3tpass@db.internal:5432/main | s3cr3tpass           |

    @SW-021 @commit-flags
    Scenario: Strict-write digest strips a Java stack trace and class names
      Given the strict-write task "ai.labs.llm" fails on its next call with the error:
        """
        {"type": "java.net.ConnectException",
         "message": "java.net.ConnectException: Connection refused\n\tat java.base/sun.nio.ch.Net.pollConnect(Native Method)\n\tat ai.labs.eddi.modules.httpcalls.impl.HttpCallsTask.execute(HttpCallsTask.java:212)\n\t... 12 more"}
        """
      When the strict-write agent answers "hello"
      Then the strict-write task error of turn 1 reads "Task 'eddi://ai.labs.llm' failed: Connection refused"

    @SW-021 @commit-flags
    Scenario: Strict-write digest strips a Python traceback
      Given the strict-write task "ai.labs.llm" fails on its next call with the error:
        """
        {"type": "requests.exceptions.ConnectionError",
         "message": "Traceback (most recent call last):\n  File \"/srv/agent/tools/weather.py\", line 41, in fetch\n    response = session.get(endpoint, timeout=5)\nrequests.exceptions.ConnectionError: Max retries exceeded"}
        """
      When the strict-write agent answers "hello"
      Then the strict-write task error of turn 1 reads "Task 'eddi://ai.labs.llm' failed: Max retries exceeded"

  Rule: the whole text is cut to 200 characters, after redaction

    @SW-022 @commit-flags
    Scenario: Strict-write digest of a long reason is at most 200 characters in all
      Given the strict-write task "ai.labs.llm" fails on its next call with "The upstream inventory service answered with a validation report that lists every rejected field of the request one after another, first the customer block, then the shipping block, then the billing block, and finally the line items"
      When the strict-write agent answers "hello"
      Then the strict-write task error of turn 1 is at most 200 characters
      And the strict-write task error of turn 1 contains "Task 'eddi://ai.labs.llm' failed: The upstream inventory service"

    @SW-022 @commit-flags
    Scenario: Strict-write digest of a long Greek reason with emoji is cut at 200 characters, not bytes
      Given the strict-write task "ai.labs.llm" fails on its next call with "Η υπηρεσία αποθήκης απάντησε με σφάλμα επικύρωσης για κάθε πεδίο της παραγγελίας 📦, πρώτα τον πελάτη 👤, μετά την αποστολή 🚚, μετά τη χρέωση 💳 και τέλος όλα τα είδη της παραγγελίας 🧾 ένα προς ένα, χωρίς καμία εξαίρεση"
      When the strict-write agent answers "hello"
      Then the strict-write task error of turn 1 is at most 200 characters
      And the strict-write task error of turn 1 contains "μετά τη χρέωση 💳 και τέλος όλα τα είδη..."

    @SW-023 @commit-flags
    Scenario: Strict-write digest never keeps a fragment of a key split by the cut
      Given the strict-write task "ai.labs.llm" fails on its next call with "The provider refused the call because the organisation on the account is suspended for billing reasons and every retry was refused as well, key sk-Q7w8E9r0T1y2U3i4O5p6A7s8D9f0G1h2J3k4L5z6X7c8V9b0N1m2 was used"
      When the strict-write agent answers "hello"
      Then the strict-write task error of turn 1 does not contain "Q7w8E9r0"
      And the strict-write task error of turn 1 is at most 200 characters

  Rule: streaming carries the same reason

    @SW-024 @commit-flags @with-streaming
    Scenario: Strict-write streaming task_failed event carries the redacted reason
      Given the strict-write task "ai.labs.llm" fails on its next call with "call to https://llm.example/v1 failed with Bearer abcdefghijklmnopqrstuvwx0123"
      When the strict-write agent answers "hello" while streaming
      Then the strict-write stream of turn 1 has a task_failed event with the caller's reason
      And the strict-write task error of turn 1 does not contain "abcdefghijklmnopqrstuvwx0123"
