"use strict";
// Playing cards drawn as SVG: crisp at any size, no image files, a plain sans-serif for the ranks only.
// Cards.card("AS", fourColour) -> SVG text (a <use> of the card's symbol); Cards.back() -> a face-down card; Cards.placed({card, up}).
// A face-down card carries no identity at all (the view has none to give): data-card="" on its element.
const Cards = (() => {
  const SUIT_PATHS = {
    S: '<path d="M50 4C41 22 4 38 4 63c0 14 11 24 24 24 9 0 16-5 19-11-1 10-5 17-13 22h32c-8-5-12-12-13-22 3 6 10 11 19 11 13 0 24-10 24-24C96 38 59 22 50 4z"/>',
    H: '<path d="M50 92C22 70 4 53 4 31 4 15 16 5 29 5c10 0 17 6 21 14C54 11 61 5 71 5c13 0 25 10 25 26 0 22-18 39-46 61z"/>',
    D: '<path d="M50 3 88 50 50 97 12 50z"/>',
    C: '<circle cx="50" cy="27" r="21"/><circle cx="26" cy="58" r="21"/><circle cx="74" cy="58" r="21"/>' +
       '<path d="M45 52C46 75 41 88 32 97h36c-9-9-14-22-13-45z"/>',
  };
  const NAMES = {S: "spades", H: "hearts", D: "diamonds", C: "clubs"};
  const RANK_NAMES = {A: "ace", K: "king", Q: "queen", J: "jack", T: "ten"};
  const TWO = {S: "#161616", C: "#161616", H: "#c8102e", D: "#c8102e"};
  const FOUR = {S: "#161616", C: "#12813a", H: "#c8102e", D: "#0b57c9"};
  const L = 63, C = 100, R = 137;
  const PIPS = {
    2: [[C, 62], [C, 218]],
    3: [[C, 62], [C, 140], [C, 218]],
    4: [[L, 62], [R, 62], [L, 218], [R, 218]],
    5: [[L, 62], [R, 62], [C, 140], [L, 218], [R, 218]],
    6: [[L, 62], [R, 62], [L, 140], [R, 140], [L, 218], [R, 218]],
    7: [[L, 62], [R, 62], [C, 101], [L, 140], [R, 140], [L, 218], [R, 218]],
    8: [[L, 62], [R, 62], [C, 101], [L, 140], [R, 140], [C, 179], [L, 218], [R, 218]],
    9: [[L, 62], [R, 62], [L, 114], [R, 114], [C, 140], [L, 166], [R, 166], [L, 218], [R, 218]],
    10: [[L, 62], [R, 62], [C, 88], [L, 114], [R, 114], [L, 166], [R, 166], [C, 192], [L, 218], [R, 218]],
  };
  const cache = new Map();

  // One hidden sprite per page: the suit shapes and the back's pattern, referenced by every card.
  function sprite() {
    if (document.getElementById("card-sprite")) return;
    const symbols = Object.entries(SUIT_PATHS)
      .map(([s, d]) => `<symbol id="suit-${s}" viewBox="0 0 100 100">${d}</symbol>`).join("");
    const pattern = '<pattern id="card-back" width="16" height="16" patternUnits="userSpaceOnUse" ' +
      'patternTransform="rotate(45)"><rect width="16" height="16" fill="#8e1b1b"/>' +
      '<rect width="8" height="8" fill="#a82727"/><circle cx="12" cy="12" r="2.5" fill="#d9b44a"/></pattern>';
    const svg = `<svg id="card-sprite" width="0" height="0" style="position:absolute" aria-hidden="true">` +
      `<defs>${symbols}${pattern}</defs></svg>`;
    document.body.insertAdjacentHTML("afterbegin", svg);
  }

  function pip(suit, x, y, size, flip) {
    const h = size / 2;
    const rot = flip ? ` transform="rotate(180 ${x} ${y})"` : "";
    return `<use href="#suit-${suit}" x="${x - h}" y="${y - h}" width="${size}" height="${size}"${rot}/>`;
  }

  function corner(rank, suit) {
    const label = rank === "T" ? "10" : rank;
    const fit = label.length > 1 ? ' textLength="42" lengthAdjust="spacingAndGlyphs"' : "";
    return `<text x="25" y="50" font-size="44" font-weight="700" text-anchor="middle"${fit}>${label}</text>` +
      pip(suit, 25, 76, 30, false);
  }

  function pips(rank, suit) {
    if (rank === "A") return pip(suit, 100, 140, suit === "S" ? 104 : 84, false);
    if ("JQK".includes(rank)) {
      return `<rect x="44" y="34" width="112" height="212" rx="8" fill="none" stroke="currentColor" stroke-width="3"/>` +
        `<text x="100" y="168" font-size="96" font-weight="700" text-anchor="middle">${rank}</text>` +
        pip(suit, 66, 58, 30, false) + pip(suit, 134, 222, 30, true);
    }
    const n = rank === "T" ? 10 : Number(rank);
    return (PIPS[n] || []).map(([x, y]) => pip(suit, x, y, 36, y > 140)).join("");
  }

  // A card's face, drawn once per page into the sprite as a <symbol>; every card on the felt is an <svg>
  // holding one <use> of it: a page parses two elements per card, not the face's thirty. The sprite holds
  // the whole deck in a colour scheme from its first card on, whichever cards are dealt (it tells nothing).
  function face(code, fourColour) {
    if (code === "JK") {
      return `<rect x="2" y="2" width="196" height="276" rx="14" fill="#fff" stroke="#999" stroke-width="2"/>` +
        `<text x="100" y="160" font-size="44" font-weight="700" text-anchor="middle" fill="#6a1b9a">JOKER</text>`;
    }
    const rank = code.slice(0, -1), suit = code.slice(-1);
    const colour = (fourColour ? FOUR : TWO)[suit] || "#161616";
    return `<rect x="2" y="2" width="196" height="276" rx="14" fill="#fff" stroke="#999" stroke-width="2"/>` +
      `<g fill="${colour}" color="${colour}">${corner(rank, suit)}` +
      `<g transform="rotate(180 100 140)">${corner(rank, suit)}</g>${pips(rank, suit)}</g>`;
  }

  const decks = new Set();

  function deck(fourColour) {
    const scheme = fourColour ? 4 : 2;
    if (decks.has(scheme)) return;
    sprite();
    const codes = ["JK"];
    for (const s of "SHDC") for (const r of "A23456789TJQK") codes.push(r + s);
    const symbols = codes.map((c) => `<symbol id="card-${c}-${scheme}" viewBox="0 0 200 280">${face(c, fourColour)}</symbol>`);
    // (the defs element is the parsing context: the symbols are parsed as SVG)
    document.querySelector("#card-sprite defs").insertAdjacentHTML("beforeend", symbols.join(""));
    decks.add(scheme);
  }

  function card(code, fourColour) {
    const key = `${code}/${fourColour ? 4 : 2}`;
    if (cache.has(key)) return cache.get(key);
    deck(fourColour);
    let svg;
    if (code === "JK") {
      svg = `<svg class="card" viewBox="0 0 200 280" data-card="JK" data-up="true" role="img" aria-label="joker">` +
        `<use href="#card-JK-${fourColour ? 4 : 2}" width="200" height="280"/></svg>`;
    } else {
      const rank = code.slice(0, -1), suit = code.slice(-1);
      const name = `${RANK_NAMES[rank] || rank} of ${NAMES[suit] || suit}`;
      svg = `<svg class="card" viewBox="0 0 200 280" data-card="${code}" data-up="true" role="img" aria-label="${name}">` +
        `<use href="#card-${code}-${fourColour ? 4 : 2}" width="200" height="280"/></svg>`;
    }
    cache.set(key, svg);
    return svg;
  }

  function back() {
    return `<svg class="card back" viewBox="0 0 200 280" data-card="" data-up="false" role="img" aria-label="face down">` +
      `<rect x="2" y="2" width="196" height="276" rx="14" fill="#fff" stroke="#999" stroke-width="2"/>` +
      `<rect x="12" y="12" width="176" height="256" rx="8" fill="url(#card-back)"/></svg>`;
  }

  // A card of a view: {"card": "AS", "up": true}; a face-down one is {"card": null, "up": false}.
  function placed(p, fourColour) {
    return p && p.up && p.card ? card(p.card, fourColour) : back();
  }

  return {card, back, placed, sprite, NAMES};
})();
