Feature: Store names are exact strings
  A runtime names threads, messages, jobs and knowledge bases with whatever
  strings it has: a user's name, a path-like job id, an id from another
  system. Two names that differ in any code point are two names. These
  scenarios give each of a set of look-alike names (twins) data of its own and
  check that each holds exactly its own afterwards.

  Troubleshooting: a failure here usually means the store looks names up with
  LIKE 'name%' or a SCAN/KEYS pattern (prefixes and the wildcards % _ * ? [ ]
  match more than the name), keeps them in a column whose collation ignores
  case or trailing spaces (the defaults of MySQL and SQL Server), or
  normalises Unicode on the way in, or takes an empty name for a default one
  (`thread_id or "default"`). The twin sets are listed in
  memconform/steps/store_names.py.

  Rule: Two thread ids that differ in any code point are two threads

    @ST-035
    Scenario Outline: Store keeps <twins> twins of a thread id apart
      When each of the "<twins>" thread ids is appended a message of its own
      Then each of the "<twins>" thread ids holds only its own message

      Examples: twins
        | twins                 |
        | prefix                |
        | letter case           |
        | trailing space        |
        | Unicode normalisation |
        | separator             |
        | wildcard              |

  Rule: Two message ids that differ in any code point are two messages

    @ST-035
    Scenario Outline: Store keeps <twins> twins of a message id apart in one thread
      When store thread "A" is appended one message for each of the "<twins>" ids
      Then store thread "A" holds those messages, each id exactly as given

      Examples: twins
        | twins                 |
        | prefix                |
        | letter case           |
        | trailing space        |
        | Unicode normalisation |
        | separator             |
        | wildcard              |

  Rule: Two scopes that differ in any code point are two scopes

    @ST-035 @state
    Scenario Outline: Store keeps <twins> twins of a job scope apart
      Given the store claims the "state" capability
      When state key "plan" is written in each of the "<twins>" job scopes
      Then state key "plan" of each of the "<twins>" job scopes reads its own value

      Examples: twins
        | twins                 |
        | prefix                |
        | letter case           |
        | trailing space        |
        | Unicode normalisation |
        | separator             |
        | wildcard              |

    @ST-035 @knowledge
    Scenario Outline: Store keeps <twins> twins of a knowledge scope apart
      Given the store claims the "knowledge" capability
      When a fact about "editor" is stored in each of the "<twins>" knowledge scopes
      Then each of the "<twins>" knowledge scopes holds only its own fact about "editor"

      Examples: twins
        | twins                 |
        | prefix                |
        | letter case           |
        | trailing space        |
        | Unicode normalisation |
        | separator             |
        | wildcard              |

  Rule: The empty name is a name of its own, never a fallback

    @ST-035
    Scenario Outline: Store keeps the empty thread id apart from "<fallback>"
      When the empty thread id and "<fallback>" are each appended a message of their own
      Then the empty thread id and "<fallback>" each hold their own message only

      Examples: names a store may fall back on
        | fallback |
        | default  |
        | main     |
        | global   |

    @ST-035 @state
    Scenario: Store keeps the empty job scope apart from "default"
      Given the store claims the "state" capability
      When a state key is written in the empty job scope and in "default"
      Then that key of the empty job scope and of "default" reads its own value

    @ST-035 @knowledge
    Scenario: Store keeps the empty knowledge scope apart from "default"
      Given the store claims the "knowledge" capability
      When a fact is stored in the empty knowledge scope and in "default"
      Then that fact of the empty knowledge scope and of "default" is its own
