"""The sql job's implementation, apart from its command line: statements split as Spark
splits them (statements), rows printed in each --format (output), and the DuckDB engine
(duckdb_engine). The Spark engine is pipeline.sql."""
