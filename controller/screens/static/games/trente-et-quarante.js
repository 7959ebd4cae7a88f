"use strict";
// Trente et quarante: the noir row and the rouge row with their totals (the nearer to 31 wins), couleur or
// inverse from the first card's colour, the result; the spots bet on noir, rouge, couleur and inverse.
Felt.register("trente-et-quarante", {adapt(g, info, opts) {
  const noir = g.noir || {cards: []}, rouge = g.rouge || {cards: []};
  const first = (noir.cards || [])[0];
  const red = first && first.card ? /[HD]$/.test(first.card) : null;
  const done = noir.total !== null && noir.total !== undefined && rouge.total !== null && rouge.total !== undefined;
  const winner = done ? (noir.total < rouge.total ? "noir" : rouge.total < noir.total ? "rouge" : null) : null;
  const colour = winner && red !== null ? ((winner === "rouge") === red ? "couleur" : "inverse") : null;
  const row = (name, r) => `<div class="tq-row${winner === name ? " won" : ""}" data-row="${name}">` +
    `<span class="tq-name">${Felt.upper(name)}</span>${Felt.cardRow(r.cards || [], opts.four)}` +
    `<span class="tq-total" data-total="${r.total === null || r.total === undefined ? "" : r.total}">${r.total === null || r.total === undefined ? "" : r.total}</span></div>`;
  const facts = (red !== null ? Felt.fact("First card", red ? "red" : "black") : "") +
    (colour ? Felt.fact("Colour", colour === "couleur" ? "Couleur wins" : "Inverse wins", ` data-colour="${colour}"`) : "") +
    (done && !winner ? Felt.fact("Result", "Refait") : "");
  return {mode: "bets", centre: [], seats: {}, dealt: (noir.cards || []).length > 0,
    panel: `<div class="tq">${row("noir", noir)}${row("rouge", rouge)}</div><div class="facts">${facts}</div>`};
}});
