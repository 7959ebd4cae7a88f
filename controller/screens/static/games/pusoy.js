"use strict";
// Pusoy (thirteen cards set in three hands): while the hands are being set each seat shows how many cards it
// holds; once set, its back (five), middle (five) and front (three) hands with their names, a foul said.
Felt.register("pusoy", {adapt(g) {
  const seats = {}, notes = {};
  let dealt = false;
  for (const h of g.hands || []) {
    const m = /^spot:(\d+)$/.exec(h.to || "");
    if (!m) continue;
    dealt = true;
    if (h.back) {
      seats[m[1]] = [["Back", h.back, h.back_hand], ["Middle", h.middle, h.middle_hand], ["Front", h.front, h.front_hand]]
        .map(([label, cards, name]) => ({to: h.to, label, cards: cards || [], note: name || null}));
      if (h.foul) notes[m[1]] = '<span class="foul">foul</span>';
    } else {
      const n = (h.cards || []).length;
      notes[m[1]] = `<span class="held" data-held="${n}">${n} cards${h.decision ? "" : ", setting"}</span>`;
    }
  }
  return {mode: "seats", centre: [], seats, notes, dealt};
}});
