"use strict";
// A slot cabinet's screens. /cabinet/<id> (public view): the reels with the last game's window (turning
// while a spin is shown, on a cabinet with screen reels), the paylines and the line that paid, the title's
// paytable (the selected one of several), feature meters, credit / bet / win, the progressive and the
// status or lockup message. /cabinet/<id>/attendant (dealer view, behind the token): lockups with the
// buttons that clear them, doors, the meters and the game recall pages (the last 10 games).
// Symbols are our own SVG, drawn once per page into a sprite and used by reference.
// What a test compares against the view carries data-*: data-meter/data-value on a meter, data-symbol on a
// reel cell, data-game on the reels once they rest on that game, data-row on a paytable row.
const Slots = (() => {
  const esc = Felt.esc;
  const COLOURS = {red: "#e53935", blue: "#1e88e5", white: "#f4f4f4", purple: "#8e24aa", yellow: "#fdd835",
    green: "#43a047", pink: "#ec407a", gold: "#f2c94c"};
  const PALETTE = ["#5e35b1", "#00897b", "#c62828", "#ef6c00", "#283593", "#6d4c41", "#2e7d32", "#ad1457", "#00838f"];
  const WORDS = {single: 1, double: 2, triple: 3};

  function colourOf(code, name) {
    const word = name.toLowerCase().split(/\s+/).find((w) => COLOURS[w]);
    if (word) return COLOURS[word];
    let h = 0;
    for (const c of code + name) h = (h * 31 + c.charCodeAt(0)) >>> 0;
    return PALETTE[h % PALETTE.length];
  }

  const TEXT = 'font-family="DejaVu Sans, Liberation Sans, Arial, sans-serif" font-weight="700" text-anchor="middle"';
  const star = (cx, cy, r) => {
    const pts = [];
    for (let i = 0; i < 10; i++) {
      const a = Math.PI / 5 * i - Math.PI / 2, rr = i % 2 ? r * 0.45 : r;
      pts.push(`${(cx + rr * Math.cos(a)).toFixed(1)},${(cy + rr * Math.sin(a)).toFixed(1)}`);
    }
    return pts.join(" ");
  };

  // The drawing of one symbol in a 100x100 box, from its name: bars, stripes, sevens, cherries, diamonds,
  // stars and bolts are drawn; any other symbol is a coloured medallion carrying its name.
  function art(code, name) {
    const n = name.toLowerCase(), words = n.split(/\s+/);
    const count = WORDS[words[0]] || 1;
    if (/ bar$/.test(n) || / stripe$/.test(n)) {
      const stripe = / stripe$/.test(n);
      const h = 22, gap = 6, top = 50 - (count * h + (count - 1) * gap) / 2;
      let out = "";
      for (let i = 0; i < count; i++) {
        const y = top + i * (h + gap);
        out += stripe
          ? `<rect x="8" y="${y}" width="84" height="${h}" rx="4" fill="${["#e53935", "#f4f4f4", "#1e88e5"][i]}" stroke="#222" stroke-width="2"/>`
          : `<rect x="8" y="${y}" width="84" height="${h}" rx="5" fill="#111" stroke="#f2c94c" stroke-width="3"/>` +
            `<text x="50" y="${y + h - 5}" font-size="18" fill="#f2c94c" ${TEXT}>BAR</text>`;
      }
      return out;
    }
    if (/(^|\s)7$/.test(n)) {
      const fill = colourOf(code, name === "Single 7" || name === "Double 7" || name === "Triple 7" ? "red" : name);
      const sevens = /^(single|double|triple) 7$/.test(n) ? count : 1;
      const size = [0, 88, 62, 46][sevens];
      let out = "";
      for (let i = 0; i < sevens; i++) {
        const x = 50 + (i - (sevens - 1) / 2) * size * 0.62;
        out += `<text x="${x.toFixed(1)}" y="${50 + size * 0.36}" font-size="${size}" fill="${fill}" stroke="#111" ` +
          `stroke-width="3" paint-order="stroke" ${TEXT}>7</text>`;
      }
      return out;
    }
    if (n === "cherry") {
      return '<path d="M34 62 Q45 30 66 14 M66 62 Q62 34 66 14" stroke="#2e7d32" stroke-width="5" fill="none"/>' +
        '<path d="M66 14 Q80 12 86 22 Q74 26 66 14" fill="#43a047"/>' +
        '<circle cx="32" cy="68" r="18" fill="#d50000" stroke="#7f0000" stroke-width="3"/>' +
        '<circle cx="66" cy="68" r="18" fill="#d50000" stroke="#7f0000" stroke-width="3"/>' +
        '<circle cx="26" cy="62" r="5" fill="#ff8a80"/><circle cx="60" cy="62" r="5" fill="#ff8a80"/>';
    }
    if (/diamond$/.test(n)) {
      const one = (x, s) => `<polygon points="${x},${50 - 38 * s} ${x + 34 * s},${50 - 10 * s} ${x},${50 + 40 * s} ${x - 34 * s},${50 - 10 * s}" ` +
        `fill="#4fc3f7" stroke="#01579b" stroke-width="3"/><polyline points="${x - 34 * s},${50 - 10 * s} ${x + 34 * s},${50 - 10 * s}" stroke="#01579b" stroke-width="2"/>`;
      return words[0] === "double" ? one(33, 0.75) + one(67, 0.75) : one(50, 1);
    }
    if (n === "star") return `<polygon points="${star(50, 52, 44)}" fill="#fdd835" stroke="#8d6e00" stroke-width="3"/>`;
    if (/bolt|light speed/.test(n)) {
      return '<polygon points="58,4 20,56 46,56 36,96 82,38 54,38 68,4" fill="#ffeb3b" stroke="#f57f17" stroke-width="3"/>';
    }
    // A medallion with the symbol's name (a wild and a multiplier are gold).
    const wildish = n === "wild" || /^\dx$/.test(n);
    const fill = wildish ? "#f2c94c" : colourOf(code, name);
    const ink = ["#f4f4f4", "#fdd835", "#f2c94c"].includes(fill) ? "#1b1b1b" : "#fff";
    const lines = nameLines(name);
    const longest = Math.max(...lines.map((l) => l.length));
    const size = Math.min(32, Math.floor(78 / (Math.max(longest, 2) * 0.7)));   // bold capitals: ~0.7 em wide
    const y0 = 50 + size * 0.35 - (lines.length - 1) * size * 0.55;
    // a long word (FIRECRACKER) is wider than 0.7 em a letter: squeezed to the ring's inside, never over it
    const squeeze = (l) => l.length * size * 0.8 > 76 ? ' textLength="76" lengthAdjust="spacingAndGlyphs"' : "";
    return `<circle cx="50" cy="50" r="46" fill="${fill}" stroke="#111" stroke-width="3"/>` +
      `<circle cx="50" cy="50" r="39" fill="none" stroke="${ink}" stroke-opacity=".35" stroke-width="2"/>` +
      lines.map((l, i) => `<text x="50" y="${(y0 + i * size * 1.1).toFixed(1)}" font-size="${size}" fill="${ink}"${squeeze(l)} ${TEXT}>` +
        `${esc(l.toUpperCase())}</text>`).join("");
  }

  // One hidden SVG holding every symbol of the title; the reels and the paytable <use> them.
  function sprite(info) {
    if (document.getElementById("slot-sprite")) return;
    const defs = Object.entries(info.symbols).map(([code, s]) =>
      `<symbol id="sym-${esc(code)}" viewBox="0 0 100 100">${s.blank ? "" : art(code, s.name)}</symbol>`).join("");
    const holder = document.createElement("div");
    holder.innerHTML = `<svg id="slot-sprite" width="0" height="0" style="position:absolute" aria-hidden="true">${defs}</svg>`;
    document.body.appendChild(holder.firstChild);
  }

  const icon = (code, cls) => `<svg class="${cls || "sym"}" viewBox="0 0 100 100" data-symbol="${esc(code)}"><use href="#sym-${esc(code)}"/></svg>`;
  const cell = (code, cls) => `<div class="cell${cls ? " " + cls : ""}" data-symbol="${esc(code)}">${icon(code)}</div>`;

  // The reels: 3 columns of 3 rows (window[row][reel]), and over them the paylines played.
  function reels(info, window, hits) {
    let html = "";
    for (let r = 0; r < 3; r++) {
      html += `<div class="reel" data-reel="${r}"><div class="strip">` +
        [0, 1, 2].map((row) => cell(window[row][r], hits.has(`${row},${r}`) ? "hit" : "")).join("") + "</div></div>";
    }
    return html;
  }

  function paylines(info, played, paid) {
    return info.paylines.map((rows, i) => {
      const line = i + 1;
      const cls = paid.has(line) ? "payline paid" : line <= played ? "payline" : "payline off";
      return `<polyline class="${cls}" data-line="${line}" points="${rows.map((row, r) => `${r * 100 + 50},${row * 100 + 50}`).join(" ")}"/>`;
    }).join("");
  }

  // A symbol's name in one or two lines (the medallions' and the paytable's chips' words).
  function nameLines(name) {
    const split = name.split(/\s+/);
    return name.length > 6 && split.length > 1 ? [split.slice(0, Math.ceil(split.length / 2)).join(" "),
      split.slice(Math.ceil(split.length / 2)).join(" ")] : [name];
  }

  // A symbol in the paytable. A picture (a seven, a cherry, a stripe...) is drawn as on the reels; a symbol that is
  // a word (a medallion with its name, a bar) is a chip of page text instead: drawn inside a paytable-sized
  // picture its name would be a few pixels high, unreadable from where a player stands.
  function paySymbol(code) {
    const s = Slots.info.symbols[code];
    if (s.blank) return '<span class="any">BLANK</span>';
    const n = s.name.toLowerCase();
    if (/ bar$/.test(n)) {
      return `<span class="bar-sym" data-symbol="${esc(code)}">${"<span>BAR</span>".repeat(WORDS[n.split(/\s+/)[0]] || 1)}</span>`;
    }
    if (/ stripe$/.test(n) || /(^|\s)7$/.test(n) || n === "cherry" || /diamond$/.test(n) || n === "star" ||
        /bolt|light speed/.test(n)) return icon(code);
    const fill = n === "wild" || /^\dx$/.test(n) ? "#f2c94c" : colourOf(code, s.name);
    const ink = ["#f4f4f4", "#fdd835", "#f2c94c"].includes(fill) ? "#1b1b1b" : "#fff";
    return `<span class="chip-sym" data-symbol="${esc(code)}" style="--fill:${fill};--ink:${ink}">` +
      nameLines(s.name).map((l) => esc(l.toUpperCase())).join("<br>") + "</span>";
  }

  // Symbol codes ("7R", "B1") as a player reads them: a run of one symbol said once with its count ("three Red 7"),
  // others by name; any other word of the text kept. (Feature rules and recall lines are written with codes.)
  const COUNT = {2: "two", 3: "three", 4: "four", 5: "five"};
  function symbolWords(text) {
    const sym = Slots.info.symbols;
    return String(text).replace(/\b[0-9A-Z]{2}\b(?:[ ,]+[0-9A-Z]{2}\b)*/g, (run) => {
      const codes = run.split(/[ ,]+/);
      if (!codes.every((c) => sym[c])) return run.replace(/\b[0-9A-Z]{2}\b/g, (c) => sym[c] ? sym[c].name : c);
      const names = codes.map((c) => sym[c].name);
      return names.every((n) => n === names[0]) && COUNT[names.length] ? `${COUNT[names.length]} ${names[0]}` : names.join(", ");
    });
  }

  // A paytable row in words: "three Single Bar", "any bar, any bar, Cherry", "two Gold Coin any position".
  function rowWords(row) {
    if (!row) return "";
    const cell = (c) => c.any ? "any" : c.symbols.length === 1 ? Slots.info.symbols[c.symbols[0]].name
      : shareWord(c.symbols) ? `any ${shareWord(c.symbols).toLowerCase()}` : c.symbols.map((s) => Slots.info.symbols[s].name).join("/");
    if (!row.cells) return `${COUNT[row.count] || row.count} ${cell(row.anywhere)} any position`;
    const words = row.cells.map(cell);
    return words.every((w) => w === words[0]) && COUNT[words.length] ? `${COUNT[words.length]} ${words[0]}` : words.join(", ");
  }

  const wordsOf = (code) => Slots.info.symbols[code].name.split(/\s+/);
  // "any bar", "any cat": the symbols' names end in one word
  function shareWord(codes) {
    const last = wordsOf(codes[0]).slice(-1)[0];
    return codes.every((s) => wordsOf(s).slice(-1)[0] === last) ? last : null;
  }

  // A row of any three of some symbols, mixed: said once, not three stacked lists.
  function anyMix(codes) {
    return `<span class="any mix">ANY MIX OF<br>${codes.map((s) => esc(Slots.info.symbols[s].name.toUpperCase())).join(", ")}</span>`;
  }

  function payCell(c) {
    if (c.any) return '<span class="any">ANY</span>';
    if (c.symbols.length === 1) return paySymbol(c.symbols[0]);
    // "any bar", "any cat": the word the symbols' names share, else the symbols' names one under another
    const last = shareWord(c.symbols);
    if (last) return `<span class="any">ANY<br>${esc(last.toUpperCase())}</span>`;
    return `<span class="any group">${c.symbols.map((s) => esc(Slots.info.symbols[s].name.toUpperCase())).join("<br>")}</span>`;
  }

  // The paytable: a row per combination, a column per coin, the bet's column and the paid row marked.
  function paytable(info, index, coins, paidRows) {
    const table = info.paytables[index];
    const cols = info.max_coins;
    const head = cols > 1 ? `<tr><th class="coins">coins</th>${Array.from({length: cols}, (_, k) => `<th class="${k + 1 === coins ? "bet-col" : ""}">${k + 1}</th>`).join("")}</tr>` : "";
    const rows = table.rows.map((row, i) => {
      const mixed = row.cells && row.cells.every((c) => !c.any && c.symbols.length > 1 && c.symbols.join() === row.cells[0].symbols.join());
      const combo = mixed && !shareWord(row.cells[0].symbols) ? anyMix(row.cells[0].symbols)
        : row.cells ? row.cells.map(payCell).join("")
        : `<span class="anywhere">${Array.from({length: row.count}, () => payCell(row.anywhere)).join("")}<em>any position</em></span>`;
      return `<tr data-row="${i}" class="${paidRows.has(i) ? "paid" : ""}"><td class="combo">${combo}</td>` +
        row.pays.map((p, k) => `<td class="${k + 1 === coins || cols === 1 ? "bet-col" : ""}">${Felt.money(p)}</td>`).join("") + "</tr>";
    }).join("");
    const tabs = info.paytables.length > 1 ? '<div class="paytabs">' + info.paytables.map((p, i) =>
      `<span class="paytab${i === index ? " selected" : ""}" data-paytable="${esc(p.name)}" style="--tab:${esc(colourOf("", p.color || "gold"))}">` +
      `${esc(p.name)}</span>`).join("") + "</div>" : "";
    return tabs + `<table class="slot-paytable" data-paytable="${esc(table.name)}"><caption>${esc(table.name)}` +
      (table.color ? ` <small>(${esc(table.color)})</small>` : "") + `</caption>${head}${rows}</table>`;
  }

  const METER_NAMES = {piggy_bank: "Piggy bank", safe_clicks: "Safe", snowman: "Snowman", snowman_bonus: "Snowman bonus",
    loss_meter: "Loss meter", free_winning_spins: "Free winning spins", respins_total: "Re-spins", light_speed: "Light speed"};

  // The title's feature meters, free spins and a waiting pick, as large tiles.
  function features(state) {
    const tiles = Object.entries(state.feature_meters || {}).map(([k, v]) =>
      [k, METER_NAMES[k] || Felt.upper(k), k === "light_speed" ? `${v}x` : Felt.money(v)]);
    if (state.free_spins) tiles.push(["free_spins", "Free spins", String(state.free_spins)]);
    if (state.pick) tiles.push(["pick", "Pick", state.pick.choices.map(Felt.upper).join(" or ")]);
    return tiles.map(([k, label, v]) => `<div class="feature" data-feature="${esc(k)}"><span class="label">${esc(label)}</span>` +
      `<span class="value">${esc(v)}</span></div>`).join("");
  }

  function meter(name, label, value, shown) {
    return `<div class="meter" data-meter="${name}" data-value="${value}"><span class="label">${label}</span>` +
      `<span class="value">${shown === undefined ? Felt.money(value) : shown}</span></div>`;
  }

  const dollars = (cents) => "$" + (cents / 100).toLocaleString("en-US", {minimumFractionDigits: 2, maximumFractionDigits: 2});

  // The progressive: the cabinet's own pool (credits), or the link controller's (cents, `<link-id>/public`).
  function progressive(state, info, sides) {
    const p = state.progressive || {};
    if (p.mode === "standalone" && p.pool !== null) {
      return `<span class="label">Progressive</span><span class="value" data-cents="${p.pool * info.denomination}">` +
        `${dollars(p.pool * info.denomination)}</span>`;
    }
    if (p.mode === "link") {
      const link = sides.link;
      if (!p.link_up || !link) return '<span class="label">Progressive</span><span class="value down">link down</span>';
      return `<span class="label">Progressive</span><span class="value" data-cents="${link.pool}">${dollars(link.pool)}</span>`;
    }
    return "";
  }

  // The lines that paid in the last game: window cells to light and paytable rows to mark.
  function paid(state) {
    const cells = new Set(), lines = new Set(), rows = new Set();
    const last = state.reels;
    if (!last) return {cells, lines, rows};
    for (const w of last.line_wins || []) {
      lines.add(w.line);
      rows.add(w.row);
      const rowsOf = Slots.info.paylines[w.line - 1];
      rowsOf.forEach((row, r) => {
        const sym = last.window[row][r];
        if (!Slots.info.symbols[sym] || !Slots.info.symbols[sym].blank) cells.add(`${row},${r}`);
      });
    }
    return {cells, lines, rows, paytable: last.paytable};
  }

  return {esc, art, sprite, icon, cell, reels, paylines, paytable, features, meter, dollars, progressive, paid, symbolWords,
    rowWords, info: null};
})();

(() => {
  const cfg = Screen.cfg;
  const app = document.getElementById("app");
  const els = {};
  const attendant = cfg.page === "attendant";
  let shownGame = null;      // the game whose window the reels show at rest
  let turning = null;        // the game the reels are turning for
  let recallGame = null;     // the attendant's recall page: the game shown (null: the latest)

  function build(info) {
    Slots.info = info;
    Slots.sprite(info);
    const machine = '<div class="machine"><div class="reels"></div><svg class="paylines" viewBox="0 0 300 300" ' +
      'preserveAspectRatio="none"></svg><div class="lockup" hidden></div></div>';
    const meters = '<div class="cab-meters"></div>';
    app.innerHTML = attendant
      ? '<header class="bar"><span class="title"></span><span class="banner"></span><span class="round"></span></header>' +
        '<div class="dealer-layout"><div class="main"><section class="alerts"></section><section class="doors"></section>' +
        `<div class="att-machine">${machine}${meters}</div><section class="tito"></section><section class="recall"></section></div>` +
        '<aside class="side"><section class="meters"></section></aside></div><div class="toast" hidden></div>'
      : '<header class="bar"><span class="title"></span><span class="banner"></span><span class="round"></span></header>' +
        '<div class="cab-layout"><div class="cab-main"><div class="progressive"></div>' + machine +
        `<div class="features"></div>${meters}</div><aside class="side"></aside></div>`;
    for (const name of ["title", "banner", "round", "reels", "paylines", "lockup", "progressive", "features",
      "cab-meters", "side", "alerts", "doors", "tito", "recall", "meters", "toast"]) els[name] = app.querySelector("." + name);
    app.addEventListener("click", click);
  }

  // Screen reels turn for the cabinet's spin time when a new game arrives (never on a first snapshot: a
  // screen that joins late shows the window at once). Mechanical reels turn on the cabinet itself.
  function turn(state, info) {
    const last = state.reels;
    const game = last ? last.game : 0;
    if (shownGame === null || game <= shownGame || info.reels !== "screen" || !(info.spin_seconds > 0) || attendant) {
      shownGame = game;
      turning = null;
      return;
    }
    if (turning === game) return;
    turning = game;
    document.body.dataset.turns = String(Number(document.body.dataset.turns || 0) + 1);
    const ms = info.spin_seconds * 1000;
    const reelsEl = els.reels;
    reelsEl.innerHTML = [0, 1, 2].map((r) => {
      const strip = info.strips[r], size = strip.length, phys = last.physical[r];
      const filler = Array.from({length: 12 + 4 * r}, (_, k) => strip[((phys - 1 + 3 + k) % size + size) % size]);
      return `<div class="reel" data-reel="${r}"><div class="strip">` +
        [0, 1, 2].map((row) => Slots.cell(last.window[row][r])).join("") + filler.map((c) => Slots.cell(c)).join("") +
        "</div></div>";
    }).join("");
    reelsEl._html = null;
    els.paylines.classList.add("hidden");
    const runs = [...reelsEl.querySelectorAll(".strip")].map((strip, r) => {
      const n = strip.children.length;
      return strip.animate([{transform: `translateY(${(-100 * (n - 3)) / n}%)`}, {transform: "translateY(0)"}],
        {duration: ms * (0.55 + 0.225 * r), easing: "cubic-bezier(.2,.7,.3,1)"}).finished;
    });
    Promise.all(runs).catch(() => null).then(() => {
      if (turning !== game) return;
      turning = null;
      shownGame = game;
      els.paylines.classList.remove("hidden");
      draw();
    });
  }

  // Before the first game: each reel at the start of its strip, the third turned on until the centre line holds no
  // three of a kind (the strips often start alike, and a cabinet showing a jackpot line it never paid misleads).
  function idleWindow(info) {
    const at = (r, k, row) => info.strips[r][((k + row - 1) % info.strips[r].length + info.strips[r].length) % info.strips[r].length];
    let k = 0;
    while (k < info.strips[2].length - 1 && at(0, 0, 1) === at(1, 0, 1) && at(1, 0, 1) === at(2, k, 1)) k++;
    return [0, 1, 2].map((row) => [at(0, 0, row), at(1, 0, row), at(2, k, row)]);
  }

  function machine(state, info) {
    const last = state.reels;
    const hits = Slots.paid(state);
    const atRest = turning === null;
    if (atRest) {
      const window = last ? last.window : idleWindow(info);
      Felt.patch(els.reels, Slots.reels(info, window, hits.cells));
      Felt.setData(els.reels, "game", String(last ? last.game : 0));
    }
    const played = last ? (state.bet || {}).lines || 1 : 1;
    Felt.patch(els.paylines, Slots.paylines(info, played, atRest ? hits.lines : new Set()));
    const locked = ["locked", "door_open"].includes(state.status);
    els.lockup.hidden = !locked;
    Felt.patch(els.lockup, locked ? `<span>${Slots.esc(state.message || "call an attendant")}</span>` : "");
    const held = !atRest;   // the win shows when the reels rest, and the credit meter counts it in then
    const win = held ? 0 : state.win;
    const credits = held && state.status !== "locked" ? state.credits - state.win : state.credits;
    Felt.patch(els["cab-meters"], Slots.meter("credits", "Credits", credits) + Slots.meter("bet", "Bet", state.bet_credits) +
      Slots.meter("win", "Win", win, win ? undefined : "&nbsp;") +
      `<div class="denom">${Slots.dollars(info.denomination)} a credit</div>`);
    return hits;
  }

  function banner(state) {
    if (state.message) return state.message;
    return {idle: "Insert coins", play: "Press spin", free_spins: "Free spins"}[state.status] || Felt.words(state.status);
  }

  function header(state, info) {
    Felt.patch(els.title, `${Slots.esc(info.title)} &middot; ${Slots.esc(state.cabinet)}`);
    Felt.patch(els.banner, Slots.esc(banner(state)));
    Felt.patch(els.round, state.game ? `Game ${state.game}` : "");
    Felt.setData(document.body, "status", state.status);
  }

  function renderPlayer(state, info) {
    header(state, info);
    turn(state, info);
    const hits = machine(state, info);
    const idx = (state.paytable || {}).index || 0;
    const rows = turning === null && hits.paytable === idx ? hits.rows : new Set();
    Felt.patch(els.side, Slots.paytable(info, idx, (state.bet || {}).coins || 1, rows) +
      info.features.map((f) => `<p class="feature-rule">${Slots.esc(Felt.upper(Slots.symbolWords(f.text)))}</p>`).join(""));
    Felt.patch(els.features, Slots.features(state));
    Felt.patch(els.progressive, Slots.progressive(state, info, Screen.sides));
  }

  // ------------------------------------------------------------------------------------------ attendant

  function lockups(state, info) {
    const list = (state.dealer_only || {}).lockups || [];
    const can = (info.commands || []).includes("clear");
    return list.map((x) => `<div class="alert" data-lockup="${x.id}" data-kind="${Slots.esc(x.kind)}">` +
      `<div class="alert-kind">${Slots.esc(Felt.words(x.kind).toUpperCase())}</div>` +
      `<div class="alert-text">${Slots.esc(x.text)}${x.credits ? ` <b>(${Slots.dollars(x.credits * info.denomination)})</b>` : ""}` +
      `<br><small>cleared by ${Slots.esc(x.clear_by.join(" or "))}</small></div>` +
      '<div class="alert-actions">' + (can ? x.options.map((o) =>
        `<button data-command="clear" data-args="${Slots.esc(JSON.stringify({lockup: x.id, action: o}))}">${Slots.esc(Felt.upper(o))}</button>`).join("")
        : "<em>read-only screen</em>") + "</div></div>").join("");
  }

  function meterTable(state) {
    const d = state.dealer_only || {};
    const m = d.meters;
    if (!m) return "";
    const tito = m.notes_credits || m.tickets_in_credits || m.tickets_out_credits
      ? [["Notes in", m.notes_credits], ["Tickets in", m.tickets_in_credits], ["Tickets out", m.tickets_out_credits]] : [];
    const rows = [["Coin in", m.coin_in], ["Coin out", m.coin_out], ["Credits in", m.credits_in], ["Credits out", m.credits_out], ...tito,
      ["Drop", m.drop], ["Credits added", m.credits_added], ["Hopper out", m.hopper_out], ["Jackpots hand paid", m.jackpot_handpaid],
      ["Cancelled credits", m.cancelled_handpaid], ["Games played", m.games_played], ["Games won", m.games_won],
      ["Games lost", m.games_lost], ["Free games", m.free_games], ["Power resets", m.power_resets],
      ["Progressive hits", m.progressive_hits], ["Progressive won", m.progressive_won]];
    const locks = Object.entries(m.lockups || {}), doors = Object.entries(m.door_opens || {});
    const feats = Object.entries(m.features || {});
    const bal = d.balance || {};
    return "<h2>Meters</h2><table class=\"cab-meter-table\">" +
      rows.map(([k, v]) => `<tr><td>${k}</td><td data-meter="${Slots.esc(k)}">${Felt.money(v || 0)}</td></tr>`).join("") + "</table>" +
      (feats.length ? "<h2>Features</h2><table>" + feats.map(([k, v]) => `<tr><td>${Slots.esc(Felt.upper(k))}</td><td>${v.awards} &middot; ${Felt.money(v.credits)} cr</td></tr>`).join("") + "</table>" : "") +
      (locks.length || doors.length ? "<h2>Events</h2><table>" + locks.map(([k, v]) => `<tr><td>${Slots.esc(Felt.upper(k))}</td><td>${v}</td></tr>`).join("") +
        doors.map(([k, v]) => `<tr><td>${Slots.esc(Felt.upper(k))} door opened</td><td>${v}</td></tr>`).join("") + "</table>" : "") +
      (bal.credits_and_owed !== undefined ? `<p class="balance ${bal.credits_and_owed === bal.in_out_bets_wins ? "" : "bad"}">Balance: ` +
        `${Felt.money(bal.credits_and_owed)} = ${Felt.money(bal.in_out_bets_wins)}</p>` : "");
  }

  function mini(window) {
    return '<div class="mini-window">' + [0, 1, 2].map((row) => [0, 1, 2].map((r) => Slots.icon(window[row][r], "sym")).join("")).join("") + "</div>";
  }

  // A name for each recall entry that stays put as entries come and go: "game 12", "paytable after 12 #1".
  function recallKeys(list) {
    const seen = {};
    return list.map((e) => {
      if (e.kind === "spin") return `game ${e.game}`;
      const base = `${e.kind} after ${e.after_game}`;
      seen[base] = (seen[base] || 0) + 1;
      return `${base} #${seen[base]}`;
    });
  }

  // One recall page: everything the game did, for a dispute at the cabinet.
  function recallPage(state, info) {
    const list = (state.dealer_only || {}).recall || [];
    if (!list.length) return "<h2>Game recall</h2><p>No game played yet.</p>";
    const keys = recallKeys(list);
    const i = keys.includes(recallGame) ? keys.indexOf(recallGame) : list.length - 1;
    const e = list[i];
    const label = (x) => x.kind === "spin" ? String(x.game) : x.kind === "cash_in" ? "Cash In!" : "Paytable";
    const nav = '<div class="recall-nav">' + list.map((x, k) => `<button class="${k === i ? "selected" : ""}" ` +
      `data-recall="${Slots.esc(keys[k])}">${label(x)}</button>`).join("") + "</div>";
    if (e.kind !== "spin") {
      const what = e.kind === "cash_in" ? `Cash In! (${e.free_spins} free spins)` : `Next paytable: ${Slots.esc(info.paytables[e.paytable].name)}`;
      const rows = [["After game", String(e.after_game)], ["What", what],
        ...(e.meters || []).map((m) => ["Meter", `${Slots.esc(Felt.upper(m.meter))} ${m.before} &rarr; ${m.after} (${Slots.esc(m.why)})`])];
      return `<h2>Game recall</h2>${nav}<div class="recall-page" data-recall="${Slots.esc(keys[i])}"><table>` +
        rows.map(([k, v]) => `<tr><td>${k}</td><td>${v}</td></tr>`).join("") + "</table></div>";
    }
    const rows = [];
    if (e.window) rows.push(["Stops", `${e.stops.join(" ")} (physical ${e.physical.join(" ")})`]);
    if (e.bet) rows.push(["Bet", `${e.bet.coins} coin(s) &times; ${e.bet.lines} line(s) = ${e.cost} credits${e.free_spin ? " (free spin)" : ""}`]);
    if (e.paytable !== undefined && info.paytables.length > 1) rows.push(["Paytable", Slots.esc(info.paytables[e.paytable].name)]);
    // the symbols on the line by name, and the paytable row they made (the record keeps the codes: "B1 B1 B1")
    const table = info.paytables[e.paytable || 0] || info.paytables[0];
    const named = (c) => info.symbols[c] ? info.symbols[c].name : c;
    for (const w of e.line_wins || []) rows.push([`Line ${w.line}`, `${Slots.esc(w.symbols.map(named).join(", "))}: ` +
      `${Slots.esc(Slots.rowWords(table.rows[w.row]) || Slots.symbolWords(w.combo))} pays ${Felt.money(w.credits)}` +
      (w.multiplier > 1 ? ` (${w.multiplier}x wild)` : "")]);
    for (const a of e.awards || []) rows.push(["Award", `${Slots.esc(Felt.upper(a.feature))}: ${Slots.esc(Slots.symbolWords(a.what))} ${Felt.money(a.credits)}`]);
    for (const m of e.meters || []) rows.push(["Meter", `${Slots.esc(Felt.upper(m.meter))} ${m.before} &rarr; ${m.after} (${Slots.esc(m.why)})`]);
    if (e.pick) rows.push(["Pick", `${Slots.esc(e.pick.choice)}` + (e.pick.awards || []).map((a) => `: ${Slots.esc(Slots.symbolWords(a.what))} ${Felt.money(a.credits)}`).join("")]);
    if (e.progressive && (e.progressive.contribution || e.progressive.hit)) {
      rows.push(["Progressive", `contributed ${e.progressive.contribution}${e.progressive.hit ? `, HIT: won ${Felt.money(e.progressive.won)}` : ""}`]);
    }
    rows.push(["Won", `${Felt.money(e.won || 0)}${e.jackpot ? ` (jackpot ${Felt.money(e.jackpot)}, hand paid)` : ""}`]);
    for (const m of e.money || []) rows.push([m.kind === "note" ? "Note in" : m.kind === "ticket_in" ? "Ticket in" : "Ticket out",
      `${Slots.dollars(m.cents)}${m.validation ? ` ${Slots.esc(m.validation)}` : ""} (before the game)`]);
    rows.push(["Credits", `${Felt.money(e.credits_before)} &rarr; ${Felt.money(e.credits_after)}`]);
    if (!e.complete) rows.push(["Pending", "the game is not complete"]);
    return `<h2>Game recall</h2>${nav}<div class="recall-page" data-recall="${Slots.esc(keys[i])}" data-game="${e.game}">` +
      (e.window ? mini(e.window) : "") + "<table>" + rows.map(([k, v]) => `<tr><td>${k}</td><td>${v}</td></tr>`).join("") + "</table></div>";
  }

  // Notes and tickets: the validator's and printer's status, what is in escrow or printing, the last few notes and
  // tickets; with a simulated validator, buttons that put a note (or the last ticket printed) into it.
  function moneyItem(m) {
    const what = m.kind === "note" ? "Note in" : m.kind === "ticket_in" ? "Ticket in" : `Ticket out #${m.number}`;
    return `<tr data-money="${Slots.esc(m.kind)}"><td>${what}</td><td>${Slots.dollars(m.cents)}` +
      `${m.restricted ? " (restricted)" : ""}</td><td>${m.validation ? Slots.esc(m.validation) : ""}</td></tr>`;
  }

  function tito(state, info) {
    const d = state.dealer_only || {};
    const money = d.money || [];
    if (!info.validator && !info.printer && !money.length) return "";
    const dev = d.devices || {};
    const status = (name) => {
      const x = dev[name] || {status: "ok", faults: [], warnings: []};
      const said = [...x.faults, ...x.warnings].map((c) => Felt.words(c)).join(", ");
      return `<span class="device device-${x.status}" data-device="${name}">${Felt.upper(name)}: ${Slots.esc(said || "ok")}</span>`;
    };
    const e = d.escrow, t = d.ticket_out;
    const busy = (e ? `<span>${e.item === "note" ? `Note ${Slots.dollars(e.cents)}` : `Ticket ${Slots.esc(e.validation)}`} ${Slots.esc(Felt.words(e.stage))}</span>` : "") +
      (t ? `<span>Ticket #${t.number} ${Slots.dollars(t.cents)} ${t.validation ? "printing" : "waiting for its number"}</span>` : "");
    const can = (info.commands || []).includes("insert_note") && info.validator === "sim";
    const last = [...money].reverse().find((m) => m.kind === "ticket_out");
    const buttons = can ? '<span class="tito-sim">' + [500, 2000].map((c) =>
      `<button data-command="insert_note" data-args="${Slots.esc(JSON.stringify({cents: c}))}">Note ${Slots.dollars(c)}</button>`).join("") +
      (last ? `<button data-command="insert_ticket" data-args="${Slots.esc(JSON.stringify({barcode: last.validation}))}">Ticket #${last.number}</button>` : "") +
      "</span>" : "";
    return `<div class="tito-bar">${info.validator ? status("validator") : ""}${info.printer ? status("printer") : ""}${busy}${buttons}</div>` +
      (money.length ? `<table class="tito-money">${money.slice(-3).reverse().map(moneyItem).join("")}</table>` : "");
  }

  function renderAttendant(state, info) {
    header(state, info);
    machine(state, info);
    Felt.patch(els.tito, tito(state, info));
    Felt.patch(els.alerts, lockups(state, info));
    const open = (state.dealer_only || {}).doors_open || [];
    Felt.patch(els.doors, open.length ? `<div class="door-open">Door open: ${Slots.esc(open.join(", "))}</div>` : "");
    Felt.patch(els.meters, meterTable(state));
    Felt.patch(els.recall, recallPage(state, info));
  }

  async function click(ev) {
    const page = ev.target.closest("button[data-recall]");
    if (page) { recallGame = page.dataset.recall; draw(); return; }
    const btn = ev.target.closest("button[data-command]");
    if (!btn || btn.disabled || !attendant) return;
    await Felt.command(btn, els.toast);
  }

  function draw() { if (Screen.state) render(Screen.state, Screen.info); }

  function render(state, info) {
    if (!els.reels) build(info);
    (attendant ? renderAttendant : renderPlayer)(state, info);
  }

  Screen.start(render);
})();
