Feature: Store commit flags keep hidden data in place
  Document 001 marks failed output uncommitted: still stored, but out of the
  model's view. A store with the commit-flags capability keeps each message's
  flag, hides uncommitted messages from plain reads, and shows them again, in
  their original place, when asked to include them.

  Troubleshooting: a failure here usually means uncommitted rows are filtered
  after the window is cut, or a flag change moves a message to the end.

  Background:
    Given the store claims the "commit-flags" capability
    And store thread "A" holds 5 messages appended in batches of 5

  Rule: Clearing the flag hides a message in place; setting it shows it again

    @ST-017 @commit-flags
    Scenario: Store commit flag round trip keeps the message in its place
      When the committed flag of messages "m2, m4" in store thread "A" is cleared
      Then plain reads of store thread "A" return "m1, m3, m5"
      And reads of store thread "A" including uncommitted return "m1, m2, m3, m4, m5" with "m2, m4" uncommitted
      When the committed flag of messages "m2" in store thread "A" is set
      Then plain reads of store thread "A" return "m1, m2, m3, m5"

    @ST-018 @commit-flags
    Scenario: Store hides a message appended uncommitted
      When store thread "A" is appended the batch:
        | id | role | text        | committed |
        | u1 | tool | raw failure | no        |
        | u2 | tool | digest      | yes       |
      Then plain reads of store thread "A" return "m1, m2, m3, m4, m5, u2"
      And reads of store thread "A" including uncommitted return "m1, m2, m3, m4, m5, u1, u2" with "u1" uncommitted

  Rule: A hidden message keeps its id

    @ST-010 @commit-flags
    Scenario: Store refuses a batch repeating the id of an uncommitted message
      When the committed flag of messages "m4" in store thread "A" is cleared
      And store thread "A" is appended a batch of new ids with the stored id "m4" in the middle
      Then the store call is refused with DuplicateIdError
      And reads of store thread "A" including uncommitted return "m1, m2, m3, m4, m5" with "m4" uncommitted

  Rule: The window counts committed messages only

    @ST-019 @commit-flags
    Scenario: Store window skips uncommitted messages instead of shrinking
      When the committed flag of messages "m4, m5" in store thread "A" is cleared
      Then the newest 2 messages of store thread "A" are "m2, m3"
      And the newest 2 messages of store thread "A" including uncommitted are "m4, m5"

  Rule: Unknown ids are refused without a partial change

    @ST-020 @commit-flags
    Scenario: Store refuses a flag change naming an unknown id
      When clearing the committed flag of messages "m1, not-there" in store thread "A" is attempted
      Then the store call is refused with KeyError
      And plain reads of store thread "A" return "m1, m2, m3, m4, m5"
