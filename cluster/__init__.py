"""cluster: Spark standalone clusters, on loopback (`cluster.local`, its command line `cluster.cli`) or over SSH
(Fabric)."""
