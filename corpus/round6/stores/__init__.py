"""Round 6 store families."""
