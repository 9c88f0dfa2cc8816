"""Flags every pipeline job shares, and the job skeleton around them."""

from __future__ import annotations

import argparse
import datetime as dt
import logging
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from fleet_rebalance.config import Config, load_config

DEFAULT_CONF = "conf/local.yaml"
LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


@dataclass(frozen=True)
class JobArgs:
    config: Config
    run_date: dt.date | None  # None means --all
    extra: argparse.Namespace


def iso_date(text: str) -> dt.date:
    try:
        return dt.datetime.strptime(text, "%Y-%m-%d").date()
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"expected YYYY-MM-DD, found {text!r}") from exc


def pipeline_parser(prog: str, description: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument(
        "--conf",
        default=DEFAULT_CONF,
        metavar="FILE",
        help=f"job configuration YAML (default: {DEFAULT_CONF})",
    )
    parser.add_argument(
        "--raw-root",
        metavar="URI",
        help="raw captures: a directory or an s3://, gs://, abfss:// URI (overrides conf)",
    )
    parser.add_argument(
        "--warehouse",
        metavar="URI",
        help="Delta tables: a directory or an s3://, gs://, abfss:// URI (overrides conf)",
    )
    when = parser.add_mutually_exclusive_group()
    when.add_argument(
        "--date",
        type=iso_date,
        metavar="YYYY-MM-DD",
        help="capture date (default: conf default_date: yesterday UTC, or the latest capture)",
    )
    when.add_argument("--all", action="store_true", help="process every date found")
    return parser


def parse_job_args(
    parser: argparse.ArgumentParser, argv: Sequence[str] | None = None, today: dt.date | None = None
) -> JobArgs:
    args = parser.parse_args(argv)
    config = load_config(args.conf, raw_root=args.raw_root, warehouse=args.warehouse)
    if args.all:
        run_date = None
    elif args.date:
        run_date = args.date
    elif config.default_date == "latest":
        run_date = latest_capture_date(config)
    else:
        run_date = (today or dt.datetime.now(dt.UTC).date()) - dt.timedelta(days=1)
    return JobArgs(config, run_date, args)


def latest_capture_date(config: Config) -> dt.date:
    from fleet_rebalance.capture import store
    from fleet_rebalance.filesystems import location

    root = location(config.raw_root, config.storage.options)
    date = store.latest_capture_date(root, store.discover(root, config.capture.path_pattern))
    if date is None:
        raise SystemExit(f"default_date is latest but no dated capture is under {config.raw_root}")
    return date


def run_job(main: Callable[[], int]) -> None:
    """Exit status for spark-submit and Airflow: 0 done, 1 failed (logged with a traceback)."""
    logging.basicConfig(level=logging.INFO, format=LOG_FORMAT, stream=sys.stderr)
    try:
        status = main()
    except Exception:
        logging.getLogger("fleet_rebalance").exception("job failed")
        status = 1
    sys.exit(status)
