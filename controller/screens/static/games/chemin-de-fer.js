"use strict";
// Chemin de fer: the punter's and the banker's hands in the centre, each naming its spot.
Felt.register("chemin-de-fer", {adapt(g) {
  return {mode: "bets", seats: {}, notes: g.banker ? {[g.banker]: "banker"} : {}, centre: [
    Felt.side("punter", g.punter ? `Punter (spot ${g.punter})` : "Punter", g.punter_hand),
    Felt.side("banker", g.banker ? `Banker (spot ${g.banker})` : "Banker", g.banker_hand)]};
}});
