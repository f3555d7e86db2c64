package queen.server.http;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.util.function.Consumer;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.util.Callback;

/**
 * A response as the routes write it: a status, headers, then the body once. Routes see nothing of
 * the HTTP server behind it.
 */
public final class Response {
  private final org.eclipse.jetty.server.Response res;
  private final Callback done;
  private static final VarHandle SENT;

  static {
    try {
      SENT = MethodHandles.lookup().findVarHandle(Response.class, "sent", boolean.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private volatile boolean sent;
  private volatile boolean deferred;
  private Consumer<Exception> failure;

  private final Runnable beforeAnswer;

  /**
   * {@code beforeAnswer} runs just before the answer goes out (HttpApi reads what is left of the
   * body).
   */
  Response(org.eclipse.jetty.server.Response res, Callback done, Runnable beforeAnswer) {
    this.res = res;
    this.done = done;
    this.beforeAnswer = beforeAnswer;
  }

  Response status(int status) {
    res.setStatus(status);
    return this;
  }

  Response header(String name, String value) {
    res.getHeaders().put(name, value);
    return this;
  }

  /** Sends the status, the headers and {@code body}, with its length. */
  void send(byte[] body) {
    answering();
    res.getHeaders().put(HttpHeader.CONTENT_LENGTH, body.length);
    res.write(true, ByteBuffer.wrap(body), done);
  }

  /** Sends the status and headers with no body and no content length (see {@link Replies}). */
  void send() {
    answering();
    done.succeeded();
  }

  private void answering() {
    // a deferred answer may race a failure on another thread: the first one goes out
    if (!SENT.compareAndSet(this, false, true)) {
      throw new IllegalStateException("the request was answered already");
    }
    beforeAnswer.run();
  }

  /** Whether the answer went out; nothing may be written after. */
  boolean sent() {
    return sent;
  }

  /**
   * The route returns before it answers: the answer is sent later, maybe from another thread, by
   * {@link #send} or {@link #fail}. The route's last step.
   */
  void defer() {
    deferred = true;
  }

  boolean deferred() {
    return deferred;
  }

  /** A deferred answer that failed: answered as if the route had thrown {@code e}. */
  void fail(Exception e) {
    failure.accept(e);
  }

  /** How {@link #fail} answers; set once, before the route runs. */
  void onFailure(Consumer<Exception> failure) {
    this.failure = failure;
  }
}
