Feature: Store round trip is exact
  What a store gives back is what the next model reads and what a person
  audits. Every field of a message, and any Unicode text, comes back exactly;
  text a store cannot hold is refused loudly, never altered quietly.

  Troubleshooting: a mismatch here usually comes from Unicode normalisation,
  whitespace trimming, an encoding step (latin-1, escaping markup), a text
  column with a length limit, or JSON numbers turned into decimals.

  Rule: Every field comes back exactly

    @ST-013
    Scenario: Store keeps every field of a message
      When store thread "A" is appended a message with every field set
      Then store thread "A" gives that message back field for field

  Rule: Any Unicode text comes back code point for code point

    @ST-014
    Scenario Outline: Store keeps <sample> text exactly
      When store thread "A" is appended a message whose text is the "<sample>" sample
      Then store thread "A" gives that text back exactly

      Examples: hard texts
        | sample                          |
        | right-to-left                   |
        | emoji                           |
        | combining marks                 |
        | leading and trailing whitespace |
        | SQL fragment                    |
        | markup                          |
        | one megabyte                    |

  Rule: Texts of every size come back exactly

    @ST-014
    Scenario Outline: Store keeps a text of <size> bytes of <characters> characters exactly
      When store thread "A" is appended a message whose text is <size> bytes of <characters> characters
      Then store thread "A" gives that text back exactly

      Examples: sizes around the limits of common text columns
        | size     | characters |
        | 0        | ASCII      |
        | 1        | ASCII      |
        | 255      | ASCII      |
        | 256      | ASCII      |
        | 256      | 4-byte     |
        | 4000     | 2-byte     |
        | 4001     | ASCII      |
        | 8001     | ASCII      |
        | 65535    | ASCII      |
        | 65536    | ASCII      |
        | 65536    | 3-byte     |

      @stress
      Examples: texts of a mebibyte and more
        | size     | characters |
        | 1048576  | ASCII      |
        | 1048577  | 4-byte     |
        | 16777216 | 2-byte     |

  Rule: Text a store cannot hold is refused, never altered

    @ST-015
    Scenario: Store keeps a lone surrogate exactly or refuses the whole batch
      Given store thread "A" holds 1 messages
      When store thread "A" is appended a batch whose second message text holds a lone surrogate
      Then store thread "A" keeps "m1, v1, v2, v3" exactly, or only "m1" once refused

    @ST-014 @ST-015
    Scenario: Store keeps NUL in text exactly or refuses it
      When store thread "A" is appended a message whose text is the "NUL" sample
      Then store thread "A" gave that text back exactly or refused it as unsupported

    @ST-013 @ST-015
    Scenario Outline: Store keeps <sample> inside metadata and parts exactly or refuses it
      When store thread "A" is appended a message whose metadata and parts hold the "<sample>" sample
      Then store thread "A" gave that message back exactly or refused it as unsupported

      Examples: hard values
        | sample         |
        | NUL            |
        | lone surrogate |
        | emoji          |

  Rule: Every JSON value comes back of the same kind and value

    @ST-013
    Scenario Outline: Store keeps a <kind> value in metadata and parts as the same kind
      When store thread "A" is appended a message whose metadata and parts hold the "<kind>" JSON value
      Then store thread "A" gives that message back field for field

      Examples: JSON values
        | kind                   |
        | true                   |
        | false                  |
        | null                   |
        | zero                   |
        | negative integer       |
        | integer beyond 2**53   |
        | integer beyond 64 bits |
        | whole float            |
        | float zero             |
        | decimal fraction       |
        | smallest float         |
        | largest float          |
        | float with exponent    |
        | empty string           |
        | string of digits       |
        | string true            |
        | empty list             |
        | empty object           |
        | list of every kind     |
        | deep nesting           |
        | look-alike keys        |

    @ST-013 @ST-015
    Scenario: Store keeps the sign of a negative zero or refuses it
      When store thread "A" is appended a message whose metadata and parts hold the "negative zero" JSON value
      Then store thread "A" gave that message back exactly or refused it as unsupported
