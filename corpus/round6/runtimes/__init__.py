"""Round 6 runtime families."""
