"use strict";
// Stuss: faro's layout, casekeeper and turn (faro.js); no soda, the bank takes splits whole.
Felt.register("stuss", {adapt(g, info, opts) { return Felt.layouts.faro.adapt(g, info, opts); }});
