"use strict";
// Caribbean stud: the dealer's five cards (one up until the showdown, qualifying or not), each spot's hand and name.
Felt.register("caribbean-stud", {adapt(g) { return Felt.handsByPlace(g); }});
