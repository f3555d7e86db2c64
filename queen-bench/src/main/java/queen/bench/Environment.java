package queen.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.LinkedHashMap;
import java.util.Map;

/** The machine and database a run measured, written next to its numbers. */
final class Environment {
  private Environment() {}

  static Map<String, Object> describe(Jdbc db) throws Exception {
    Map<String, Object> env = new LinkedHashMap<>();
    env.put("cores", Runtime.getRuntime().availableProcessors());
    env.put("memory", memory());
    env.put("java", System.getProperty("java.vm.name") + " " + Runtime.version());
    try (Connection c = db.connection();
        Statement st = c.createStatement()) {
      for (String setting :
          new String[] {
            "server_version",
            "synchronous_commit",
            "shared_buffers",
            "max_connections",
            "fsync",
            "wal_level"
          }) {
        try (ResultSet rs = st.executeQuery("show " + setting)) {
          rs.next();
          env.put("postgresql " + setting, rs.getString(1));
        }
      }
    }
    return env;
  }

  private static String memory() {
    try {
      for (String line : Files.readAllLines(Path.of("/proc/meminfo"))) {
        if (line.startsWith("MemTotal:")) {
          return Long.parseLong(line.replaceAll("[^0-9]", "")) / 1024 / 1024 + " GiB";
        }
      }
    } catch (Exception e) {
      return "unknown";
    }
    return "unknown";
  }
}
