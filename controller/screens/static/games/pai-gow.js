"use strict";
// Pai gow poker: each spot's seven cards, then its high (five) and low (two) hands with their names; the
// dealer's set by the house way in the centre; who is dealt first (the dice) beside it.
Felt.register("pai-gow", {adapt(g) {
  const centre = [], seats = {}, notes = {};
  for (const h of g.hands || []) {
    const m = /^spot:(\d+)$/.exec(h.to || "");
    const who = m ? "" : "Dealer ";
    const hands = h.back ? [
      {to: h.to, label: `${who}high`, cards: h.back, note: h.back_hand || null, status: h.foul ? "foul" : ""},
      {to: h.to, label: `${who}low`, cards: h.front || [], note: h.front_hand || null,
        status: h.house_way ? `house way: ${h.house_way}` : ""}] :
      [{to: h.to, label: m ? "" : "Dealer", cards: h.cards || [], note: null}];
    if (m) seats[m[1]] = hands; else centre.push(...hands);
  }
  if (g.banker) notes[g.banker] = "banker";
  const order = g.hand_order ? Felt.fact("First hand", `${Felt.esc(g.hand_order.first)} (${g.hand_order.by} ${g.hand_order.roll})`) : "";
  return {mode: "seats", centre, seats, notes, panel: order ? `<div class="facts">${order}</div>` : ""};
}});
