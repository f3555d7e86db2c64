package queen.server;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.JsonEncoder;
import ch.qos.logback.classic.encoder.PatternLayoutEncoder;
import ch.qos.logback.classic.spi.Configurator;
import ch.qos.logback.classic.spi.ConfiguratorRank;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.ConsoleAppender;
import ch.qos.logback.core.encoder.Encoder;
import ch.qos.logback.core.spi.ContextAwareBase;
import java.util.Map;
import org.slf4j.Logger;

/**
 * The broker's logging, set up in code (found by logback as a service): reading an XML
 * configuration loads about 460 classes of logback's and the JDK's XML machinery into every broker
 * (issue 16). One line per event on standard output, or one JSON object per line with {@code
 * LOG_FORMAT=json}. As in logback's own lookup, a {@code -Dlogback.configurationFile} or a {@code
 * logback-test.xml} on the class path wins.
 */
@ConfiguratorRank(ConfiguratorRank.CUSTOM_NORMAL_PRIORITY)
public final class Logging extends ContextAwareBase implements Configurator {
  private static final String PATTERN =
      "%d{yyyy-MM-dd'T'HH:mm:ss.SSSX,UTC} %-5level %logger{24} - %msg%n";

  /** Chatty libraries; a broken connection during an outage is logged once, by the broker. */
  private static final Map<String, Level> LEVELS =
      Map.of(
          "io.helidon", Level.WARN,
          "org.flywaydb", Level.WARN,
          "com.zaxxer.hikari", Level.WARN,
          "com.zaxxer.hikari.pool.ProxyConnection", Level.ERROR,
          "com.zaxxer.hikari.pool.PoolBase", Level.ERROR);

  @Override
  public ExecutionStatus configure(LoggerContext logback) {
    if (System.getProperty("logback.configurationFile") != null
        || Logging.class.getClassLoader().getResource("logback-test.xml") != null) {
      return ExecutionStatus.INVOKE_NEXT_IF_ANY;
    }
    apply(logback, "json".equalsIgnoreCase(System.getenv("LOG_FORMAT")));
    return ExecutionStatus.DO_NOT_INVOKE_NEXT_IF_ANY;
  }

  /** Standard output in text or JSON, the root at INFO, the chatty libraries quieter. */
  static void apply(LoggerContext logback, boolean json) {
    Encoder<ILoggingEvent> encoder = json ? json(logback) : text(logback);
    encoder.start();
    ConsoleAppender<ILoggingEvent> out = new ConsoleAppender<>();
    out.setContext(logback);
    out.setName("STDOUT");
    out.setEncoder(encoder);
    out.start();
    ch.qos.logback.classic.Logger root = logback.getLogger(Logger.ROOT_LOGGER_NAME);
    root.setLevel(Level.INFO);
    root.addAppender(out);
    LEVELS.forEach((name, level) -> logback.getLogger(name).setLevel(level));
  }

  private static Encoder<ILoggingEvent> text(LoggerContext logback) {
    PatternLayoutEncoder encoder = new PatternLayoutEncoder();
    encoder.setContext(logback);
    encoder.setPattern(PATTERN);
    return encoder;
  }

  /** For log shippers: the formatted message, without its template and arguments. */
  private static Encoder<ILoggingEvent> json(LoggerContext logback) {
    JsonEncoder encoder = new JsonEncoder();
    encoder.setContext(logback);
    encoder.setWithFormattedMessage(true);
    encoder.setWithMessage(false);
    encoder.setWithArguments(false);
    encoder.setWithContext(false);
    encoder.setWithSequenceNumber(false);
    encoder.setWithNanoseconds(false);
    return encoder;
  }
}
