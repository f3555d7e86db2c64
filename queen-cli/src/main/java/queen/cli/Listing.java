package queen.cli;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.concurrent.Callable;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import queen.client.Queen;

/** A command that prints one admin listing as a table, or as the broker's JSON. */
abstract class Listing implements Callable<Integer> {
  @Mixin ClientOptions client;
  @Spec CommandSpec spec;

  @Option(names = "--json", description = "print the broker's JSON as it is")
  boolean json;

  abstract JsonNode fetch(Queen queen);

  abstract Table table(JsonNode body);

  @Override
  public Integer call() {
    try (Queen queen = client.connect()) {
      JsonNode body = fetch(queen);
      if (json) {
        Ndjson.print(ClientCommands.out(spec), body);
      } else {
        table(body).print(ClientCommands.out(spec));
      }
    }
    return 0;
  }
}
