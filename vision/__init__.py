"""Card detection and recognition from camera frames, tracking, and the synthetic card renderer."""
