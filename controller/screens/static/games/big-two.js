"use strict";
// Big two: the hands are held, so each seat shows how many cards it holds; the play to beat lies in the
// centre, the trick so far (plays and passes, who led) beside it; the seat to play is lit.
Felt.register("big-two", {adapt(g) {
  const esc = Felt.esc;
  const notes = {};
  for (const p of g.players || []) {
    notes[p.spot] = `<span class="held" data-held="${p.count}">${p.count} card${p.count === 1 ? "" : "s"}</span>` +
      (g.winner === p.spot ? '<span class="out-first">out first</span>' : "");
  }
  const trick = g.trick || [];
  const last = [...trick].reverse().find((t) => !t.pass);
  const centre = [{to: "trick", label: last ? `Spot ${last.spot}: ${Felt.words(last.play || "")}` : "Trick",
    cards: g.to_beat || (last ? last.cards : []), note: null}];
  const recent = trick.slice(-6).map((t) => `<li data-spot="${t.spot}" data-pass="${t.pass ? 1 : 0}">spot ${t.spot}: ` +
    (t.pass ? "pass" : esc(Felt.words(t.play || "play"))) + "</li>").join("");
  const led = trick.length ? Felt.fact("Led by", `spot ${trick[0].spot}`, ` data-led="${trick[0].spot}"`) : "";
  const passes = trick.length ? Felt.fact("Passes", String(trick.filter((t) => t.pass).length)) : "";
  return {mode: "seats", centre, seats: {}, notes, dealt: (g.players || []).length > 0,
    spots: (g.players || []).length ? g.players.map((p) => p.spot) : null,
    panel: `<div class="facts">${led}${passes}</div>` + (recent ? `<ol class="trick-log">${recent}</ol>` : "")};
}});
