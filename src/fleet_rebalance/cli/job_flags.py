"""Each job's flags and their help, as the registry lists them (one function per job)."""

from __future__ import annotations

import argparse

from fleet_rebalance.cli.arg_types import (
    bounded_int,
    iso_date,
    non_empty,
    positive_float,
    utc_minute,
)
from fleet_rebalance.sql.output import FORMATS as SQL_FORMATS

DEFAULT_CONF = "conf/local.yaml"
DATE_HELP = (
    "capture date to process (default: the conf's default_date; conf/local.yaml says "
    "latest, the newest capture date under raw_root; a conf without it means yesterday, UTC)"
)
ALL_HELP = (
    "every date, oldest first, as a backfill: the capture dates under raw_root (ingest, "
    "nightly) or the dates bronze holds (replay, metrics); a re-run replaces each finished "
    "date's rows with the same rows"
)
# sql's engines: Spark (the default; clusters, Delta's own SQL) or DuckDB over Arrow
# reads of the tables by deltalake, here and without a JVM.
SQL_ENGINES = ("spark", "duckdb")
DEFAULT_RETAIN_DAYS = 7  # maintain's: Delta's own default file retention


def add_log_flags(parser: argparse.ArgumentParser) -> None:
    """-v/--verbose and --log-file, every job's last flags."""
    parser.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="log at DEBUG and print the traceback of a failure on stderr (default: INFO, "
        "and a failure is one line)",
    )
    parser.add_argument(
        "--log-file",
        type=non_empty("a file"),
        metavar="FILE",
        help="also append the log, with every failure's traceback, to FILE (default: none)",
    )


def add_conf_flag(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument(
        "--conf",
        default=DEFAULT_CONF,
        type=non_empty("a YAML configuration file"),
        metavar="FILE",
        help=f"{what} (default: {DEFAULT_CONF})",
    )


def add_warehouse_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--warehouse",
        type=non_empty("a directory or URI"),
        metavar="URI",
        help="Delta tables: a directory or an s3://, gs://, abfss:// URI (default: the "
        "conf's warehouse)",
    )


def add_warehouse_flags(parser: argparse.ArgumentParser) -> None:
    """--conf and --warehouse of the jobs that read or keep the tables only (sql, maintain)."""
    add_conf_flag(parser, "job configuration YAML, for its warehouse and storage")
    add_warehouse_flag(parser)


def pipeline_flags(parser: argparse.ArgumentParser) -> None:
    """ingest, metrics and nightly: conf, stores, one date or a backfill, logging."""
    add_conf_flag(parser, "job configuration YAML")
    parser.add_argument(
        "--raw-root",
        type=non_empty("a directory or URI"),
        metavar="URI",
        help="raw captures: a directory or an s3://, gs://, abfss:// URI (default: the "
        "conf's raw_root)",
    )
    add_warehouse_flag(parser)
    when = parser.add_mutually_exclusive_group()
    when.add_argument("--date", type=iso_date, metavar="YYYY-MM-DD", help=DATE_HELP)
    when.add_argument("--all", action="store_true", help=ALL_HELP)
    parser.add_argument(
        "--from",
        dest="from_date",
        type=iso_date,
        metavar="YYYY-MM-DD",
        help="backfill from this date, inclusive, like --all (default with --to: the oldest date)",
    )
    parser.add_argument(
        "--to",
        dest="to_date",
        type=iso_date,
        metavar="YYYY-MM-DD",
        help="backfill up to this date, inclusive, like --all (default with --from: the "
        "newest date)",
    )
    add_log_flags(parser)


def replay_flags(parser: argparse.ArgumentParser) -> None:
    """The pipeline's flags and --assignors."""
    pipeline_flags(parser)
    parser.add_argument(
        "--assignors",
        metavar="NAMES",
        help="comma-separated assignors (default: every built-in plus observed;"
        " plug-ins as package.module:Class)",
    )


def sql_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "query",
        nargs="?",
        metavar="QUERY",
        help='one or more `;`-separated statements, e.g. "SELECT * FROM recommendations '
        'LIMIT 5" (default: the statements of -f FILE, else of stdin)',
    )
    parser.add_argument(
        "-f",
        "--file",
        type=non_empty("a file of SQL statements"),
        metavar="FILE",
        help="read the statements from FILE (default: none)",
    )
    add_warehouse_flags(parser)
    parser.add_argument(
        "--format",
        choices=SQL_FORMATS,
        default="table",
        help="how rows are printed on stdout (default: table)",
    )
    parser.add_argument(
        "--max-rows",
        type=bounded_int(1),
        default=1000,
        metavar="N",
        help="rows shown per statement by --format table and markdown (default: 1000); "
        "csv and json print every row",
    )
    parser.add_argument(
        "--engine",
        choices=SQL_ENGINES,
        default="spark",
        help="spark: a SparkSession, Spark SQL and Delta's (time travel, DESCRIBE HISTORY); "
        "duckdb: DuckDB in this process over the tables as deltalake reads them, no JVM "
        "(a statement in a form DuckDB's SQL lacks is refused in one line) (default: spark)",
    )
    add_log_flags(parser)


def generate_flags(parser: argparse.ArgumentParser) -> None:
    """The fleet's shape, its time span and seed; defaults are FleetSpec's."""
    from fleet_rebalance.generate.fleet import FleetSpec

    spec = FleetSpec()
    parser.add_argument(
        "--out",
        default="data/sample",
        metavar="DIR",
        help="output directory (default: %(default)s)",
    )
    parser.add_argument(
        "--clusters",
        type=bounded_int(1),
        default=spec.clusters,
        metavar="N",
        help="Kafka clusters (default: %(default)s)",
    )
    parser.add_argument(
        "--groups",
        type=bounded_int(1),
        default=spec.groups_per_cluster,
        metavar="N",
        help="consumer groups per cluster (default: %(default)s)",
    )
    parser.add_argument(
        "--topics",
        type=bounded_int(1),
        default=spec.topics_per_cluster,
        metavar="N",
        help="topics per cluster, plus one regex-matched topic (default: %(default)s)",
    )
    parser.add_argument(
        "--groups-per-topic",
        type=bounded_int(0),
        default=spec.groups_per_topic,
        metavar="N",
        help="add topics until each is read by about N groups; 0 adds none (default: %(default)s)",
    )
    parser.add_argument(
        "--start",
        type=utc_minute,
        default=spec.start,
        metavar="YYYY-MM-DDTHH:MMZ",
        help=f"first capture time, UTC (default: {spec.start:%Y-%m-%dT%H:%MZ})",
    )
    parser.add_argument(
        "--hours",
        type=positive_float,
        default=spec.hours,
        metavar="H",
        help="hours of captures (default: %(default)s)",
    )
    parser.add_argument(
        "--interval-minutes",
        type=bounded_int(1),
        default=spec.interval_minutes,
        metavar="M",
        help="minutes between captures (default: %(default)s)",
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=spec.seed,
        help="random seed: the same seed writes the same fleet (default: %(default)s)",
    )
    parser.add_argument("--clean", action="store_true", help="empty --out first")
    add_log_flags(parser)


def maintain_flags(parser: argparse.ArgumentParser) -> None:
    add_warehouse_flags(parser)
    parser.add_argument(
        "--retain-days",
        type=bounded_int(1),
        default=DEFAULT_RETAIN_DAYS,
        metavar="N",
        help="keep every version of the last N days readable: VACUUM deletes only files "
        "older than that; refused when shorter than the longest run recorded in the "
        "warehouse (default: %(default)s)",
    )
    add_log_flags(parser)
