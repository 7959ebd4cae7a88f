"use strict";
// The player screen (/table/<id>) and a spot's own screen (/table/<id>/spot/<n>): the felt with the
// cards as they are faced, bets, totals, results and payouts, the roads or the paytables, and a countdown
// while bets are open. Large type, nothing a player does not need.
(() => {
  const cfg = Screen.cfg;
  const app = document.getElementById("app");
  const els = {};
  let current = null;

  function build() {
    app.innerHTML =
      '<header class="bar"><span class="title"></span><span class="banner"></span>' +
      '<span class="countdown" hidden></span><span class="round"></span></header>' +
      '<div class="layout"><div class="felt"><div class="centre"></div><div class="panel"></div><div class="print"></div>' +
      '<div class="spots"></div></div>' +
      '<aside class="side"></aside></div>';
    for (const name of ["title", "banner", "countdown", "round", "felt", "centre", "panel", "print", "spots", "side"]) {
      els[name] = app.querySelector("." + name);
    }
  }

  function side(state, info) {
    if (info.game === "baccarat" || info.game === "chemin-de-fer") {
      const narrow = window.innerWidth < 1000;
      return '<div class="roads">' + Felt.roads(state, narrow ? 8 : 12, narrow ? 14 : 20) + "</div>" +
        Felt.ruleNotes(info) + Felt.limits(info);
    }
    // blackjack's rules, and the limits of a game with no paytable, are printed on the felt, as on a real
    // table: the felt keeps the width for its spots
    const tables = Felt.paytables(info);
    return info.game === "blackjack" || !tables ? "" : tables + Felt.ruleNotes(info) + Felt.limits(info);
  }

  // What the felt has printed on it: blackjack's payouts and dealer's rule, and the limits.
  function print(info) {
    const r = info.rules || {};
    if (info.game === "blackjack") {
      const limit = r.limits && r.limits.main ? ` &middot; Bets ${Felt.money(r.limits.main.min)}&ndash;${Felt.money(r.limits.main.max)}` : "";
      return Felt.ruleNotes(info).replace(/<\/li><li>/g, " &middot; ").replace(/<\/?(ul|li)[^>]*>/g, "") + limit;
    }
    // (baccarat's and chemin de fer's limits are in the side panel beside the roads, here on a small screen)
    if (Felt.paytables(info)) return "";
    const limits = r.limits ? Object.entries(r.limits) : [];
    return limits.map(([box, l]) => `${Felt.esc(Felt.upper(box))} ${Felt.money(l.min)}&ndash;${Felt.money(l.max)}`).join(" &middot; ");
  }

  function render(state, info) {
    if (!els.felt) build();
    current = state;
    const four = cfg.four_colour !== undefined ? cfg.four_colour : !!info.four_colour;
    const f = Felt.felt(state, info, {four, spot: cfg.spot});
    const game = state.game || {};
    Felt.patch(els.title, Felt.esc(info.title) + (cfg.spot ? ` &middot; spot ${cfg.spot}` : ""));
    Felt.patch(els.banner, Felt.esc(Felt.banner(state, info)));
    Felt.patch(els.round, game.round ? `Round ${game.round}` : "");
    Felt.patchList(els.centre, f.centre);
    Felt.patchList(els.spots, f.spots);
    Felt.morph(els.panel, f.panel);   // (a faro layout, a baccarat road: morphed, only what moved is written)
    Felt.morph(els.side, side(state, info));
    if (els.print._info !== info) { els.print._info = info; Felt.patch(els.print, print(info)); }   // (the rules: per info)
    Felt.setData(document.body, "phase", game.phase || "");
    Felt.setData(document.body, "mode", f.mode);
    Felt.setData(document.body, "game", info.game);
    Felt.setData(document.body, "layout", f.layout);
    document.body.classList.toggle("showing-last", !!f.settled);
    tick();
  }

  // Seconds until bets close, on the bridge's clock (the kiosk's own clock may be off).
  function tick() {
    if (!els.countdown) return;
    const at = current && current.game && current.game.phase === "betting" ? current.bets_close_at : null;
    const left = at ? Math.max(0, Math.ceil(at - Screen.now())) : null;
    if (els.countdown.hidden !== (left === null)) els.countdown.hidden = left === null;
    if (left !== null && els.countdown.textContent !== String(left)) els.countdown.textContent = String(left);
    els.countdown.classList.toggle("last", left !== null && left <= 5);
  }

  setInterval(tick, 250);
  window.addEventListener("resize", () => { if (current) render(current, Screen.info); });
  Screen.start(render);
})();
