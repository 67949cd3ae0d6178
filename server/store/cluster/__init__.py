"""What only a Redis Cluster needs: sharded pub/sub over the cluster's primaries."""
