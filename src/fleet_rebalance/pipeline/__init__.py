"""Pipeline steps: each a module fleet_rebalance.pipeline.<step> with
`run(spark, config, run_date) -> dict[str, int]` (rows written per table); nightly.py
runs ingest, replay and metrics in order, backfill.py runs them over many dates."""
