"""Round 5 of the blind corpus."""
