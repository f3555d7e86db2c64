package queen.bench;

import picocli.CommandLine.Option;

/** The broker a command drives: alone for commands that measure no rate, else in BenchOptions. */
class BrokerUrl {
  @Option(
      names = "--url",
      defaultValue = "http://localhost:6632",
      description = "Broker to measure (default ${DEFAULT-VALUE}).")
  String url;
}
