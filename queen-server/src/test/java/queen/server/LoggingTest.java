package queen.server;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.JsonEncoder;
import ch.qos.logback.classic.encoder.PatternLayoutEncoder;
import ch.qos.logback.classic.spi.Configurator;
import ch.qos.logback.classic.spi.Configurator.ExecutionStatus;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.LoggingEvent;
import ch.qos.logback.classic.util.LogbackMDCAdapter;
import ch.qos.logback.core.ConsoleAppender;
import ch.qos.logback.core.OutputStreamAppender;
import ch.qos.logback.core.encoder.Encoder;
import ch.qos.logback.core.status.Status;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.ServiceLoader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The broker's logging set up in code: each case on a logger context of its own. */
@SuppressWarnings("unchecked")
class LoggingTest {
  /** A class path without any logback file. */
  private static final ClassLoader NO_FILES = new URLClassLoader(new URL[0], null);

  @Test
  void textIsOneLineWithAUtcTimestampTheLevelAndTheLogger() {
    LoggerContext logback = context();
    Logging.apply(logback, false);
    String line = encode(logback, "queen", "listening on {}", 6632);
    assertThat(line)
        .matches(
            "\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z INFO  queen - listening on 6632\n");
  }

  @Test
  void jsonIsOneObjectPerLineWithTheFormattedMessageAlone() throws Exception {
    LoggerContext logback = context();
    Logging.apply(logback, true);
    String line = encode(logback, "queen.server.Broker", "listening on {}", 6632);
    assertThat(line).endsWith("\n").doesNotContain("\n\n");
    assertThat(line.strip()).doesNotContain("\n");
    JsonNode event = new ObjectMapper().readTree(line);
    assertThat(event.path("formattedMessage").asText()).isEqualTo("listening on 6632");
    assertThat(event.path("level").asText()).isEqualTo("INFO");
    assertThat(event.path("loggerName").asText()).isEqualTo("queen.server.Broker");
    // a log shipper gets the message once: no template, no arguments
    assertThat(event.has("message")).isFalse();
    assertThat(event.has("arguments")).isFalse();
  }

  @Test
  void chattyLibrariesWarnAndAnOutagesBrokenConnectionsAreNotLoggedOneByOne() {
    LoggerContext logback = context();
    Logging.apply(logback, false);
    assertThat(logback.getLogger("queen").getEffectiveLevel()).isEqualTo(Level.INFO);
    assertThat(logback.getLogger("org.eclipse.jetty.server").getEffectiveLevel())
        .isEqualTo(Level.WARN);
    assertThat(logback.getLogger("org.flywaydb.core").getEffectiveLevel()).isEqualTo(Level.WARN);
    assertThat(logback.getLogger("com.zaxxer.hikari.HikariDataSource").getEffectiveLevel())
        .isEqualTo(Level.WARN);
    assertThat(logback.getLogger("com.zaxxer.hikari.pool.ProxyConnection").getEffectiveLevel())
        .isEqualTo(Level.ERROR);
    assertThat(logback.getLogger("com.zaxxer.hikari.pool.PoolBase").getEffectiveLevel())
        .isEqualTo(Level.ERROR);
  }

  @Test
  void logbackFindsItAsAServiceBeforeItsXmlConfigurator() {
    assertThat(ServiceLoader.load(Configurator.class).stream().map(ServiceLoader.Provider::type))
        .containsExactly(Logging.class);
  }

  @Test
  void withNoFileOfTheOperatorsItLogsTextToStandardOutput() {
    LoggerContext logback = context();
    assertThat(logging(logback).configure(logback, null, NO_FILES, null))
        .isEqualTo(ExecutionStatus.DO_NOT_INVOKE_NEXT_IF_ANY);
    assertThat(encoder(logback)).isInstanceOf(PatternLayoutEncoder.class);
    assertThat(((ConsoleAppender<ILoggingEvent>) root(logback).getAppender("STDOUT")).getTarget())
        .isEqualTo("System.out");
  }

  @Test
  void logFormatJsonChoosesTheJsonEncoder() {
    LoggerContext logback = context();
    logging(logback).configure(logback, null, NO_FILES, " JSON ");
    assertThat(encoder(logback)).isInstanceOf(JsonEncoder.class);
  }

  @Test
  void anUnknownLogFormatIsSaidAndTextIsUsed() {
    LoggerContext logback = context();
    logging(logback).configure(logback, null, NO_FILES, "yaml");
    assertThat(encoder(logback)).isInstanceOf(PatternLayoutEncoder.class);
    assertThat(logback.getStatusManager().getCopyOfStatusList())
        .anyMatch(s -> s.getLevel() == Status.WARN && s.getMessage().contains("LOG_FORMAT yaml"));
  }

  @Test
  void aLogbackTestOrLogbackFileOnTheClassPathWinsAsInLogbacksOwnLookup(@TempDir Path dir)
      throws Exception {
    LoggerContext logback = context();
    // this module's tests carry a logback-test.xml
    assertThat(logging(logback).configure(logback, null, getClass().getClassLoader(), null))
        .isEqualTo(ExecutionStatus.INVOKE_NEXT_IF_ANY);
    Files.writeString(dir.resolve("logback.xml"), "<configuration/>");
    try (URLClassLoader withLogbackXml =
        new URLClassLoader(new URL[] {dir.toUri().toURL()}, null)) {
      assertThat(logging(logback).configure(logback, null, withLogbackXml, null))
          .isEqualTo(ExecutionStatus.INVOKE_NEXT_IF_ANY);
    }
    assertThat(root(logback).iteratorForAppenders().hasNext()).isFalse();
  }

  @Test
  void aNamedFileWinsAsAPathAFileUrlOrAClassPathResource(@TempDir Path dir) throws Exception {
    Path file = Files.writeString(dir.resolve("mine.xml"), "<configuration/>");
    LoggerContext logback = context();
    Logging logging = logging(logback);
    for (String named : List.of(file.toString(), file.toUri().toString(), "logback-test.xml")) {
      assertThat(logging.configure(logback, named, getClass().getClassLoader(), null))
          .as(named)
          .isEqualTo(ExecutionStatus.INVOKE_NEXT_IF_ANY);
    }
  }

  @Test
  void aNamedFileThatIsNotThereIsSaidAndTheBrokersLoggingIsUsed(@TempDir Path dir) {
    String typo = dir.resolve("logbak.xml").toString();
    LoggerContext logback = context();
    // logback's own fallback would log everything at DEBUG
    assertThat(logging(logback).configure(logback, typo, NO_FILES, null))
        .isEqualTo(ExecutionStatus.DO_NOT_INVOKE_NEXT_IF_ANY);
    assertThat(root(logback).getLevel()).isEqualTo(Level.INFO);
    assertThat(logback.getStatusManager().getCopyOfStatusList())
        .anyMatch(s -> s.getLevel() == Status.WARN && s.getMessage().contains(typo));
  }

  /** A context of the test's own, with the MDC adapter that logback's binding would give it. */
  private static LoggerContext context() {
    LoggerContext logback = new LoggerContext();
    logback.setMDCAdapter(new LogbackMDCAdapter());
    return logback;
  }

  private static Logging logging(LoggerContext logback) {
    Logging logging = new Logging();
    logging.setContext(logback);
    return logging;
  }

  private static Logger root(LoggerContext logback) {
    return logback.getLogger(Logger.ROOT_LOGGER_NAME);
  }

  private static Encoder<ILoggingEvent> encoder(LoggerContext logback) {
    return ((OutputStreamAppender<ILoggingEvent>) root(logback).getAppender("STDOUT")).getEncoder();
  }

  /** One event through the root's appender's encoder, as it would reach standard output. */
  private static String encode(LoggerContext logback, String logger, String format, Object arg) {
    Logger root = logback.getLogger(Logger.ROOT_LOGGER_NAME);
    OutputStreamAppender<ILoggingEvent> out =
        (OutputStreamAppender<ILoggingEvent>) root.getAppender("STDOUT");
    LoggingEvent event =
        new LoggingEvent(
            Logger.class.getName(),
            logback.getLogger(logger),
            Level.INFO,
            format,
            null,
            new Object[] {arg});
    return new String(out.getEncoder().encode(event), StandardCharsets.UTF_8);
  }
}
