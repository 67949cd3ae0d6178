"""The store on Redis (one server, or a Redis Cluster through its shard router)."""
