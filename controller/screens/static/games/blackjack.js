"use strict";
// Blackjack: the dealer's hand in the centre, each spot's hands (splits side by side) with totals and status.
Felt.register("blackjack", {adapt(g) {
  const seats = {};
  for (const s of g.spots || []) {
    seats[s.spot] = s.hands.map((h, i) => ({
      to: `spot:${s.spot}`, label: s.hands.length > 1 ? `hand ${i + 1}` : "", cards: h.cards, note: h.total,
      status: [...new Set([h.status !== "in play" ? h.status : "", h.doubled ? "doubled" : ""])].filter(Boolean).join(", "),
    }));
  }
  const d = g.dealer || {};
  // a split hand's stake ("split:1" is the second hand's: hands count from the first, "main") named as its hand
  const boxLabel = (box) => /^split:\d+$/.test(box) ? `hand ${Number(box.slice(6)) + 1}` : Felt.words(box);
  return {mode: "seats", centre: [{to: "dealer", label: "Dealer", cards: d.cards || [], note: d.showing}], seats,
    boxLabel};
}});
