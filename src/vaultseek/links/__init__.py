"""Links between notes: resolution, anchors, related notes, extracts."""
