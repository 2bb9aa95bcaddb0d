"""Broken stores and runtimes written blind, against the public contract only.

Each round's corpus is kept apart from the kit's mutants: its authors never read
the kit's features, steps, generated checks or mutants, so the share of it the
kit rejects measures what the kit catches of bugs nobody described to it.
``bench/blind_corpus.py`` runs it and prints the catch rate.
"""
