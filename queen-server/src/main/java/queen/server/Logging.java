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
import ch.qos.logback.core.status.OnConsoleStatusListener;
import ch.qos.logback.core.util.StatusListenerConfigHelper;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.slf4j.Logger;

/**
 * The broker's logging, set up in code (found by logback as a service): reading an XML
 * configuration loads about 460 classes of logback's and the JDK's XML machinery into every broker
 * (issue 16). One line per event on standard output, or one JSON object per line with {@code
 * LOG_FORMAT=json}. A logback file of the operator's wins (see {@link #configure(LoggerContext,
 * String, ClassLoader, String)}); {@code -Dlogback.debug=true} prints logback's own status.
 */
@ConfiguratorRank(ConfiguratorRank.CUSTOM_NORMAL_PRIORITY)
public final class Logging extends ContextAwareBase implements Configurator {
  private static final String PATTERN =
      "%d{yyyy-MM-dd'T'HH:mm:ss.SSSX,UTC} %-5level %logger{24} - %msg%n";

  /** Chatty libraries; a broken connection during an outage is logged once, by the broker. */
  private static final Map<String, Level> LEVELS =
      Map.of(
          "org.eclipse.jetty", Level.WARN,
          "org.flywaydb", Level.WARN,
          "com.zaxxer.hikari", Level.WARN,
          "com.zaxxer.hikari.pool.ProxyConnection", Level.ERROR,
          "com.zaxxer.hikari.pool.PoolBase", Level.ERROR);

  @Override
  public ExecutionStatus configure(LoggerContext logback) {
    if (Boolean.getBoolean("logback.debug")) {
      StatusListenerConfigHelper.addOnConsoleListenerInstance(
          logback, new OnConsoleStatusListener());
    }
    return configure(
        logback,
        System.getProperty("logback.configurationFile"),
        Logging.class.getClassLoader(),
        System.getenv("LOG_FORMAT"));
  }

  /**
   * Hands over to logback's own lookup when it will find a file: the one {@code
   * logback.configurationFile} names, or else a {@code logback-test.xml} or {@code logback.xml} on
   * the class path. A named file that is not there is said once, and the broker's logging is used
   * (logback's fallback would log everything at DEBUG).
   */
  ExecutionStatus configure(
      LoggerContext logback, String namedFile, ClassLoader classPath, String logFormat) {
    if (namedFile == null
        ? classPath.getResource("logback-test.xml") != null
            || classPath.getResource("logback.xml") != null
        : found(namedFile, classPath)) {
      return ExecutionStatus.INVOKE_NEXT_IF_ANY;
    }
    if (namedFile != null) {
      addWarn(
          "logback.configurationFile " + namedFile + " not found: the broker's logging is used");
    }
    String format = logFormat == null ? "" : logFormat.strip().toLowerCase(Locale.ROOT);
    if (!List.of("", "text", "json").contains(format)) {
      addWarn("LOG_FORMAT " + logFormat + " is neither text nor json: text is used");
    }
    apply(logback, format.equals("json"));
    return ExecutionStatus.DO_NOT_INVOKE_NEXT_IF_ANY;
  }

  /** Where logback looks for a named file: a URL, a class-path resource, a file. */
  private static boolean found(String location, ClassLoader classPath) {
    try {
      URI uri = new URI(location);
      // one letter is a Windows drive, not a scheme
      if (uri.getScheme() != null && uri.getScheme().length() > 1) {
        return !"file".equals(uri.getScheme()) || Files.isRegularFile(Path.of(uri));
      }
    } catch (URISyntaxException | IllegalArgumentException notAUrl) {
      // a resource name or a path
    }
    try {
      return classPath.getResource(location) != null || Files.isRegularFile(Path.of(location));
    } catch (InvalidPathException e) {
      return false;
    }
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
