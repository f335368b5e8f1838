"""cluster: Spark standalone clusters, on loopback (`cluster.local`) or over SSH (Fabric)."""
