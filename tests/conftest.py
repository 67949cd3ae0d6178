"""Shared fixtures."""

# the server tests' fixtures: a real Redis, a real server on port 0, clients; the records
# tests' throw-away PostgreSQL cluster and fresh databases
pytest_plugins = ["server_fixtures", "pg_fixtures"]
