"""Vectorised (numpy) fast paths for the math tools, each tested to give exactly the scalar results."""
