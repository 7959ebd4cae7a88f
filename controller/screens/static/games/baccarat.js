"use strict";
// Baccarat: the player's and the banker's hands in the centre with their points; the spots only bet
// (the roads are in the side panel, table.js).
// A bet is a chip with the letter of its box, coloured as the roads colour it (B red, P blue, T green): three bets
// on each of 14 spots fit a 800x480 panel, where "5,000 banker" would not.
const BACCARAT_BOX = {banker: "B", player: "P", tie: "T"};
Felt.register("baccarat", {adapt(g) {
  return {mode: "bets", centre: [Felt.side("player", "Player", g.player), Felt.side("banker", "Banker", g.banker)], seats: {},
    betLabel: (box) => BACCARAT_BOX[box] || Felt.words(box)};
}});
