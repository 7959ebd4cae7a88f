"use strict";
// The felt, drawn from a view's state: hands and cards, bets per spot and box, results and payouts, the
// baccarat roads (bead plate, big road, the derived roads and their ask) and the paytables. Pure functions from state to HTML text; the
// pages patch an element only when its text changed, so an update touches only what moved.
// Every element a test or a person compares against the view carries data-* attributes: data-to on a
// hand, data-card on a card ("" when face down), data-spot/data-box/data-amount on a bet,
// data-spot/data-box/data-stake/data-returned/data-outcome on a result.
const Felt = (() => {
  const ESC = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"};
  const esc = (s) => String(s === null || s === undefined ? "" : s).replace(/[&<>"']/g, (c) => ESC[c]);
  const MONEY = new Intl.NumberFormat("en-US");   // (one formatter: toLocaleString builds one per call)
  const money = (n) => MONEY.format(Number(n));
  const words = (s) => String(s).replace(/_/g, " ");
  const upper = (s) => { const w = words(s); return w.charAt(0).toUpperCase() + w.slice(1); };
  const ratio = (r) => esc(String(r).replace(":", " to "));

  function patch(el, html) {
    if (el && el._html !== html) { el.innerHTML = html; el._html = html; }
  }

  // Bring el's children to what html describes, keeping every node that is already right: the new HTML is
  // parsed once off the page (cheap: a card is an <svg> with one <use>, cards.js) and only the attributes,
  // texts and nodes that differ are written. An update that deals one card writes that card, not its spot:
  // no node re-created means no style, layout or paint work for what did not change.
  const scratch = document.createElement("template");

  function morph(el, html) {
    if (!el || el._html === html) return;
    el._html = html;
    scratch.innerHTML = html;
    morphChildren(el, scratch.content);
  }

  function morphChildren(to, from) {
    let a = to.firstChild, b = from.firstChild;
    while (b) {
      const next = b.nextSibling;
      if (a && a.nodeType === b.nodeType && a.nodeName === b.nodeName) {
        morphNode(a, b);
        a = a.nextSibling;
      } else {
        to.insertBefore(b, a);   // (b leaves the template's fragment for the page)
      }
      b = next;
    }
    while (a) { const next = a.nextSibling; to.removeChild(a); a = next; }
  }

  function morphNode(a, b) {
    if (a.nodeType !== 1) {
      if (a.nodeValue !== b.nodeValue) a.nodeValue = b.nodeValue;
      return;
    }
    const want = b.attributes, have = a.attributes;
    for (let i = 0; i < want.length; i++) {
      const {name, value} = want[i];
      if (a.getAttribute(name) !== value) a.setAttribute(name, value);
    }
    for (let i = have.length - 1; i >= 0; i--) {
      const name = have[i].name;
      if (!b.hasAttribute(name)) a.removeAttribute(name);
    }
    morphChildren(a, b);
  }

  // Patch a list of pieces (a spot, a hand) one by one, each morphed: a card dealt to spot 3 touches spot 3's
  // new card only. Each piece sits in a wrapper with display: contents, so the layout sees the pieces themselves.
  function patchList(el, pieces) {
    if (!el) return;
    while (el.children.length > pieces.length) el.lastElementChild.remove();
    while (el.children.length < pieces.length) el.insertAdjacentHTML("beforeend", '<div class="piece"></div>');
    pieces.forEach((html, i) => morph(el.children[i], html));
  }

  function setData(el, key, value) {   // an attribute write only when it changes (no needless style work)
    if (el.dataset[key] !== value) el.dataset[key] = value;
  }

  // A note over a staff page for a few seconds (longer when something was refused).
  function toast(el, text, bad) {
    el.textContent = text;
    el.hidden = false;
    el.classList.toggle("bad", !!bad);
    clearTimeout(el._timer);
    el._timer = setTimeout(() => { el.hidden = true; }, bad ? 8000 : 3000);
  }

  // A staff page's command button (data-command, data-args): disabled while the table answers; the reply
  // is kept on the body for tests and said in the toast.
  async function command(btn, toastEl) {
    btn.disabled = true;
    const reply = await Screen.send(btn.dataset.command, JSON.parse(btn.dataset.args));
    btn.disabled = false;
    document.body.dataset.lastReply = JSON.stringify(reply);
    toast(toastEl, reply.ok ? `${words(btn.dataset.command)}: done` : `refused: ${reply.error}`, !reply.ok);
  }

  // ---------------------------------------------------------------------------------------------- games
  // Each game lays its own table out, in a module of its own (static/games/<game>.js) over this frame:
  //   Felt.register("<game>", {adapt(game, info, opts) -> layout})
  // layout: {mode, centre: [hand], seats: {spot: [hand]}, notes: {spot: html}, panel: html, spots: [n],
  //   boxLabel(box), betLabel(box)}: a box's name on a result and on a bet (betLabel, where a bet's chip is short)
  //   hand: {to, label, cards, note, status}; notes: a few words under a spot's number (a stack, "button");
  //   panel: what lies in the middle of the table besides hands (a pot, a board's caption, a casekeeper);
  //   spots: the spot numbers to show when not 1..info.spots. mode "seats": cards lie at the spots
  //   (blackjack, the poker games); "bets": the cards are in the centre and the spots only bet on them.
  // A game with no module has no layout: the page says so (data-layout="missing"), never a generic grid.
  const LAYOUTS = {};

  function register(name, spec) { LAYOUTS[name] = spec; }

  function side(to, label, hand) {
    const h = hand || {};
    return {to, label, cards: h.cards || [], note: h.points === null || h.points === undefined ? null : String(h.points)};
  }

  function adapt(game, info, opts) {
    const g = game || {};
    const name = g.game || (info && info.game);
    const spec = LAYOUTS[name];
    const base = {mode: "seats", centre: [], seats: {}, notes: {}, panel: "", spots: null, layout: spec ? name : "missing"};
    return spec ? Object.assign(base, spec.adapt(g, info || {}, opts || {})) : base;
  }

  // The games whose snapshot lists hands by where they lie ("dealer", "community", "spot:N"): the spots'
  // hands at the spots, the others in the centre, each with its hand's name.
  function handsByPlace(g) {
    const centre = [], seats = {};
    for (const h of g.hands || []) {
      const m = /^spot:(\d+)$/.exec(h.to);
      const hand = {to: h.to, label: m ? "" : upper(h.to), cards: h.cards || [], note: h.hand || null};
      if (m) (seats[m[1]] = seats[m[1]] || []).push(hand); else centre.push(hand);
    }
    const dealer = centre.find((h) => h.to === "dealer");
    if (dealer && g.dealer_qualifies !== undefined && g.dealer_qualifies !== null) {
      dealer.status = g.dealer_qualifies ? "qualifies" : "does not qualify";
    }
    return {mode: "seats", centre, seats};
  }

  // Cards as a row on their own (a board, a trick, a row of trente et quarante), outside any hand.
  function cardRow(cards, four, attrs = "") {
    return `<div class="cards row"${attrs} style="--n:${Math.max(1, (cards || []).length)}">` +
      ((cards || []).map((c) => Cards.placed(c, four)).join("") || '<span class="nocards"></span>') + "</div>";
  }

  // A small fact in the panel: a caption over a value.
  function fact(label, value, attrs = "") {
    return `<div class="fact"${attrs}><span class="fact-label">${esc(label)}</span><span class="fact-value">${value}</span></div>`;
  }

  function hasCards(layout) {
    const hands = layout.centre.concat(...Object.values(layout.seats));
    return hands.some((h) => h.cards && h.cards.length) || !!layout.dealt;
  }

  // What lies on the felt: the round in play, or, between rounds (no cards, no bets yet), the last round
  // as it settled beside its payouts. Returns {game, layout, settled}.
  function table(state, info, opts) {
    const live = state.game || {};
    const layout = adapt(live, info, opts);
    const history = state.history || [];
    const last = history[history.length - 1];
    const lr = state.last_round;
    if (!hasCards(layout) && !(live.bets || []).length && lr && last && last.round === lr.round && !last.voided) {
      return {game: lr, layout: adapt(lr, info, opts), settled: last};
    }
    return {game: live, layout, settled: null};
  }

  // ---------------------------------------------------------------------------------------------- pieces

  function hand(h, four, index) {
    const cards = (h.cards || []).map((c) => Cards.placed(c, four)).join("");
    return `<div class="hand" data-to="${esc(h.to)}" data-hand="${index || 0}">` +
      (h.label ? `<div class="label">${esc(h.label)}</div>` : "") +
      `<div class="cards" style="--n:${Math.max(1, (h.cards || []).length)}">${cards || '<span class="nocards"></span>'}</div>` +
      (h.note ? `<div class="note">${esc(h.note)}</div>` : "") +
      (h.status ? `<div class="hstatus">${esc(h.status)}</div>` : "") + "</div>";
  }

  function betsBySpot(game) {
    const by = {};
    for (const b of (game && game.bets) || []) (by[b.spot] = by[b.spot] || []).push(b);
    return by;
  }

  function resultsBySpot(settled) {
    const by = {};
    for (const r of (settled && settled.results) || []) (by[r.spot] = by[r.spot] || []).push(r);
    return by;
  }

  function bet(b, label) {
    return `<span class="bet" data-spot="${b.spot}" data-box="${esc(b.box)}" data-amount="${b.amount}">` +
      `<b>${money(b.amount)}</b> ${esc(label ? label(b.box) : words(b.box))}</span>`;
  }

  function result(r, single, label) {
    const net = r.returned - r.stake;
    const cls = (net > 0 ? "win" : net < 0 ? "lose" : "push") + (single ? " single" : "");
    const amount = net > 0 ? ` +${money(net)}` : net < 0 ? ` \u2212${money(-net)}` : "";
    return `<div class="result ${cls}" data-spot="${r.spot}" data-box="${esc(r.box)}" data-stake="${r.stake}" ` +
      `data-returned="${r.returned}" data-outcome="${esc(r.outcome)}" title="${esc(r.line)}">` +
      `<span class="outcome">${esc(words(r.outcome).toUpperCase())}${amount}</span> <span class="box">${esc(label ? label(r.box) : words(r.box))}</span>` +
      `${r.commission ? ` <span class="commission">commission ${money(r.commission)}</span>` : ""}</div>`;
  }

  // One spot: its number, bets, hands (where cards lie at the spots) and results.
  function spot(n, view, opts) {
    const bets = view.bets[n] || [], hands = view.layout.seats[n] || [], results = view.results[n] || [];
    const active = bets.length || hands.length || results.length;
    const toAct = opts.actor === `spot:${n}`;
    const net = results.reduce((a, r) => a + r.returned - r.stake, 0);
    const total = results.length ? `<div class="net ${net > 0 ? "win" : net < 0 ? "lose" : "push"}" data-net="${net}">` +
      `${net > 0 ? "WIN" : net < 0 ? "LOSE" : "PUSH"}${net ? " " + money(Math.abs(net)) : ""}</div>` : "";
    const note = view.layout.notes[n];
    return `<section class="spot${active || note ? "" : " empty"}${toAct ? " to-act" : ""}" data-spot="${n}">` +
      `<div class="spot-no">${n}</div>` + (note ? `<div class="seat-note">${note}</div>` : "") +
      `<div class="bets">${bets.map((b) => bet(b, view.layout.betLabel || view.layout.boxLabel)).join("")}</div>` +
      (hands.length ? `<div class="hands">${hands.map((h, i) => hand(h, opts.four, i)).join("")}</div>` : "") +
      `<div class="results">${total}${results.map((r) => result(r, results.length === 1, view.layout.boxLabel)).join("")}</div></section>`;
  }

  // The felt of a state: {centre: [hand HTML], spots: [spot HTML], settled, mode}. opts: {four, spot}.
  function felt(state, info, opts) {
    const t = table(state, info, opts);
    const view = {layout: t.layout, bets: betsBySpot(t.game), results: resultsBySpot(t.settled)};
    const o = {four: opts.four, actor: (state.expected || {}).actor};
    const centre = t.layout.centre.map((h, i) => hand(h, opts.four, i));
    let numbers;
    if (opts.spot) numbers = [opts.spot];
    else if (t.layout.spots) numbers = t.layout.spots;
    else {
      const count = Number(info.spots) || 0;
      const used = new Set([...Object.keys(view.bets), ...Object.keys(view.results), ...Object.keys(t.layout.seats)].map(Number));
      numbers = count ? Array.from({length: count}, (_, i) => i + 1) : [...used].sort((a, b) => a - b);
    }
    return {centre, spots: numbers.map((n) => spot(n, view, o)), settled: t.settled, mode: t.layout.mode,
      panel: t.layout.panel || "", layout: t.layout.layout};
  }

  // What the players are told, in a few words.
  function banner(state, info) {
    const g = state.game || {};
    if (state.paused) return "Please wait";
    switch (g.phase) {
      case "betting": return "Place your bets";
      case "dealing": return "No more bets";
      case "deciding": {   // the dealer's prompt names commands: a player is told whose turn it is
        const actor = (state.expected && state.expected.actor) || "";
        const m = /^spot:(\d+)/.exec(actor);
        // (the dealer decides too: pai gow's dice for the first hand; "players decide" would be wrong there)
        return m ? `Spot ${m[1]} to play` : actor === "dealer" ? "Dealer to play" : "Players decide";
      }
      case "settling": return "Paying";
      case "shuffling": return "Shuffling";
      default: {
        const t = table(state, info);
        return t.settled ? settledText(state, t.settled) : "Next round soon";
      }
    }
  }

  function settledText(state, settled) {
    const board = state.scoreboard || [];
    const coup = board.length && board[board.length - 1].round === settled.round ? board[board.length - 1] : null;
    if (coup) {
      return coup.winner === "tie" ? `Tie ${coup.player} to ${coup.banker}` :
        `${upper(coup.winner)} wins ${Math.max(coup.player, coup.banker)} to ${Math.min(coup.player, coup.banker)}`;
    }
    return `Round ${settled.round}: paid ${money(settled.returned)}`;
  }

  // ---------------------------------------------------------------------------------------------- roads
  const ROAD = {banker: "#d32f2f", player: "#1e63d6", tie: "#2e8b57"};
  const LETTER = {banker: "B", player: "P", tie: "T"};

  function pairDots(e, cx, cy) {
    return (e.pairs || []).map((p) => p === "banker" ?
      `<circle cx="${cx - 3.3}" cy="${cy - 3.3}" r="1.3" fill="${ROAD.banker}" stroke="#fff" stroke-width=".4"/>` :
      `<circle cx="${cx + 3.3}" cy="${cy + 3.3}" r="1.3" fill="${ROAD.player}" stroke="#fff" stroke-width=".4"/>`).join("");
  }

  // Bead plate: every coup in order, six to a column, top to bottom, left to right.
  function beadPlate(entries, columns) {
    const first = Math.max(0, Math.ceil(entries.length / 6) - columns) * 6;
    const cells = entries.slice(first).map((e, i) => {
      const cx = Math.floor(i / 6) * 10 + 5, cy = (i % 6) * 10 + 5;
      return `<g data-round="${e.round}" data-winner="${e.winner}"><circle cx="${cx}" cy="${cy}" r="4.4" fill="${ROAD[e.winner]}"/>` +
        `<text x="${cx}" y="${cy + 1.9}" font-size="5.2" text-anchor="middle" fill="#fff">${LETTER[e.winner]}</text>` +
        `${pairDots(e, cx, cy)}</g>`;
    }).join("");
    return grid(columns, "bead-plate", cells);
  }

  // Big road: a column per streak of banker or player wins; a tie is a stroke on the coup before it.
  // A streak longer than the column turns right along the bottom (the dragon tail), as does one blocked
  // by an earlier tail.
  function bigRoadCells(entries) {
    const cells = [], taken = new Set();
    let streakCol = -1, col = 0, row = 0, last = null, leadingTies = 0, lastCell = null;
    for (const e of entries) {
      if (e.winner === "tie") {
        if (lastCell) lastCell.ties += 1; else leadingTies += 1;
        continue;
      }
      if (e.winner === last) {
        if (row + 1 < 6 && !taken.has(`${col},${row + 1}`)) row += 1; else col += 1;
      } else {
        streakCol += 1;
        col = streakCol;
        row = 0;
        while (taken.has(`${col},${row}`)) col += 1;
      }
      last = e.winner;
      lastCell = {col, row, winner: e.winner, ties: leadingTies, pairs: e.pairs || [], round: e.round};
      leadingTies = 0;
      taken.add(`${col},${row}`);
      cells.push(lastCell);
    }
    return cells;
  }

  function bigRoad(entries, columns) {
    const cells = bigRoadCells(entries);
    const width = cells.reduce((m, c) => Math.max(m, c.col + 1), 0);
    const shift = Math.max(0, width - columns);
    const svg = cells.filter((c) => c.col >= shift).map((c) => {
      const cx = (c.col - shift) * 10 + 5, cy = c.row * 10 + 5;
      const tie = c.ties ? `<line x1="${cx - 3.6}" y1="${cy + 3.6}" x2="${cx + 3.6}" y2="${cy - 3.6}" stroke="${ROAD.tie}" stroke-width="1.4"/>` +
        (c.ties > 1 ? `<text x="${cx}" y="${cy + 1.8}" font-size="5" text-anchor="middle" fill="${ROAD.tie}">${c.ties}</text>` : "") : "";
      return `<g data-round="${c.round}" data-winner="${c.winner}" data-col="${c.col}" data-row="${c.row}">` +
        `<circle cx="${cx}" cy="${cy}" r="3.9" fill="none" stroke="${ROAD[c.winner]}" stroke-width="1.5"/>${tie}${pairDots(c, cx, cy)}</g>`;
    }).join("");
    return grid(columns, "big-road", svg);
  }

  function grid(columns, cls, content, attrs = "") {
    const w = columns * 10;
    let lines = "";
    for (let x = 0; x <= w; x += 10) lines += `M${x} 0V60`;
    for (let y = 0; y <= 60; y += 10) lines += `M0 ${y}H${w}`;
    return `<svg class="road ${cls}"${attrs} viewBox="-0.5 -0.5 ${w + 1} 61" preserveAspectRatio="xMinYMin meet">` +
      `<rect x="0" y="0" width="${w}" height="60" fill="#fbfbf7"/><path d="${lines}" stroke="#c9c9c0" stroke-width=".4"/>${content}</svg>`;
  }

  // The derived roads, rule for rule as controller/screens/roads.py (its docstring gives the rules): a
  // road of offset k marks each big road mark from column k+1, row 2 on, red or blue.
  const DERIVED = [["big_eye_boy", 1, "Big eye boy"], ["small_road", 2, "Small road"], ["cockroach_pig", 3, "Cockroach pig"]];
  const MARK = {red: "#d32f2f", blue: "#1e63d6"};

  function derivedMark(lengths, col, row, k) {
    if (col < k || (col === k && row === 0)) return null;
    if (row === 0) return lengths[col - 1] === lengths[col - 1 - k] ? "red" : "blue";
    return lengths[col - k] === row ? "blue" : "red";
  }

  // winners ("banker", "player", "tie") -> {big_eye_boy: [marks], small_road: [...], cockroach_pig: [...]}
  function derivedRoads(winners) {
    const out = {}, lengths = [];
    for (const [name] of DERIVED) out[name] = [];
    let last = null;
    for (const w of winners) {
      if (w !== "banker" && w !== "player") continue;
      if (w === last) lengths[lengths.length - 1] += 1; else { lengths.push(1); last = w; }
      for (const [name, k] of DERIVED) {
        const m = derivedMark(lengths, lengths.length - 1, lengths[lengths.length - 1] - 1, k);
        if (m) out[name].push(m);
      }
    }
    return out;
  }

  // What the next banker or player win would add to each derived road: {banker: {name: mark|null}, player: ...}
  function askRoads(winners) {
    const out = {};
    for (const side of ["banker", "player"]) {
      const lengths = [];
      let last = null;
      for (const w of [...winners, side]) {
        if (w !== "banker" && w !== "player") continue;
        if (w === last) lengths[lengths.length - 1] += 1; else { lengths.push(1); last = w; }
      }
      out[side] = {};
      for (const [name, k] of DERIVED) out[side][name] = derivedMark(lengths, lengths.length - 1, lengths[lengths.length - 1] - 1, k);
    }
    return out;
  }

  // Marks laid out like the big road: a column per streak of one colour, six deep, a dragon tail turning right.
  function streakCells(marks) {
    const cells = [], taken = new Set();
    let streakCol = -1, col = 0, row = 0, last = null;
    for (const m of marks) {
      if (m === last) {
        if (row + 1 < 6 && !taken.has(`${col},${row + 1}`)) row += 1; else col += 1;
      } else {
        streakCol += 1; col = streakCol; row = 0;
        while (taken.has(`${col},${row}`)) col += 1;
      }
      last = m;
      taken.add(`${col},${row}`);
      cells.push({col, row, mark: m});
    }
    return cells;
  }

  // Each derived road in its own style: big eye boy hollow rings, small road dots, cockroach pig strokes.
  function markSvg(name, mark, cx, cy) {
    const c = MARK[mark];
    if (name === "big_eye_boy") return `<circle cx="${cx}" cy="${cy}" r="3.6" fill="none" stroke="${c}" stroke-width="1.6"/>`;
    if (name === "small_road") return `<circle cx="${cx}" cy="${cy}" r="3.8" fill="${c}"/>`;
    return `<line x1="${cx - 3.4}" y1="${cy + 3.4}" x2="${cx + 3.4}" y2="${cy - 3.4}" stroke="${c}" stroke-width="1.8"/>`;
  }

  function derivedRoad(name, marks, columns) {
    const cells = streakCells(marks);
    const width = cells.reduce((m, c) => Math.max(m, c.col + 1), 0);
    const shift = Math.max(0, width - columns);
    const svg = cells.filter((c) => c.col >= shift).map((c) =>
      `<g data-mark="${c.mark}">${markSvg(name, c.mark, (c.col - shift) * 10 + 5, c.row * 10 + 5)}</g>`).join("");
    return grid(columns, `derived ${name.replace(/_/g, "-")}`, svg, ` data-road="${name}" data-marks="${marks.join(",")}"`);
  }

  function ask(winners) {
    const a = askRoads(winners);
    return `<div class="ask">` + ["banker", "player"].map((side) =>
      `<span class="ask-side ${side}" data-ask="${side}">${side === "banker" ? "B" : "P"} ask ` +
      `<svg viewBox="0 0 32 10" class="ask-marks">` + DERIVED.map(([name], i) => a[side][name] ?
        `<g data-road="${name}" data-mark="${a[side][name]}">${markSvg(name, a[side][name], i * 11 + 5, 5)}</g>` : "").join("") +
      `</svg></span>`).join("") + "</div>";
  }

  function roads(state, beadColumns, bigColumns) {
    const entries = state.scoreboard || [];
    const count = (w) => entries.filter((e) => e.winner === w).length;
    const winners = entries.map((e) => e.winner);
    const d = derivedRoads(winners);
    return `<div class="road-counts"><span class="banker" data-count="${count("banker")}">Banker ${count("banker")}</span>` +
      `<span class="player" data-count="${count("player")}">Player ${count("player")}</span>` +
      `<span class="tie" data-count="${count("tie")}">Tie ${count("tie")}</span></div>` +
      beadPlate(entries, beadColumns) + bigRoad(entries, bigColumns) +
      `<div class="derived-roads">${DERIVED.map(([name]) => derivedRoad(name, d[name], Math.ceil(bigColumns / 2))).join("")}</div>` +
      ask(winners);
  }

  // ---------------------------------------------------------------------------------------------- rules

  function paytables(info) {
    const r = info.rules || {};
    const tables = info.game === "three-card-poker" ? [["Pair Plus", r.pair_plus], ["Ante Bonus", r.ante_bonus]] :
      r.paytable ? [[info.game === "let-it-ride" ? "Let It Ride pays" : "Pays", r.paytable]] : [];
    return tables.filter(([, t]) => t).map(([name, t]) =>
      `<table class="paytable" data-paytable="${esc(name)}"><caption>${esc(name)}</caption>` +
      Object.entries(t).map(([h, pays]) => `<tr data-hand="${esc(h)}"><td>${esc(upper(h))}</td><td>${ratio(pays)}</td></tr>`).join("") +
      "</table>").join("");
  }

  function limits(info) {
    const r = info.rules || {};
    const rows = r.limits ? Object.entries(r.limits) : r.limit ? [["each bet", r.limit]] : [];
    if (!rows.length) return "";
    return `<table class="limits"><caption>Limits</caption>` + rows.map(([box, l]) =>
      `<tr><td>${esc(upper(box))}</td><td>${money(l.min)}&ndash;${money(l.max)}</td></tr>`).join("") + "</table>";
  }

  function ruleNotes(info) {
    const r = info.rules || {};
    const notes = [];
    if (info.game === "blackjack") {
      notes.push(`Blackjack pays ${ratio(r.blackjack_pays)}`, r.dealer_hits_soft_17 ? "Dealer hits soft 17" : "Dealer stands on all 17s");
      if (r.insurance) notes.push("Insurance pays 2 to 1");
    } else if (info.game === "baccarat") {
      notes.push(`Tie pays ${ratio(r.tie_pays)}`, r.no_commission ? `Banker six pays ${ratio(r.banker_six_pays)}` :
        `Banker pays 1 to 1 less ${esc(r.commission_percent)}%`);
    } else if (info.game === "chemin-de-fer") {
      notes.push(`Banker's commission ${esc(r.commission_percent)}%`);
    }
    return notes.length ? `<ul class="rules">${notes.map((n) => `<li>${n}</li>`).join("")}</ul>` : "";
  }

  return {esc, money, words, upper, patch, morph, patchList, setData, toast, command, register, adapt, side, handsByPlace, hand,
    cardRow, fact, table, felt, banner, roads, bigRoadCells, derivedRoads, askRoads, paytables, limits, ruleNotes, layouts: LAYOUTS};
})();
