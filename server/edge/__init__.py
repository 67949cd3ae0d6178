"""The network's edge: the websocket gateway, HTTP routes, static files, connections and
per-address limits."""
