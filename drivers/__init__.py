"""Hardware drivers at the edges: card shoe (serial), panel (GPIO), camera; each with a simulation."""
