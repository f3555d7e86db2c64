package queen.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * A process's resident memory, read from /proc: what it holds now, and the most it held since its
 * peak was last reset, so that each scenario of a suite gets its own peak; and a full collection of
 * a JVM, so that the memory one scenario grew is not counted to the next.
 */
final class Rss {
  private Rss() {}

  /** Resident memory now, in MB, or null when /proc does not have the process. */
  static Long now(long pid) {
    return field(pid, "VmRSS:");
  }

  /** The highest resident memory since start or since {@link #resetPeak}, in MB. */
  static Long peak(long pid) {
    return field(pid, "VmHWM:");
  }

  /** Starts a new peak at the current resident memory (Linux's clear_refs, value 5). */
  static void resetPeak(long pid) {
    try {
      Files.writeString(Path.of("/proc/" + pid + "/clear_refs"), "5");
    } catch (java.io.IOException e) {
      throw new IllegalStateException("cannot reset the peak RSS of process " + pid, e);
    }
  }

  /**
   * Has the JVM of that process run a full collection (jcmd GC.run), after which G1 gives back the
   * heap above its live set and free ratio: a broker's memory as its next scenario finds it, rather
   * than what the scenarios before it grew.
   */
  static void collect(long pid) {
    Path jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd");
    try {
      Process p =
          new ProcessBuilder(jcmd.toString(), Long.toString(pid), "GC.run")
              .redirectErrorStream(true)
              .start();
      // its few lines fit the pipe, so they can be read after it ends
      if (!p.waitFor(60, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        throw new IllegalStateException("jcmd " + pid + " GC.run did not end in 60 s");
      }
      if (p.exitValue() != 0) {
        String out = new String(p.getInputStream().readAllBytes());
        throw new IllegalStateException("jcmd " + pid + " GC.run did not succeed: " + out.trim());
      }
    } catch (java.io.IOException e) {
      throw new IllegalStateException("cannot run " + jcmd + " (the bench needs a JDK)", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /**
   * Waits (up to 5 s) until the resident memory stops falling: G1 hands memory back to the system
   * on a thread of its own after a collection that shrank the heap.
   */
  static void settle(long pid) throws InterruptedException {
    Long last = now(pid);
    for (int i = 0; i < 25 && last != null; i++) {
      TimeUnit.MILLISECONDS.sleep(200);
      Long next = now(pid);
      if (next == null || next >= last) {
        return;
      }
      last = next;
    }
  }

  /** Whether the process still runs. */
  static boolean alive(long pid) {
    return ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
  }

  private static Long field(long pid, String name) {
    try {
      for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
        if (line.startsWith(name)) {
          return Long.parseLong(line.replaceAll("[^0-9]", "")) / 1024;
        }
      }
      return null;
    } catch (java.io.IOException gone) {
      return null;
    }
  }
}
