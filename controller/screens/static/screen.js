"use strict";
// A screen's WebSocket, bound to one view of one table by the bridge: a snapshot on connect, then updates
// each naming the seq of the one before (prev). An update that does not follow, a heartbeat naming another
// seq, three heartbeats of silence or a dropped socket: reconnect, which brings a fresh snapshot.
// Screen.start(render) calls render(state, info) for every state, in order. window.croupier holds figures
// for tests and the bench.
const Screen = (() => {
  const cfg = JSON.parse(document.body.dataset.screen);
  const stats = {seq: -1, snapshots: 0, updates: 0, gaps: 0, silences: 0, reconnects: 0, latencies: [], cfg};
  window.croupier = stats;
  let ws = null, info = null, state = null, sides = {}, render = null, heard = 0, skew = 0, failures = 0, retryTimer = null;
  let nextId = 1;
  const pending = new Map();

  function url() {
    const proto = location.protocol === "https:" ? "wss:" : "ws:";
    return `${proto}//${location.host}/ws/${encodeURIComponent(cfg.table)}/${encodeURIComponent(cfg.view)}`;
  }

  function open() {
    retryTimer = null;
    const sock = new WebSocket(url());
    ws = sock;
    sock.onopen = () => { heard = Date.now(); };
    sock.onmessage = (ev) => { if (sock === ws) receive(JSON.parse(ev.data)); };
    sock.onclose = () => {
      if (sock !== ws) return;       // a socket we replaced on purpose
      ws = null;
      for (const [, done] of pending) done({ok: false, error: "connection lost"});
      pending.clear();
      failures += 1;
      stats.reconnects += 1;
      status(failures > 1 ? "table not answering: reconnecting" : "reconnecting", true);
      retryTimer = setTimeout(open, Math.min(5000, 200 * 2 ** Math.min(failures, 5)));
    };
  }

  // Start over from a snapshot: drop this socket and open another at once.
  function resnapshot() {
    const old = ws;
    ws = null;
    if (old) { old.onclose = null; old.close(); }
    if (retryTimer === null) open();
  }

  function now() { return (Date.now() + skew) / 1000; }   // the bridge's clock, in seconds

  // A message is stamped with the bridge's clock (heartbeats, snapshots) or the table's publish time
  // (updates) before it travels, so each sample of the clocks' difference is short by that message's
  // delay: the largest of the recent samples is the best (a busy kiosk would otherwise count down a second
  // or more too many). Sampling every update also means the screen's clock is never behind the record that
  // opened the bets, so the countdown never starts above the betting window.
  const skews = [];
  function sampleSkew(bridgeNow) {
    skews.push(bridgeNow * 1000 - Date.now());
    if (skews.length > 8) skews.shift();
    skew = Math.max(...skews);
  }

  // Updates that arrive together (the table journals a burst of bets in one commit) are drawn once: the
  // render waits for the messages already queued, then draws the newest state. Each update's latency is
  // taken when the DOM first holds it (or a newer state).
  let drawing = false;
  const undrawn = [];   // [seq, table ts] of updates not yet in the DOM

  function show() {
    if (!drawing) { drawing = true; setTimeout(draw, 0); }
  }

  function draw() {
    drawing = false;
    document.body.dataset.seq = String(stats.seq);   // no selector reads it: no style work
    render(state, info);
    const now = performance.timeOrigin + performance.now();
    for (const [seq, ts] of undrawn) stats.latencies.push([seq, now - ts * 1000]);
    undrawn.length = 0;
    if (stats.latencies.length > 50000) stats.latencies.splice(0, 10000);
  }

  function receive(msg) {
    heard = Date.now();
    if (msg.kind === "snapshot") {
      failures = 0;
      stats.snapshots += 1;
      stats.seq = msg.seq;
      info = msg.info || info;
      state = msg.state;
      sides = msg.side || {};
      sampleSkew(msg.now);
      status("", false);
      show();
    } else if (msg.kind === "update") {
      if (stats.seq < 0 || msg.prev !== stats.seq) { stats.gaps += 1; resnapshot(); return; }
      stats.seq = msg.seq;
      state = msg.state;
      stats.updates += 1;
      if (msg.ts) { undrawn.push([msg.seq, msg.ts]); sampleSkew(msg.ts); }   // latencies: [seq, ms from the table's publish to the DOM]
      show();
    } else if (msg.kind === "side") {   // another bus's state shown beside the view (a linked progressive)
      sides[msg.name] = msg.state;
      if (state) show();
    } else if (msg.kind === "heartbeat") {
      sampleSkew(msg.now);
      if (msg.seq !== stats.seq) { stats.gaps += 1; resnapshot(); return; }
      status(msg.stale ? "table not answering" : "", msg.stale);
    } else if (msg.kind === "reply") {
      const done = pending.get(msg.id);
      pending.delete(msg.id);
      if (done) done(msg);
    } else if (msg.kind === "error") {
      status(msg.error, true);
    }
  }

  function status(text, bad) {
    const el = document.getElementById("status");
    if (!el || (el.textContent === text && el.classList.contains("bad") === !!bad)) return;
    el.textContent = text;
    el.hidden = !text;
    el.classList.toggle("bad", !!bad);
  }

  // Dealer views only: a command for the table; resolves with the bridge's reply.
  function send(command, args) {
    return new Promise((resolve) => {
      if (!ws || ws.readyState !== WebSocket.OPEN) { resolve({ok: false, error: "not connected"}); return; }
      const id = nextId++;
      pending.set(id, resolve);
      ws.send(JSON.stringify({id, command, args: args || {}}));
    });
  }

  // "#floor" (`croupier bench screens --floor`): draw the seq alone instead of the page, to measure what
  // the browser and the machine cost an update before the page's own work.
  function floor() { document.getElementById("app").textContent = String(stats.seq); }

  function start(renderer) {
    render = location.hash === "#floor" ? floor : renderer;
    Cards.sprite();
    open();
    setInterval(() => {
      const beat = ((info && info.heartbeat) || 1) * 1000;
      if (ws && ws.readyState === WebSocket.OPEN && Date.now() - heard > 3 * beat) {
        stats.silences += 1;
        resnapshot();
      }
    }, 250);
  }

  return {start, send, now, cfg, get info() { return info; }, get state() { return state; }, get sides() { return sides; }};
})();
