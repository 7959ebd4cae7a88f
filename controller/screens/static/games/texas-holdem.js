"use strict";
// Texas hold'em: the board in the centre under the street's name; the pot and the side pots, the blinds and
// whose action it is beside it; each seat's hole cards, stack, the button and its bet this street. Burns
// never reach a screen (controller/views.py drops them), so none is drawn.
Felt.register("texas-holdem", {adapt(g) {
  const money = Felt.money, esc = Felt.esc;
  const seats = {}, notes = {};
  let dealt = (g.board || []).length > 0;
  for (const s of g.seats || []) {
    if (s.in_hand) {
      dealt = dealt || (s.cards || []).length > 0;
      seats[s.spot] = [{to: `spot:${s.spot}`, label: "", cards: s.cards || [], note: s.hand || null,
        status: s.folded ? "folded" : s.all_in ? "all in" : ""}];
    }
    notes[s.spot] = (s.button ? '<span class="button-chip" data-button="1">D</span>' : "") +
      `<span class="stack" data-stack="${s.stack}">${money(s.stack)}</span>` +
      (s.bet ? `<span class="street-bet" data-bet="${s.bet}">bets ${money(s.bet)}</span>` : "");
  }
  const pots = (g.pots || []).map((p, i) =>
    Felt.fact(i ? `Side pot ${i}` : "Pot", money(p.amount), ` data-pot="${esc(p.name)}" data-amount="${p.amount}"`)).join("");
  const act = g.to_act ? Felt.fact("To act", `spot ${g.to_act.spot}` + (g.to_act.call ? ` &middot; ${money(g.to_act.call)} to call` : ""),
    ` data-to-act="${g.to_act.spot}"`) : "";
  const blinds = Felt.fact("Blinds", (g.blinds || []).map(money).join(" / ") + (g.ante ? ` &middot; ante ${money(g.ante)}` : ""));
  const street = g.street ? Felt.upper(g.street) : "Board";
  return {mode: "seats", dealt, seats, notes, centre: [{to: "board", label: street, cards: g.board || [], note: null}],
    panel: `<div class="facts">${pots}${act}${blinds}</div>`, boxLabel: (box) => box === "pot" ? "" : Felt.words(box)};
}});
