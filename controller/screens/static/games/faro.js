"use strict";
// Faro: the spade layout (ace to six, king to eight, the seven at the end) with each rank's bets on it,
// coppered bets marked, the casekeeper's count of each rank out; the turn (the loser, then the winner) and
// the soda in the centre. Stuss uses the same layout (stuss.js).
const FaroLayout = (() => {
  const RANKS = [["A", "2", "3", "4", "5", "6"], ["K", "Q", "J", "T", "9", "8"]];
  const NAME = {A: "A", T: "10", J: "J", Q: "Q", K: "K"};
  const rankName = (r) => NAME[r] || r;
  function boxLabel(box) {
    const m = /^copper:(\w+)$/.exec(box);
    if (m) return `${rankName(m[1])} coppered`;
    if (/^call/.test(box)) return Felt.words(box);
    return rankName(box);
  }
  function adapt(g, info, opts) {
    const esc = Felt.esc, money = Felt.money;
    const on = {};
    for (const b of g.bets || []) {
      const m = /^(copper:)?(\w+)$/.exec(b.box);
      if (!m) continue;
      (on[m[2]] = on[m[2]] || []).push(`<span class="chip${m[1] ? " coppered" : ""}" data-spot="${b.spot}" ` +
        `data-box="${esc(b.box)}">${b.spot}: ${money(b.amount)}</span>`);
    }
    const keeper = g.casekeeper || {};
    const cell = (r) => {
      const k = keeper[r] || {out: 0, left: 4};
      const beads = Array.from({length: k.out + k.left}, (_, i) => `<i class="${i < k.out ? "out" : ""}"></i>`).join("");
      return `<div class="faro-rank" data-rank="${r}" data-out="${k.out}"><span class="faro-face">${rankName(r)}&spades;</span>` +
        `<span class="keeper">${beads}</span><span class="chips">${(on[r] || []).join("")}</span></div>`;
    };
    const layout = `<div class="faro-layout">${RANKS.map((row) => `<div class="faro-line">${row.map(cell).join("")}</div>`).join("")}` +
      `<div class="faro-seven">${cell("7")}</div></div>`;
    const turn = g.turn || [];
    const centre = [];
    if (g.soda) centre.push({to: "soda", label: "Soda", cards: [g.soda], note: null});
    for (const role of ["loser", "winner"]) {
      const c = turn.find((t) => t.role === role);
      centre.push({to: role, label: role === "loser" ? "Loser (bank)" : "Winner (players)", cards: c ? [c] : [], note: null});
    }
    const facts = Felt.fact("Cards left", String(g.cards_left === undefined ? "" : g.cards_left)) +
      (g.last_turn ? Felt.fact("Last turn", "call the turn") : "");
    return {mode: "bets", centre, seats: {}, dealt: turn.length > 0, boxLabel,
      panel: layout + `<div class="facts">${facts}</div>`};
  }
  return {adapt};
})();
Felt.register("faro", FaroLayout);
