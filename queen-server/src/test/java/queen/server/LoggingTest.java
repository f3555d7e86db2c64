package queen.server;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.Configurator;
import ch.qos.logback.classic.spi.Configurator.ExecutionStatus;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.LoggingEvent;
import ch.qos.logback.classic.util.LogbackMDCAdapter;
import ch.qos.logback.core.OutputStreamAppender;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import java.util.ServiceLoader;
import org.junit.jupiter.api.Test;

/** The broker's logging set up in code: each case on a logger context of its own. */
class LoggingTest {

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
    assertThat(logback.getLogger("io.helidon.webserver").getEffectiveLevel()).isEqualTo(Level.WARN);
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
  void aLogbackTestFileOnTheClassPathWinsAsInLogbacksOwnLookup() {
    LoggerContext logback = context();
    Logging logging = new Logging();
    logging.setContext(logback);
    // this module's tests carry a logback-test.xml
    assertThat(logging.configure(logback)).isEqualTo(ExecutionStatus.INVOKE_NEXT_IF_ANY);
    assertThat(logback.getLogger(Logger.ROOT_LOGGER_NAME).iteratorForAppenders().hasNext())
        .isFalse();
  }

  /** A context of the test's own, with the MDC adapter that logback's binding would give it. */
  private static LoggerContext context() {
    LoggerContext logback = new LoggerContext();
    logback.setMDCAdapter(new LogbackMDCAdapter());
    return logback;
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
