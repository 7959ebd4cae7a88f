"use strict";
// Red dog: the two cards and the third in the centre, the spread and what it pays; the raises are bets.
Felt.register("red-dog", {adapt(g) {
  const cards = g.cards || [];
  const spread = g.spread === null || g.spread === undefined ? null : `spread ${g.spread}`;
  const facts = (spread ? Felt.fact("Spread", String(g.spread)) : "") + (g.pays ? Felt.fact("Pays", Felt.esc(String(g.pays).replace(":", " to "))) : "");
  return {mode: "bets", seats: {}, dealt: cards.length > 0, centre: [{to: "cards", label: "Cards", cards, note: null}],
    panel: facts ? `<div class="facts">${facts}</div>` : ""};
}});
