"""Croupier's core: cards, randomness, hand evaluation, game rules, slot math and the table/cabinet runtime."""

__version__ = "0.1.0"
