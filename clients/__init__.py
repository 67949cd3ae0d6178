"""samedeal's clients: the ``samedeal`` command, the Python client library, bots and the
browser client's static files."""
