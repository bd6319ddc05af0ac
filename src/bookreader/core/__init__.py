"""Everything that works without a screen.  Nothing under ``core`` may import Qt."""
