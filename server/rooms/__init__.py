"""Rooms and races: a room's state and its pure updates, the local room registry and
the fair-play filter, and the services that create, join, race, finish and rematch."""
