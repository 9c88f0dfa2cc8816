"""Gold metrics. Two kinds of module: the Spark table builders (DataFrame in, DataFrame
out: rollups, flapping, timeline, rebalance_causes, offset_samples, static_what_if,
recommendations, group_health, migration_plan, convergence_frame, ...) and the pure
rules they or an Arrow call per key apply (no Spark: `*_rules`, consumer_status,
lag_distribution, time_lag, log_end_checks, sample_arrays, attention, changes).

Every output has `date` (the run date) as its partition column and is keyed by cluster
and group_id, as DESIGN.md's gold tables are.
"""
