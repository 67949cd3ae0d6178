"""Watching races: the live directory, followed boards and reactions."""
