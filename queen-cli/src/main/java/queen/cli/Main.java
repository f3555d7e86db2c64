package queen.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import queen.bench.BenchCommand;
import queen.server.ServeCommand;

/** The {@code queen} command line: every subcommand of the ./queen launcher. */
@Command(
    name = "queen",
    mixinStandardHelpOptions = true,
    versionProvider = Main.Version.class,
    description = "Queen for the JVM: a PostgreSQL-backed message broker.",
    subcommands = {ServeCommand.class, BenchCommand.class, CommandLine.HelpCommand.class},
    footer = {"", "The ./queen launcher also runs the test suite: ./queen test"})
public final class Main implements Runnable {
  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  public static void main(String[] args) {
    System.exit(new CommandLine(new Main()).execute(args));
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
