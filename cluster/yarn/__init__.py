"""YARN and HDFS: a real local cluster (:mod:`cluster.yarn.local`), Hadoop's jars (:mod:`cluster.yarn.hadoop`), a
HADOOP_CONF_DIR (:mod:`cluster.yarn.config`) and the REST APIs of the ResourceManager and NodeManagers
(:mod:`cluster.yarn.rest`). The campaign's YARN backend is :mod:`harness.yarn_backend`."""
