package queen.server.store;

import java.sql.SQLException;
import java.util.List;

/** One page of a listing and how many rows the listing has in all. */
public record Page<T>(List<T> items, long total) {

  /** A listing's query: {@code limit} rows from {@code offset}, each carrying the total. */
  @FunctionalInterface
  interface Query<T> {
    Page<T> read(int limit, int offset) throws SQLException;
  }

  /**
   * The page at {@code offset}. Past the end no row carries the total (the page said 0): it is read
   * again as the first row's, by the same query (on the same connection).
   */
  static <T> Page<T> read(Query<T> query, int limit, int offset) throws SQLException {
    Page<T> page = query.read(limit, offset);
    return page.items().isEmpty() && offset > 0
        ? new Page<>(page.items(), query.read(1, 0).total())
        : page;
  }
}
