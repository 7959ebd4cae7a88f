"use strict";
// Three card poker: the dealer's hand (qualifying or not) in the centre, each spot's three cards and hand name.
Felt.register("three-card-poker", {adapt(g) { return Felt.handsByPlace(g); }});
