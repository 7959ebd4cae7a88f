"use strict";
// The pit page (/pit/<id>): for each table of the pit its shift's figures and win over the shift (a line), the
// gaming day's paperwork, the rated players, and the advantage-play alerts with their evidence; bet against the
// true count (a scatter) for every rated or alerted spot. Fed by the bridge's pit WebSocket (/pit/<id>/ws) with the
// tables' `pit` answers; it sends nothing. Lists that do not fit are cut to what fits, with how many more.
(() => {
  const cfg = JSON.parse(document.body.dataset.screen);
  const app = document.getElementById("app");
  const status = document.getElementById("status");
  const esc = Felt.esc, money = Felt.money;
  const stats = {messages: 0, cfg};
  window.croupier = stats;
  document.body.dataset.layout = document.body.dataset.game = "pit";
  const KINDS = {bet_ramp: "Bet ramp", wonging: "Wonging", insurance: "Insurance at a high count",
    hole_card: "Hole-card play"};
  const FORMS = {opener: "Opener", closer: "Closer", fill: "Fill", credit: "Credit", drop: "Drop"};
  let last = null, failures = 0;

  const signed = (n) => (n > 0 ? "+" : n < 0 ? "\u2212" : "") + money(Math.abs(n));
  const num = (n, d) => (n === null || n === undefined ? "\u2013" : Number(n).toFixed(d));
  const clock = (t) => new Date(t * 1000).toISOString().slice(11, 16);
  const minutes = (s, now) => Math.max(0, Math.round(((s.stopped || now) - s.started) / 60));

  function figure(label, value, attrs) {
    return `<div class="pit-figure" ${attrs || ""}><span class="label">${esc(label)}</span>` +
      `<span class="value">${esc(value)}</span></div>`;
  }

  function figures(a) {
    const f = a.shift_figures || {};
    const d = Object.values(f.dealers || {});
    const hours = d.reduce((h, x) => h + (x.hours || 0), 0);
    const perHour = hours > 0 ? (f.rounds || 0) / hours : null;
    const errors = (f.dealer_errors || {}).per_100_rounds;
    return '<div class="pit-figures">' +
      figure("Rounds per hour", num(perHour, 0), `data-figure="rounds_per_hour" data-value="${perHour === null ? "" : perHour}"`) +
      figure("Rounds", money(f.rounds || 0), `data-figure="rounds" data-value="${f.rounds || 0}"`) +
      figure("Handle", money(f.handle || 0), `data-figure="handle" data-value="${f.handle || 0}"`) +
      figure("Win", signed(f.win || 0), `data-figure="win" data-value="${f.win || 0}"`) +
      figure("Hold", f.hold === null || f.hold === undefined ? "\u2013" : `${(100 * f.hold).toFixed(1)}%`,
        `data-figure="hold" data-value="${f.hold === null || f.hold === undefined ? "" : f.hold}"`) +
      figure("Errors per 100 rounds", num(errors, 1), 'data-figure="errors"') + "</div>";
  }

  // The shift's win, a line over the shift's hours (its points carried as data-points for the tests).
  function winLine(a) {
    const pts = a.win_series || [];
    const W = 400, H = 150, P = 8;
    if (!pts.length) return '<div class="pit-plot empty"><p class="pit-none">No rounds settled this shift yet</p></div>';
    const t0 = pts[0][0], t1 = Math.max(pts[pts.length - 1][0], t0 + 1);
    const lo = Math.min(0, ...pts.map((p) => p[1])), hi = Math.max(0, ...pts.map((p) => p[1]));
    const span = Math.max(1, hi - lo);
    const x = (t) => P + (W - 2 * P) * (t - t0) / (t1 - t0), y = (w) => H - P - (H - 2 * P) * (w - lo) / span;
    const line = pts.map((p) => `${x(p[0]).toFixed(1)},${y(p[1]).toFixed(1)}`).join(" ");
    const end = pts[pts.length - 1][1];
    return `<figure class="pit-plot win-line"><figcaption>Win over the shift: ${esc(signed(end))} ` +
      `(${esc(clock(t0))} to ${esc(clock(pts[pts.length - 1][0]))})</figcaption>` +
      `<svg viewBox="0 0 ${W} ${H}" preserveAspectRatio="none" data-points="${pts.length}" role="img">` +
      `<line class="axis" x1="${P}" x2="${W - P}" y1="${y(0).toFixed(1)}" y2="${y(0).toFixed(1)}"/>` +
      `<polyline class="${end >= 0 ? "up" : "down"}" points="${line}"/></svg></figure>`;
  }

  // Bet against the true count at the bet: one dot per round (a spot's window, or an alert's evidence).
  function scatter(title, points, attrs) {
    const W = 240, H = 150, P = 10;
    if (!points.length) return "";
    const tcs = points.map((p) => p[0]), bets = points.map((p) => p[1]);
    const x0 = Math.min(-2, ...tcs), x1 = Math.max(4, ...tcs), b1 = Math.max(...bets), b0 = Math.min(0, ...bets);
    const x = (t) => P + (W - 2 * P) * (t - x0) / (x1 - x0), y = (b) => H - P - (H - 2 * P) * (b - b0) / Math.max(1, b1 - b0);
    const dots = points.map((p) => `<circle cx="${x(p[0]).toFixed(1)}" cy="${y(p[1]).toFixed(1)}" r="3.2"/>`).join("");
    const range = `bets ${money(Math.min(...bets))} to ${money(b1)}, true counts ${num(Math.min(...tcs), 1)} to ${num(Math.max(...tcs), 1)}`;
    return `<figure class="pit-plot scatter" ${attrs}><figcaption>${esc(title)}: ${esc(range)}</figcaption>` +
      `<svg viewBox="0 0 ${W} ${H}" data-points="${points.length}" role="img">` +
      `<line class="axis" x1="${x(0).toFixed(1)}" x2="${x(0).toFixed(1)}" y1="${P}" y2="${H - P}"/>` +
      `<line class="axis" x1="${P}" x2="${W - P}" y1="${H - P}" y2="${H - P}"/>${dots}</svg></figure>`;
  }

  function ratings(view, now) {
    const sessions = ((view.ratings || {}).sessions || []).slice().reverse();   // the latest first
    if (!sessions.length) return '<p class="pit-none">No rated players</p>';
    const rows = sessions.map((s) => `<tr data-player="${esc(s.player)}" data-spot="${s.spot}"` +
      ` class="${s.stopped ? "ended" : ""}"><td>${esc(s.player)}</td><td>${s.spot}</td>` +
      `<td>${minutes(s, now)} min</td><td>${s.rounds}</td><td>${s.average_bet === null ? "\u2013" : money(Math.round(s.average_bet))}</td>` +
      `<td data-actual="${s.actual_win}">${signed(s.actual_win)}</td>` +
      `<td data-theo="${s.theo_win === null ? "" : s.theo_win}">${s.theo_win === null ? "\u2026" : signed(Math.round(s.theo_win))}</td>` +
      `<td>${money(Math.round(s.decision_cost))}</td></tr>`);
    return '<table class="pit-ratings"><thead><tr><th>Player</th><th>Spot</th><th>Time</th><th>Rounds</th>' +
      "<th>Avg bet</th><th>Win</th><th>Theo</th><th>Cost</th></tr></thead><tbody>" + rows.join("") + "</tbody></table>";
  }

  function alerts(ap) {
    const list = ((ap || {}).alerts || []).slice().reverse();
    if (!list.length) return '<p class="pit-none">No advantage-play alerts</p>';
    const older = (ap.alerts_total || list.length) - list.length;
    return (older > 0 ? `<p class="pit-note">The latest ${list.length} of ${ap.alerts_total}</p>` : "") + list.map((a) => `<div class="pit-alert" data-kind="${esc(a.kind)}" data-spot="${a.spot}">` +
      `<div class="alert-kind">${esc(KINDS[a.kind] || Felt.upper(a.kind))} \u00b7 spot ${a.spot} \u00b7 shoe ${a.shoe}</div>` +
      `<div class="alert-text">${esc(a.text)}</div></div>`).join("");
  }

  function plots(view) {
    const ap = view.advantage_play || {};
    const rated = new Set(Object.keys((view.ratings || {}).open || {}));
    const alerted = new Map();
    for (const a of ap.alerts || []) if (a.kind === "bet_ramp") alerted.set(String(a.spot), a);
    const out = [];
    for (const spot of [...new Set([...alerted.keys(), ...rated])].sort((p, q) => p - q)) {
      const a = alerted.get(spot), live = ((ap.spots || {})[spot] || {}).points || [];
      const points = live.length >= ((a && a.evidence.points) || []).length ? live : a.evidence.points;
      out.push(scatter(`Spot ${spot}${a ? " (alerted)" : ""}`, points,
        `data-spot="${spot}" data-alerted="${a ? "yes" : "no"}"`));
    }
    return out.join("") || '<p class="pit-none">No bets by rated or alerted spots yet</p>';
  }

  function paperwork(view, day) {
    const p = ((view.paperwork || {}).days || []).find((d) => d.day === day);
    if (!p) return `<p class="pit-none">No slips for ${esc(day)}</p>`;
    const row = (label, v) => `<tr data-optional><td>${esc(label)}</td><td>${v === null ? "\u2013" : money(v)}</td></tr>`;
    const open = (view.paperwork.slips || []).filter((s) => s.day === day && !s.confirmed_by)
      .map((s) => `${FORMS[s.form] || s.form} ${s.slip}`);
    return `<table class="pit-paper" data-day="${esc(day)}"><tbody>` + row("Opener", p.opener) + row("Closer", p.closer) +
      row("Fills", p.fills) + row("Credits", p.credits) + row("Drop", p.drop) +
      `<tr data-win="${p.win === null ? "" : p.win}"><td>Day's win</td><td>${p.win === null ? "\u2013" : signed(p.win)}</td></tr>` +
      "</tbody></table>" + (open.length ? `<p class="pit-note" data-optional>Waiting to be confirmed: ${esc(open.join(", "))}</p>` : "");
  }

  function table(t, now) {
    const info = t.info || {};
    const name = `${Felt.upper(info.title || info.game || "")} ${t.id}`;
    if (!t.ok) {
      return `<section class="pit-table" data-table="${esc(t.id)}"><h2>${esc(name)}</h2>` +
        `<p class="pit-none">No answer: ${esc(t.error)}</p></section>`;
    }
    const v = t.view, a = v.analytics || {}, ap = v.advantage_play || {};
    const dealer = a.dealer ? `Dealer ${a.dealer}` : "No dealer signed in";
    return `<section class="pit-table" data-table="${esc(t.id)}">` +
      `<h2><span>${esc(name)}</span><span class="dim">${esc(dealer)}</span>` +
      `<span class="dim">True count ${num(ap.true_count, 1)}</span>` +
      (v.watch_failed ? '<span class="bad">Alerts and figures stopped: see the table\'s log</span>' : "") +
      '</h2><div class="pit-grid">' +
      `<div class="pit-col"><h3>Shift from ${esc(a.shift || "")}</h3>${figures(a)}${winLine(a)}` +
      `<h3>Paperwork ${esc(a.day || "")}</h3>${paperwork(v, a.day)}</div>` +
      `<div class="pit-col"><h3>Rated play \u00b7 bet by true count</h3><div class="pit-list" data-list="ratings">${ratings(v, now)}</div>` +
      `<div class="pit-plots">${plots(v)}</div></div>` +
      `<div class="pit-col"><h3>Advantage play</h3><div class="pit-list" data-list="alerts">${alerts(ap)}</div></div>` +
      "</div></section>";
  }

  function render(msg) {
    const n = (msg.tables || []).reduce((k, t) => k + (t.ok ? ((t.view.advantage_play || {}).alerts || []).length : 0), 0);
    const day = ((msg.tables.find((t) => t.ok) || {}).view || {}).analytics || {};
    Felt.patch(app, `<header class="bar"><span class="title">Pit ${esc(msg.pit)}</span>` +
      `<span class="banner">${n ? `${n} advantage-play alert${n > 1 ? "s" : ""}` : "No alerts"}</span>` +
      `<span class="round">${esc(day.day || "")} \u00b7 ${esc(clock(msg.now))}</span></header>` +
      `<div class="pit-tables" data-tables="${msg.tables.length}">${msg.tables.map((t) => table(t, msg.now)).join("")}</div>`);
    fit();
    stats.messages += 1;
    document.body.dataset.seq = String(stats.messages);
  }

  // Each list shows what fits, the latest first, and says how many more there are; a column that still does not
  // fit (a pit of several tables) leaves out its optional lines: the paperwork's parts before the day's win.
  function fit() {
    for (const e of app.querySelectorAll("[data-optional]")) e.hidden = false;
    for (const list of app.querySelectorAll(".pit-list, .pit-plots")) {
      const items = [...list.querySelectorAll(":scope > .pit-alert, tbody > tr, :scope > .pit-plot")];
      for (const i of items) i.hidden = false;
      list.querySelector(".pit-more")?.remove();
      const over = () => list.scrollHeight > list.clientHeight + 1;
      let hidden = 0;
      for (let i = items.length - 1; i > 0 && over(); i--) { items[i].hidden = true; hidden++; }
      if (hidden) {
        const more = document.createElement("p");
        more.className = "pit-more";
        more.textContent = `and ${hidden} more`;
        list.appendChild(more);
        for (let i = items.length - hidden - 1; i > 0 && over(); i--) { items[i].hidden = true; hidden++; more.textContent = `and ${hidden} more`; }
      }
    }
    for (const col of app.querySelectorAll(".pit-col")) {
      for (const e of col.querySelectorAll("[data-optional]")) {
        if (col.scrollHeight <= col.clientHeight + 1) break;
        e.hidden = true;
      }
    }
  }

  function open() {
    const proto = location.protocol === "https:" ? "wss:" : "ws:";
    const ws = new WebSocket(`${proto}//${location.host}/pit/${encodeURIComponent(cfg.table)}/ws`);
    ws.onmessage = (ev) => {
      const msg = JSON.parse(ev.data);
      if (msg.kind !== "pit") return;
      failures = 0;
      status.hidden = true;
      last = msg;
      render(msg);
    };
    ws.onclose = () => {
      failures += 1;
      status.textContent = "reconnecting";
      status.className = "status bad";
      status.hidden = false;
      setTimeout(open, Math.min(5000, 200 * 2 ** Math.min(failures, 5)));
    };
  }

  addEventListener("resize", () => { if (last) fit(); });
  open();
})();
