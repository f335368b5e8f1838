// A real HDFS on loopback for `sparkdl cluster start --yarn`: a MiniDFSCluster (a NameNode and one DataNode) in
// this JVM, as Spark's own YARN tests start it (BaseYarnClusterSuite). Compiled by `python -m cluster.yarn prepare`
// against the jars of cluster/yarn/pom.xml; started and stopped by cluster/yarn/local.py, never by hand.
//
//   java -cp JARS:CLASSES MiniHdfs STATE_DIR NAMENODE_PORT NAMENODE_HTTP_PORT
//
// It formats STATE_DIR/dfs, and once the NameNode (on 127.0.0.1 at the ports given) and the DataNode are up writes
// STATE_DIR/hdfs.json (its addresses), and runs until it is signalled (its shutdown hook stops the DataNode and the
// NameNode). The YARN daemons run in JVMs of their own (cluster/yarn/local.py says why).
import java.io.File;
import java.io.FileOutputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.StandardCopyOption;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.permission.FsPermission;
import org.apache.hadoop.hdfs.MiniDFSCluster;

public final class MiniHdfs {
    private MiniHdfs() {}

    public static void main(String[] args) {
        try {
            run(args);
        } catch (Throwable t) {
            // a daemon thread of a half-started cluster must not keep this JVM alive: exit, and the hook stops the rest
            System.err.println("MiniHdfs: failed: " + t);
            t.printStackTrace();
            System.exit(1);
        }
    }

    private static void run(String[] args) throws Exception {
        if (args.length != 3) {
            System.err.println("usage: MiniHdfs STATE_DIR NAMENODE_PORT NAMENODE_HTTP_PORT");
            System.exit(2);
        }
        File state = new File(args[0]).getAbsoluteFile();
        int port = Integer.parseInt(args[1]);
        int httpPort = Integer.parseInt(args[2]);
        state.mkdirs();
        System.setProperty("test.build.data", new File(state, "dfs").getPath());
        System.setProperty("hadoop.tmp.dir", new File(state, "tmp").getPath());

        Configuration hdfsConf = new Configuration();
        hdfsConf.set(MiniDFSCluster.HDFS_MINIDFS_BASEDIR, new File(state, "dfs").getPath());
        hdfsConf.set("dfs.namenode.rpc-address", "127.0.0.1:" + port);
        hdfsConf.set("dfs.namenode.http-address", "127.0.0.1:" + httpPort);
        hdfsConf.set("dfs.datanode.address", "127.0.0.1:0");
        hdfsConf.set("dfs.datanode.http.address", "127.0.0.1:0");
        hdfsConf.set("dfs.datanode.ipc.address", "127.0.0.1:0");
        hdfsConf.setBoolean("dfs.permissions.enabled", false);
        hdfsConf.setInt("dfs.replication", 1);
        final MiniDFSCluster dfs = new MiniDFSCluster.Builder(hdfsConf)
                .numDataNodes(1).nameNodeHttpPort(httpPort).nameNodePort(port).format(true).build();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try { dfs.shutdown(); } catch (Throwable t) { t.printStackTrace(); }
            System.err.println("MiniHdfs: stopped");
        }));
        dfs.waitActive();
        String defaultFs = "hdfs://127.0.0.1:" + dfs.getNameNodePort();

        FileSystem fs = dfs.getFileSystem();
        for (String dir : new String[] {"/tmp", "/user", "/user/" + System.getProperty("user.name")}) {
            fs.mkdirs(new Path(dir));
            fs.setPermission(new Path(dir), new FsPermission((short) 01777));
        }

        String json = "{\"pid\": " + ProcessHandle.current().pid()
                + ", \"default_fs\": \"" + defaultFs + "\""
                + ", \"namenode_http\": \"127.0.0.1:" + dfs.getNameNode().getHttpAddress().getPort() + "\"}\n";
        File ready = new File(state, "hdfs.json");
        File tmp = new File(state, "hdfs.json.tmp");
        try (OutputStream out = new FileOutputStream(tmp)) {
            out.write(json.getBytes(StandardCharsets.UTF_8));
        }
        Files.move(tmp.toPath(), ready.toPath(), StandardCopyOption.ATOMIC_MOVE);
        System.err.println("MiniHdfs: ready " + json.trim());
        while (true) {
            Thread.sleep(60000L);
        }
    }
}
