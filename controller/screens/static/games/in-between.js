"use strict";
// In-between (acey-deucey): the two spread cards and the card between them in the centre, the spread, the
// pot, and the seat whose turn it is.
Felt.register("in-between", {adapt(g) {
  const cards = g.cards || [];
  const spread = cards.filter((c) => c.role === "spread"), middle = cards.filter((c) => c.role !== "spread");
  const centre = [{to: "spread", label: "Spread", cards: spread, note: g.spread === null || g.spread === undefined ? null : String(g.spread)}];
  if (middle.length) centre.push({to: "middle", label: "In between", cards: middle, note: null});
  const notes = g.dealer ? {[g.dealer]: "dealer"} : {};
  const facts = Felt.fact("Pot", Felt.money(g.pot || 0), ` data-amount="${g.pot || 0}"`) + (g.player ? Felt.fact("To play", `spot ${g.player}`) : "");
  return {mode: "bets", centre, seats: {}, notes, dealt: cards.length > 0, panel: `<div class="facts">${facts}</div>`};
}});
