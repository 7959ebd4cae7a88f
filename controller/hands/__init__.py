"""Pure, exact hand evaluators: poker (5 of 5-7 cards, jokers), three-card poker, pai gow, baccarat and blackjack points."""
