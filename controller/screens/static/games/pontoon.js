"use strict";
// Pontoon: the banker's hand (a player's spot) in the centre, each spot's hands with totals and status.
Felt.register("pontoon", {adapt(g) {
  const seats = {};
  for (const s of g.spots || []) {
    seats[s.spot] = s.hands.map((h, i) => ({to: `spot:${s.spot}`, label: s.hands.length > 1 ? `hand ${i + 1}` : "",
      cards: h.cards || [], note: h.total, status: h.status && h.status !== "in play" ? h.status : ""}));
  }
  const d = g.dealer || {};
  const notes = g.banker ? {[g.banker]: '<span class="banker-chip">banker</span>'} : {};
  return {mode: "seats", seats, notes,
    centre: [{to: "dealer", label: g.banker ? `Banker (spot ${g.banker})` : "Banker", cards: d.cards || [], note: d.total}],
    panel: g.cards_left !== undefined ? `<div class="facts">${Felt.fact("Cards left", String(g.cards_left))}</div>` : ""};
}});
