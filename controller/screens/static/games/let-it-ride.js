"use strict";
// Let it ride: the two community cards in the centre, each spot's three cards and hand name; pulled bets leave the spot.
Felt.register("let-it-ride", {adapt(g) { return Felt.handsByPlace(g); }});
