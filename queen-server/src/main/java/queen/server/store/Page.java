package queen.server.store;

import java.util.List;

/** One page of a listing and how many rows the listing has in all. */
public record Page<T>(List<T> items, long total) {}
