package queen.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import queen.bench.BenchCommand;
import queen.client.QueenException;
import queen.server.ServeCommand;

/** The {@code queen} command line: every subcommand of the ./queen launcher. */
@Command(
    name = "queen",
    mixinStandardHelpOptions = true,
    versionProvider = Main.Version.class,
    description = "Queen for the JVM: a PostgreSQL-backed message broker.",
    subcommands = {
      ServeCommand.class,
      ClientCommands.Push.class,
      ClientCommands.Pop.class,
      ClientCommands.Ack.class,
      Tail.class,
      QueueCommands.Queues.class,
      GroupCommands.class,
      MessageCommands.Messages.class,
      MessageCommands.OneMessage.class,
      MessageCommands.Traces.class,
      QueueCommands.Dlq.class,
      StatsCommand.class,
      BenchCommand.class,
      CommandLine.HelpCommand.class
    },
    footer = {
      "",
      "The client subcommands reach the broker at --url (default $QUEEN_URL or",
      "http://localhost:6632). " + ClientCommands.EXIT_CODES,
      "",
      "The ./queen launcher also runs the test suite: ./queen test"
    })
public final class Main implements Runnable {
  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  public static void main(String[] args) {
    if (args.length == 1 && args[0].equals("serve")) {
      // straight to the broker: building the command line reflects over every subcommand and
      // its options first, about 0.6 s of a start on a 2-core machine (docs/benchmarks.md)
      System.exit(serve());
    }
    System.exit(commandLine().execute(args));
  }

  private static int serve() {
    try {
      return new ServeCommand().call();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return 1;
    }
  }

  /**
   * The command line with its exit codes: a broker error is 1 (refused) or 3 (unreachable); input
   * found wrong before anything was sent (data that is not JSON, options that do not go together)
   * is 2, bad usage, as picocli's own parse errors are; stdout that failed is 4.
   */
  static CommandLine commandLine() {
    CommandLine root = new CommandLine(new Main());
    // picocli's own message named java.time's exception classes
    root.registerConverter(
        java.time.Instant.class,
        text -> {
          try {
            return java.time.Instant.parse(text);
          } catch (java.time.format.DateTimeParseException e) {
            throw new CommandLine.TypeConversionException(
                "'" + text + "' is not an ISO-8601 instant such as 2026-12-01T09:00:00Z");
          }
        });
    // every command's --help lists -V, --version: answered with the jar's version at every depth
    // (picocli gives a subcommand no version of its parent's, and "queen serve -V" printed nothing)
    versionEverywhere(root, new Version());
    return root.setExecutionStrategy(
            parsed -> {
              int status = new CommandLine.RunLast().execute(parsed);
              // printed nowhere, a command's answer was lost without a word (exit 0)
              if (status == 0 && !ClientCommands.written(root.getOut())) {
                root.getErr().println("queen: stdout could not be written");
                return 4;
              }
              return status;
            })
        .setExecutionExceptionHandler(
            (e, cmd, parsed) -> {
              cmd.getErr().println("queen " + cmd.getCommandName() + ": " + e.getMessage());
              if (e instanceof IllegalArgumentException) {
                return 2;
              }
              if (e instanceof ClientCommands.OutputFailed) {
                return 4;
              }
              return e instanceof QueenException q && q.retryable() ? 3 : 1;
            });
  }

  private static void versionEverywhere(CommandLine c, CommandLine.IVersionProvider version) {
    c.getCommandSpec().versionProvider(version);
    c.getSubcommands().values().forEach(sub -> versionEverywhere(sub, version));
  }

  @Override
  public void run() {
    throw new CommandLine.ParameterException(spec.commandLine(), "Missing subcommand");
  }

  /** The version from the jar manifest. */
  static final class Version implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
      String v = Main.class.getPackage().getImplementationVersion();
      return new String[] {"queen " + (v == null ? "dev" : v)};
    }
  }
}
