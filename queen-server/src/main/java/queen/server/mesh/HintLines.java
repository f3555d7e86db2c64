package queen.server.mesh;

import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The lines of a hint payload as a receiving broker reads them. The first line is the sender's id;
 * then one entry a line, its fields separated by tabs: "r" (state changed), "p" queue partition
 * (pushed) with its amounts on a line "a" after it, "l" queue partition group hasMore (a lease
 * ended) with its lease on a line "e" after it. Lines and fields a later broker adds are passed by.
 */
final class HintLines {
  private static final Logger log = LoggerFactory.getLogger(HintLines.class);

  private HintLines() {}

  /**
   * Applies the lines after the sender's id, in order; answers how many entries there were (a
   * push's "a" line and a release's "e" line belong to their entry, as the sender counts them).
   */
  static int apply(String payload, Hints.Receiver receiver) {
    String[] lines = payload.split("\n");
    // a change of settings sent with pushes is read first: a configure then a push through A
    // must not reach B's pops in the other order
    for (int i = 1; i < lines.length; i++) {
      if (lines[i].equals("r")) {
        receiver.refresh();
        break;
      }
    }
    for (int i = 1; i < lines.length; i++) {
      String[] f = lines[i].split("\t", -1);
      switch (f[0]) {
        case "p" -> {
          String[] amount = i + 1 < lines.length ? lines[i + 1].split("\t", -1) : null;
          if (amount != null && amount[0].equals("a")) {
            i++;
          } else {
            amount = null;
          }
          pushed(f, amount, receiver);
        }
        case "a" -> {
          // read with the push it follows
        }
        case "l" -> {
          UUID lease = null;
          if (i + 1 < lines.length && lines[i + 1].startsWith("e\t")) {
            lease = lease(lines[++i].substring(2));
          }
          if (f.length >= 5) { // fields a newer broker adds after them are passed by
            receiver.released(f[1], f[2], f[3], f[4].equals("1"), lease);
          }
        }
        case "e" -> {
          // read with the release it follows
        }
        case "r" -> {
          // read above
        }
        default -> log.debug("unknown hint {}", f[0]);
      }
    }
    int entries = 0;
    for (int i = 1; i < lines.length; i++) {
      if (!lines[i].startsWith("a\t") && !lines[i].startsWith("e\t")) {
        entries++;
      }
    }
    return entries;
  }

  /** The lease of an "e" line; null when it is not one (the release then forgets any). */
  private static UUID lease(String text) {
    try {
      return UUID.fromString(text);
    } catch (IllegalArgumentException e) {
      return null;
    }
  }

  /**
   * "p", queue, partition; then the line "a", messages, bytes, which an older broker did not send:
   * without it the amount is not known. Fields past these are a later broker's, and are passed by.
   */
  private static void pushed(String[] p, String[] amount, Hints.Receiver receiver) {
    if (p.length < 3) {
      return;
    }
    long count = -1;
    long bytes = 0;
    if (amount != null && amount.length >= 3) {
      try {
        count = Long.parseLong(amount[1]);
        bytes = Long.parseLong(amount[2]);
      } catch (NumberFormatException e) {
        count = -1;
        bytes = 0;
      }
    }
    receiver.pushed(p[1], p[2], (int) Math.min(count, Integer.MAX_VALUE), bytes);
  }
}
