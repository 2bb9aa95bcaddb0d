"""Broken runtimes of round 5, each family on a correct base of its own."""
