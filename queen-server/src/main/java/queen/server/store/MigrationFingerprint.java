package queen.server.store;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Map;
import java.util.TreeMap;

/**
 * A hash of every migration script this build carries (names and contents). Stored after a
 * migration, it lets the next start see with one query that the schema is already this build's and
 * skip Flyway, whose scanning and validation cost a third of a start.
 */
final class MigrationFingerprint {
  private static final String DIR = "db/migration";

  private MigrationFingerprint() {}

  static String of(ClassLoader loader) {
    Map<String, byte[]> scripts = new TreeMap<>();
    ClasspathFolder.read(loader, DIR)
        .forEach(
            (name, bytes) -> {
              if (name.endsWith(".sql") && !name.contains("/")) {
                scripts.put(DIR + "/" + name, bytes);
              }
            });
    if (scripts.isEmpty()) {
      throw new IllegalStateException(DIR + " is missing from the classpath");
    }
    try {
      MessageDigest sha = MessageDigest.getInstance("SHA-256");
      scripts.forEach(
          (name, bytes) -> {
            sha.update(name.getBytes(StandardCharsets.UTF_8));
            sha.update((byte) 0);
            sha.update(bytes);
          });
      return HexFormat.of().formatHex(sha.digest());
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
