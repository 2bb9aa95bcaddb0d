"""Round 6 of the blind corpus: broken stores and runtimes written against the contract only."""
