"use strict";
// The dealer screen (/dealer/<id>): what to do next in words, the alerts that pause the round with the
// buttons that resolve them, the dealer's own steps, the felt, the shoe, the meters and the last rounds.
// Buttons send commands over this page's WebSocket; the bridge signs them with the dealer's key and the
// table journals them like any dealer command.
(() => {
  const app = document.getElementById("app");
  const els = {};
  const STEPS = {open_bets: "Open bets", close_bets: "Close bets", settle: "Settle"};
  let armedVoid = false;

  function build() {
    app.innerHTML =
      '<header class="bar"><span class="title"></span><span class="next"></span><span class="round"></span></header>' +
      '<div class="dealer-layout"><div class="main"><section class="alerts"></section>' +
      '<section class="controls"></section><p class="felt-hidden" hidden>The table shows again here once the alerts ' +
      'are resolved.</p><div class="felt mini"><div class="centre"></div><div class="panel"></div>' +
      '<div class="spots"></div></div></div><aside class="side"><section class="shoe"></section>' +
      '<section class="doors"></section><section class="camera"></section><section class="meters"></section>' +
      '<section class="history"></section>' +
      '</aside></div><div class="toast" hidden></div>';
    for (const name of ["title", "next", "round", "alerts", "controls", "centre", "panel", "spots", "shoe", "doors", "camera",
      "meters", "history", "toast", "side", "main", "felt"]) els[name] = app.querySelector("." + name);
    els.hidden = app.querySelector(".felt-hidden");
    app.addEventListener("click", click);
    addEventListener("resize", fit);
    setInterval(() => { if (els.meters.dataset.pages > 1) { spotPage++; fit(); } }, 6000);
  }

  const esc = Felt.esc, money = Felt.money;

  function button(label, command, args, cls) {
    return `<button class="${cls || ""}" data-command="${command}" data-args="${esc(JSON.stringify(args || {}))}">` +
      `${esc(label)}</button>`;
  }

  // One button per way to resolve an alert; a camera alert's reassign lets the camera tell which card it is
  // (or deal it, when the shoe missed it), and offers each face-up card dealt to its zone (the dealer sees
  // which on the felt).
  function resolution(a, o) {
    const plain = button(Felt.upper(o), "resolve", {alert: a.id, action: o}, o === "void" ? "danger" : "");
    if (o !== "reassign") return plain;
    const named = (a.reassign || []).map((c) => button(`${c} is ${a.card || "the camera's card"}`, "resolve",
      {alert: a.id, action: o, card: c}));
    return plain + named.join("");
  }

  function alerts(state, info) {
    const list = (state.dealer_only || {}).alerts || [];
    const can = (info.commands || []).includes("resolve");
    return list.map((a) => `<div class="alert" data-alert="${a.id}" data-kind="${esc(a.kind)}">` +
      `<div class="alert-kind">${esc(Felt.words(a.kind).toUpperCase())}</div>` +
      (a.card ? `<div class="cards">${Cards.card(a.card, false)}</div>` : "") +
      `<div class="alert-text">${esc(a.text)}</div><div class="alert-actions">` +
      (can ? a.options.map((o) => resolution(a, o)).join("")
        : "<em>read-only screen</em>") + "</div></div>").join("");
  }

  // Manual card entry: switched on while the shoe is down, back off once it is up (the table refuses otherwise).
  function manualEntry(state, can) {
    const s = state.shoe || {};
    if (!can.has("manual_entry")) return "";
    if (!s.link && !s.manual) return button("Manual card entry", "manual_entry", {on: true}, "warn");
    if (s.link && s.manual) return button("Back to the shoe", "manual_entry", {on: false});
    return "";
  }

  function controls(state, info) {
    const can = new Set(info.commands || []);
    if (!can.size) return '<p class="readonly">Read-only: this bridge holds no dealer key.</p>';
    if (state.paused) return manualEntry(state, can);
    const exp = state.expected || {};
    const phase = (state.game || {}).phase;
    let html = manualEntry(state, can);
    for (const a of exp.actions || []) if (STEPS[a] && can.has(a) && !exp.actor) html += button(STEPS[a], a, {});
    const shoe = state.shoe || {};
    if (can.has("shuffle") && (phase === "shuffling" || shoe.check_due || (phase === "idle" && shoe.shuffle_due))) {
      html += button("Shuffle", "shuffle", {});
    }
    if (can.has("void") && ["betting", "dealing", "deciding", "settling"].includes(phase)) {
      html += armedVoid ? button("Confirm: void the round", "void", {reason: "voided from the dealer screen"}, "danger armed")
        : '<button class="danger" data-arm="void">Void round</button>';
    }
    return html;
  }

  // The shoe's status flags (drivers/shoe/protocol.py StateFlags) as a dealer says them.
  const FLAGS = {LID_OPEN: "lid open", CARDS_LOW: "cards low", CUT_CARD: "cut card out", EMPTY: "empty", JAM: "jammed",
    LOCKED: "locked"};
  const flagWords = (f) => FLAGS[f] || String(f).toLowerCase().replace(/_/g, " ");

  function shoe(state) {
    const s = state.shoe || {}, g = (state.game || {}).shoe || {};
    const total = (g.dealt || 0) + (g.remaining || 0);
    const pct = total ? (100 * (g.dealt || 0)) / total : 0;
    const cut = total && g.cut ? (100 * g.cut) / total : null;
    const rows = [
      ["Link", s.link ? "up" : "DOWN", s.link ? "" : "bad"],
      ["Down", !s.link && s.down ? s.down : "", "bad"],
      ["Card entry", s.manual ? "MANUAL: the dealer enters the cards" : "", "warn"],
      ["Deck check", s.check_due ? "due: the shoe was swapped or reset" : "", "bad"],
      ["Decks", g.decks || "", ""],
      ["Cards dealt", g.dealt !== undefined ? money(g.dealt) : money(s.dealt || 0), ""],
      ["Cards left", g.remaining !== undefined ? money(g.remaining) : "", ""],
      ["Cut card at", g.cut ? money(g.cut) : "", g.cut_reached ? "warn" : ""],
    ];
    if (g.cut_reached) rows.push(["Cut card", "reached: last round of the shoe", "warn"]);
    if (s.shuffle_due) rows.push(["Shuffle", "due", "warn"]);
    if (s.shuffling) rows.push(["Shuffler", "shuffling", ""]);
    if ((s.flags || []).length) rows.push(["Shoe says", s.flags.map(flagWords).join(", "), "warn"]);
    return "<h2>Shoe</h2>" + (total ? `<div class="shoe-bar"><div style="width:${pct.toFixed(1)}%"></div>` +
      (cut !== null ? `<span class="cut" style="left:${cut.toFixed(1)}%"></span>` : "") + "</div>" : "") +
      "<table>" + rows.filter((r) => r[1] !== "").map(([k, v, c]) => `<tr class="${c}"><td>${esc(k)}</td><td>${esc(v)}</td></tr>`).join("") +
      "</table>";
  }

  function doors(state) {
    const open = (state.dealer_only || {}).doors_open || [];
    return open.length ? `<div class="door-open">Door open: ${esc(open.join(", "))}</div>` : "";
  }

  // The names of the face-up cards anywhere in a game snapshot.
  function faceUp(node, found) {
    if (Array.isArray(node)) for (const v of node) faceUp(v, found);
    else if (node && typeof node === "object") {
      if (node.up === true && typeof node.card === "string") found.add(node.card);
      for (const v of Object.values(node)) if (v && typeof v === "object") faceUp(v, found);
    }
    return found;
  }

  // What the table camera sees lying still, by zone, for the round in play; an unsure reading is marked "?"
  // (it never alerts). The tracker reports a card gone only frames after it is picked up, and a dealer collects
  // the last round's cards while the next is dealt: those (dealt face up last round, not this one) are counted,
  // not listed among this round's.
  function camera(state) {
    const d = state.dealer_only || {};
    const inPlay = faceUp(state.game || {}, new Set());
    const before = faceUp(state.last_round || {}, new Set());
    const all = d.camera || [];
    const seen = all.filter((c) => c.face_down || c.card === null || inPlay.has(c.card) || !before.has(c.card));
    const left = all.length - seen.length;
    const down = d.camera_down ? `<div class="door-open camera-down">Camera down: ${esc(d.camera_down)}</div>` : "";
    if (!all.length) return down ? "<h2>Camera</h2>" + down : "";
    const zones = {};
    for (const c of seen) {
      const z = c.zone || "off the layout";
      (zones[z] = zones[z] || []).push(c);
    }
    return "<h2>Camera</h2>" + down + "<table class=\"camera-seen\">" + Object.entries(zones).map(([z, cards]) =>
      `<tr><td>${esc(z)}</td><td>` + cards.map((c) => c.face_down ? "face down" : c.card === null ? "withheld" :
        `<span class="${c.certain ? "" : "unsure"}" data-seen="${esc(c.card)}">${esc(c.card)}${c.certain ? "" : "?"}</span>`
      ).join(" ") + "</td></tr>").join("") +
      (left ? `<tr class="camera-last"><td>Last round</td><td>${left} not yet collected</td></tr>` : "") + "</table>";
  }

  // The table's meters two to a row; the spots' meters one row a spot (handle and house win: what was paid is
  // their difference, on the row's data-paid), shown a page at a time when they do not all fit (fit() sets the
  // page size; the pages turn every few seconds).
  function meters(state) {
    const m = (state.dealer_only || {}).meters;
    if (!m) return "";
    const rows = [["Rounds", m.rounds], ["Voided", m.voids], ["Handle", m.handle], ["Paid", m.paid],
      ["House win", m.house_win], ["Commission", m.commission], ["Refused commands", m.refused_commands],
      ["Power-ups", m.power_ups]];
    const cell = ([k, v]) => `<td>${k}</td><td data-meter="${esc(k)}">${money(v)}</td>`;
    const pairs = [];
    for (let i = 0; i < rows.length; i += 2) pairs.push(`<tr>${cell(rows[i])}${cell(rows[i + 1])}</tr>`);
    const spots = Object.entries(m.spots || {});
    return "<h2>Meters</h2><table class=\"table-meters\">" + pairs.join("") + "</table>" +
      (spots.length ? '<table class="spot-meters"><tr><th>Spot</th><th>Rounds</th><th>Handle</th><th>House</th></tr>' +
        spots.map(([s, v]) => `<tr data-spot-row="${esc(s)}" data-paid="${v.paid}"><td>${esc(s)}</td><td>${money(v.rounds)}</td>` +
          `<td>${money(v.handle)}</td><td>${money(v.house_win)}</td></tr>`).join("") +
        '<tr class="spot-pages" hidden><td colspan="4"></td></tr></table>' : "");
  }

  let spotPage = 0, fitting = 0;

  // The side panel fitted to the screen without scrolling: the oldest rounds go first (the newest stays), then
  // the spots' meters go into pages, then the rounds altogether.
  function fit() {
    const side = els.side, over = () => side.scrollHeight > side.clientHeight + 1;
    const rounds = [...els.history.querySelectorAll("tr[data-round]")];
    const spots = [...els.meters.querySelectorAll("tr[data-spot-row]")];
    const label = els.meters.querySelector(".spot-pages");
    els.history.hidden = false;
    for (const r of rounds) r.hidden = false;
    const page = (size) => {
      const pages = Math.ceil(spots.length / size), at = spotPage % pages;
      spots.forEach((r, i) => { r.hidden = Math.floor(i / size) !== at; });
      if (label) {
        label.hidden = pages < 2;
        label.firstChild.textContent = `spots ${at * size + 1}\u2013${Math.min(spots.length, (at + 1) * size)} of ` +
          `${spots.length}, page ${at + 1} of ${pages}`;
      }
      Felt.setData(els.meters, "pages", String(pages));
    };
    page(spots.length || 1);
    for (let i = rounds.length - 1; i > 0 && over(); i--) rounds[i].hidden = true;
    for (let size = spots.length - 1; size > 0 && over(); size--) page(size);
    if (over()) els.history.hidden = true;
    // The felt under the alerts and buttons, scaled down until it fits (a big layout, an alert with its card).
    // (its parts measured: a spot contains its layout, so what spills out of one is no scroll overflow)
    const main = els.main, felt = els.felt, full = () => {
      const b = main.getBoundingClientRect();
      return [...felt.querySelectorAll(".spot, .centre, .panel")].some((e) => {
        const r = e.getBoundingClientRect();
        return r.bottom > b.bottom - 1 || r.right > b.right - 1;
      });
    };
    felt.style.zoom = "";
    felt.style.display = "";
    for (let z = 0.94; z > 0.4 && full(); z -= 0.06) felt.style.zoom = z.toFixed(2);
    // Alerts piled up leave no room for a legible felt: it goes, and says so, until they are resolved (the round is
    // paused meanwhile); the alerts and their buttons are never pushed off the screen.
    const crowded = full();
    felt.style.display = crowded ? "none" : "";
    els.hidden.hidden = !crowded;
  }

  function history(state) {
    const rows = (state.history || []).slice().reverse();
    if (!rows.length) return "<h2>Rounds</h2><p>No round settled yet.</p>";
    return '<h2>Rounds</h2><table class="rounds"><tr><th>Round</th><th>Stakes</th><th>Paid</th><th>House</th></tr>' +
      rows.map((r) => r.voided !== undefined ?
        `<tr class="voided" data-round="${r.round}"><td>${r.round}</td><td colspan="3">voided: ${esc(r.voided)} (returned ${money(r.returned)})</td></tr>` :
        `<tr data-round="${r.round}"><td>${r.round}</td><td>${money(r.stakes)}</td><td>${money(r.returned)}</td>` +
        `<td>${money(r.house_win)}</td></tr>`).join("") + "</table>";
  }

  function render(state, info) {
    if (!els.next) build();
    const game = state.game || {};
    const exp = state.expected || {};
    const f = Felt.felt(state, info, {four: !!info.four_colour});
    Felt.patch(els.title, `${esc(info.title)} &middot; ${esc(state.table)}`);
    // (the table's words for the step; an action's name in them with its underscore is said as words: "house way")
    Felt.patch(els.next, `<span class="next-label">Next</span> ${esc(Felt.words(exp.text || ""))}`);
    Felt.patch(els.round, game.round ? `Round ${game.round}` : "");
    Felt.patch(els.alerts, alerts(state, info));
    Felt.patch(els.controls, controls(state, info));
    Felt.patchList(els.centre, f.centre);
    Felt.patchList(els.spots, f.spots);
    Felt.patch(els.panel, f.panel);
    Felt.patch(els.shoe, shoe(state));
    Felt.patch(els.doors, doors(state));
    Felt.patch(els.camera, camera(state));
    Felt.patch(els.meters, meters(state));
    Felt.patch(els.history, history(state));
    fit();
    // once more on the next frame: the first render may come before the stylesheet applies
    if (!fitting) fitting = requestAnimationFrame(() => { fitting = 0; fit(); });
    Felt.setData(document.body, "phase", game.phase || "");
    Felt.setData(document.body, "mode", f.mode);
    Felt.setData(document.body, "layout", f.layout);   // the game's own layout rules apply to the felt here too
    document.body.classList.toggle("paused", !!state.paused);
  }

  async function click(ev) {
    const arm = ev.target.closest("button[data-arm]");
    if (arm) { armedVoid = true; render(Screen.state, Screen.info); setTimeout(() => { armedVoid = false; }, 5000); return; }
    const btn = ev.target.closest("button[data-command]");
    if (!btn || btn.disabled) return;
    armedVoid = false;
    await Felt.command(btn, els.toast);
  }

  Screen.start(render);
})();
