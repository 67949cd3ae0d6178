"""Shared fixtures."""

# the server tests' fixtures: a real Redis, a real server on port 0, clients
pytest_plugins = ["server_fixtures"]
