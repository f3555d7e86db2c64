package queen.server.store;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.JarURLConnection;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Map;
import java.util.TreeMap;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.stream.Stream;

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
    URL dir = loader.getResource(DIR);
    if (dir == null) {
      throw new IllegalStateException(DIR + " is missing from the classpath");
    }
    try {
      if (dir.getProtocol().equals("jar")) {
        JarURLConnection c = (JarURLConnection) dir.openConnection();
        c.setUseCaches(false);
        try (JarFile jar = c.getJarFile()) {
          for (JarEntry e : jar.stream().toList()) {
            if (e.getName().startsWith(DIR + "/") && e.getName().endsWith(".sql")) {
              try (InputStream in = jar.getInputStream(e)) {
                scripts.put(e.getName(), in.readAllBytes());
              }
            }
          }
        }
      } else {
        try (Stream<Path> files = Files.list(Path.of(dir.toURI()))) {
          for (Path p : files.filter(p -> p.toString().endsWith(".sql")).toList()) {
            scripts.put(DIR + "/" + p.getFileName(), Files.readAllBytes(p));
          }
        }
      }
      MessageDigest sha = MessageDigest.getInstance("SHA-256");
      scripts.forEach(
          (name, bytes) -> {
            sha.update(name.getBytes(StandardCharsets.UTF_8));
            sha.update((byte) 0);
            sha.update(bytes);
          });
      return HexFormat.of().formatHex(sha.digest());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (URISyntaxException | NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
