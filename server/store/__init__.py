"""The shared store of rooms, move logs, events and the live directory: the interface,
and its implementations in one process (memory), on Redis and on a Redis Cluster."""
