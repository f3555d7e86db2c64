package queen.server.push;

import java.io.IOException;
import java.nio.file.Path;

/** A buffer directory whose lock is held: by another broker, or by the run before this one. */
final class BufferInUse extends IOException {
  BufferInUse(Path dir) {
    super(dir + " is in use by another broker");
  }
}
