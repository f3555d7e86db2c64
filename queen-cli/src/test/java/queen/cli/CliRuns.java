package queen.cli;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine;

/** Runs the CLI in this JVM with a given stdin, and keeps its exit status, stdout and stderr. */
final class CliRuns {
  private CliRuns() {}

  record Run(int exit, String out, String err) {
    List<JsonNode> lines() {
      List<JsonNode> nodes = new ArrayList<>();
      out.lines().filter(l -> !l.isBlank()).forEach(l -> nodes.add(Ndjson.parse(l, "output")));
      return nodes;
    }
  }

  static Run run(String stdin, String... args) {
    return run(stdin.getBytes(StandardCharsets.UTF_8), args);
  }

  static Run run(byte[] stdin, String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine cmd = Main.commandLine();
    cmd.setOut(new PrintWriter(out, true));
    cmd.setErr(new PrintWriter(err, true));
    InputStream saved = System.in;
    System.setIn(new ByteArrayInputStream(stdin));
    try {
      return new Run(cmd.execute(args), out.toString(), err.toString());
    } finally {
      System.setIn(saved);
    }
  }

  /**
   * As {@link #run}, with stdout failing at every write (a pipe closed by head, a full disk); a
   * flush with nothing written succeeds, as on a pipe.
   */
  static Run runWithBrokenStdout(String... args) {
    StringWriter err = new StringWriter();
    CommandLine cmd = Main.commandLine();
    cmd.setOut(
        new PrintWriter(
            new Writer() {
              @Override
              public void write(char[] buf, int off, int len) throws IOException {
                throw new IOException("Broken pipe");
              }

              @Override
              public void flush() {}

              @Override
              public void close() {}
            },
            true));
    cmd.setErr(new PrintWriter(err, true));
    return new Run(cmd.execute(args), "", err.toString());
  }
}
