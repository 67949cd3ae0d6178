"""The store in one process's memory (the embedded default)."""
