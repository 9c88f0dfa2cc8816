"""Maintain: compaction, VACUUM past --retain-days and a checkpoint for every Delta table
in the warehouse; a line per table on stdout."""

from __future__ import annotations

import argparse

from fleet_rebalance.cli.job_args import job_config
from fleet_rebalance.cli.run_job import run_job


def main(args: argparse.Namespace) -> int:
    config = job_config(args, "maintain")
    from fleet_rebalance.pipeline.maintain import run
    from fleet_rebalance.spark.session import build_session

    spark = build_session(config, job="maintain", run_date=None)
    print("\n".join(run(spark, config, args.retain_days)), flush=True)
    return 0


if __name__ == "__main__":
    run_job("maintain", main)
