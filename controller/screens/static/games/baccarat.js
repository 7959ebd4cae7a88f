"use strict";
// Baccarat: the player's and the banker's hands in the centre with their points; the spots only bet
// (the roads are in the side panel, table.js).
Felt.register("baccarat", {adapt(g) {
  return {mode: "bets", centre: [Felt.side("player", "Player", g.player), Felt.side("banker", "Banker", g.banker)], seats: {}};
}});
