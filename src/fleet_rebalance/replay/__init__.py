"""Per-group history replay: rebalance events and every assignor's answer to each (pure)."""
