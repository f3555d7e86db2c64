package queen.server.store;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.JarURLConnection;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.stream.Stream;

/**
 * The files under a folder of the classpath, read whole, whether the folder lies in the broker's
 * jar or (in tests and builds) on disk.
 */
public final class ClasspathFolder {
  private ClasspathFolder() {}

  /**
   * Every file under {@code dir} and its subfolders, by path relative to {@code dir} ({@code
   * a/b.js}), in name order; empty when the folder is not on the classpath.
   */
  public static Map<String, byte[]> read(ClassLoader loader, String dir) {
    Map<String, byte[]> files = new TreeMap<>();
    URL url = loader.getResource(dir);
    if (url == null) {
      return files;
    }
    try {
      if (url.getProtocol().equals("jar")) {
        JarURLConnection c = (JarURLConnection) url.openConnection();
        c.setUseCaches(false);
        try (JarFile jar = c.getJarFile()) {
          for (JarEntry e : jar.stream().toList()) {
            if (e.getName().startsWith(dir + "/") && !e.isDirectory()) {
              try (InputStream in = jar.getInputStream(e)) {
                files.put(e.getName().substring(dir.length() + 1), in.readAllBytes());
              }
            }
          }
        }
      } else {
        Path root = Path.of(url.toURI());
        try (Stream<Path> all = Files.walk(root)) {
          for (Path p : all.filter(Files::isRegularFile).toList()) {
            files.put(root.relativize(p).toString().replace('\\', '/'), Files.readAllBytes(p));
          }
        }
      }
      return files;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (URISyntaxException e) {
      throw new IllegalStateException(e);
    }
  }
}
