"""Nightly: ingest -> replay -> metrics for one date in one SparkSession."""

from __future__ import annotations

import logging
import time

from fleet_rebalance.cli import parse_job_args, pipeline_parser, run_job
from fleet_rebalance.pipeline import NIGHTLY_STEPS, load_step

log = logging.getLogger("fleet_rebalance.nightly")


def main() -> int:
    parser = pipeline_parser("nightly", __doc__)
    args = parse_job_args(parser)
    steps = {name: load_step(name) for name in NIGHTLY_STEPS}
    missing = [name for name, module in steps.items() if module is None]
    if missing:
        log.warning("steps not available yet: %s", ", ".join(missing))
    available = [(name, module) for name, module in steps.items() if module is not None]
    if not available:
        log.error("nightly: none of %s is available yet; nothing was run", ", ".join(NIGHTLY_STEPS))
        return 2
    from fleet_rebalance.session import build_session

    spark = build_session(args.config, job="nightly", run_date=args.run_date)
    for name, module in available:
        started = time.monotonic()
        try:
            counts = module.run(spark, args.config, args.run_date)
        except Exception:
            log.exception("nightly: step %s failed", name)
            return 1
        log.info("step %s done in %.1fs: %s", name, time.monotonic() - started, counts)
    if missing:
        log.warning(
            "nightly ran %s; still missing: %s",
            ", ".join(n for n, _ in available),
            ", ".join(missing),
        )
    return 0


if __name__ == "__main__":
    run_job(main)
