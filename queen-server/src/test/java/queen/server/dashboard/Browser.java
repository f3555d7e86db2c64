package queen.server.dashboard;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.openqa.selenium.By;
import org.openqa.selenium.Dimension;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * Debian's headless Chromium driven through its chromedriver: nothing is downloaded (both paths are
 * given, so Selenium Manager never runs), and the flags keep Chromium off the network this machine
 * does not have.
 */
final class Browser implements AutoCloseable {
  private static final String CHROMIUM = "/usr/bin/chromium";
  private static final String DRIVER = "/usr/bin/chromedriver";
  private static final Duration WAIT = Duration.ofSeconds(15);

  private final ChromeDriver driver;
  private final Path profile;
  private final Path screenshots;

  private Browser(ChromeDriver driver, Path profile, Path screenshots) {
    this.driver = driver;
    this.profile = profile;
    this.screenshots = screenshots;
  }

  /** Screenshots go to DASHBOARD_SCREENSHOTS (docs/dashboard for the README), else target/. */
  static Browser start() {
    if (!new File(CHROMIUM).canExecute() || !new File(DRIVER).canExecute()) {
      throw new IllegalStateException(
          "the dashboard tests need Debian's chromium and chromium-driver packages"
              + " (apt-get install chromium chromium-driver; .ci/run installs them)");
    }
    try {
      Path profile = Files.createTempDirectory("queen-chromium");
      String dir = System.getenv("DASHBOARD_SCREENSHOTS");
      Path shots = Path.of(dir == null ? "target/dashboard-screenshots" : dir);
      Files.createDirectories(shots);
      ChromeOptions options = new ChromeOptions();
      options.setBinary(CHROMIUM);
      options.addArguments(
          "--headless=new",
          "--no-sandbox",
          "--disable-gpu",
          "--disable-quic",
          "--no-first-run",
          "--disable-background-networking",
          "--disable-component-update",
          "--disable-sync",
          "--disable-dev-shm-usage",
          "--window-size=1280,800",
          "--force-device-scale-factor=1",
          "--lang=en-US",
          "--user-data-dir=" + profile);
      options.setCapability("goog:loggingPrefs", java.util.Map.of("browser", "ALL"));
      ChromeDriverService service =
          new ChromeDriverService.Builder().usingDriverExecutable(new File(DRIVER)).build();
      return new Browser(new ChromeDriver(service, options), profile, shots);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Loads the URL (a reload when it is the current one) without waiting for any page. */
  void get(String url) {
    if (url.equals(driver.getCurrentUrl())) {
      driver.navigate().refresh();
    } else {
      driver.get(url);
    }
  }

  /** Loads the URL and waits until the page's first data has arrived. */
  void open(String url, String page) {
    get(url);
    loaded(page);
  }

  void loaded(String page) {
    visible("[data-page=" + page + "][data-loaded=true]");
  }

  WebElement visible(String css) {
    return new WebDriverWait(driver, WAIT)
        .until(ExpectedConditions.visibilityOfElementLocated(By.cssSelector(css)));
  }

  /** The table's row with that data-key, once it is shown. */
  WebElement row(String table, String key) {
    return visible("[data-testid=" + table + "] tr[data-key=\"" + key + "\"]");
  }

  /** The table's first row whose data-key starts with the prefix, once it is shown. */
  WebElement rowStartingWith(String table, String prefix) {
    return visible("[data-testid=" + table + "] tr[data-key^=\"" + prefix + "\"]");
  }

  String text(String css) {
    return visible(css).getText();
  }

  void click(String css) {
    new WebDriverWait(driver, WAIT)
        .until(ExpectedConditions.elementToBeClickable(By.cssSelector(css)))
        .click();
  }

  /** Confirms the open confirmation dialog. */
  void confirm() {
    click("[data-testid=confirm]");
  }

  List<WebElement> displayed(String css) {
    return driver.findElements(By.cssSelector(css)).stream()
        .filter(WebElement::isDisplayed)
        .toList();
  }

  /** The browser console's errors since the last call (script errors, CSP violations). */
  List<String> consoleErrors() {
    return driver.manage().logs().get(org.openqa.selenium.logging.LogType.BROWSER).getAll().stream()
        .filter(e -> e.getLevel().intValue() >= java.util.logging.Level.SEVERE.intValue())
        .map(org.openqa.selenium.logging.LogEntry::getMessage)
        .toList();
  }

  void resize(int width, int height) {
    driver.manage().window().setSize(new Dimension(width, height));
  }

  /** Forgets the token the pages keep for this tab. */
  void clearSession() {
    if (driver.getCurrentUrl().startsWith("http")) {
      driver.executeScript("sessionStorage.clear()");
    }
  }

  void screenshot(String name) {
    try {
      Files.write(screenshots.resolve(name + ".png"), driver.getScreenshotAs(OutputType.BYTES));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Override
  public void close() {
    driver.quit();
    try (var files = Files.walk(profile)) {
      files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
