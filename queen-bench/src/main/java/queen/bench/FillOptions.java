package queen.bench;

import picocli.CommandLine.Option;

/** How pop-ack pushes its standing backlog ({@link Fill}). */
final class FillOptions {
  @Option(
      names = "--fill-batch",
      defaultValue = "100",
      description = "Messages a push of the backlog, each push one stored segment (default 100).")
  int batch;

  @Option(
      names = "--fill-payload",
      defaultValue = "30",
      description = "Bytes a message of the backlog (default 30).")
  int payload;

  @Option(
      names = "--fill-random",
      description =
          "Pad the backlog's payloads with random letters (stored at about 60% of their size)"
              + " instead of one letter repeated, which compresses to almost nothing.")
  boolean random;

  Fill shape() {
    return new Fill(batch, payload, random);
  }
}
