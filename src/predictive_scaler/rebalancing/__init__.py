"""Pure rebalancing: node scores, load heaps, eviction planning, deletion costs. Issue 6."""
