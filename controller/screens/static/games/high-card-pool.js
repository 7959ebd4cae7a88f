"use strict";
// High-card pool: each seat's cards turned one by one, the pot, the dealer's seat and whose turn it is.
Felt.register("high-card-pool", {adapt(g) {
  const seats = {}, notes = {};
  for (const h of g.hands || []) seats[h.spot] = [{to: `spot:${h.spot}`, label: "", cards: h.cards || [], note: null}];
  if (g.dealer) notes[g.dealer] = "dealer";
  const facts = Felt.fact("Pot", Felt.money(g.pot || 0), ` data-amount="${g.pot || 0}"`) +
    (g.player ? Felt.fact("To turn", `spot ${g.player}`) : "");
  return {mode: "seats", centre: [], seats, notes, panel: `<div class="facts">${facts}</div>`};
}});
