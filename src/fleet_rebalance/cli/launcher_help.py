"""./spark-submit.sh --help: every job (from the registry), the flags they share, Spark's
flags and the launcher's own, the exit statuses. Each job's own flags: <job> --help."""

from __future__ import annotations

from fleet_rebalance.cli.registry import JOBS

USAGE = f"""usage: ./spark-submit.sh <job> [job flags] [-- spark-submit flags]

jobs:
{chr(10).join(f"  {name:<10} {job.summary}" for name, job in JOBS.items())}

flags understood by every pipeline job (see <job> --help for each job's own):
  --conf FILE          job configuration YAML (default: conf/local.yaml)
  --raw-root URI       raw captures: a directory or s3://, gs://, abfss:// URI
                       (default: the conf's raw_root)
  --warehouse URI      Delta tables: a directory or s3://, gs://, abfss:// URI
                       (default: the conf's warehouse)
  --date YYYY-MM-DD    date to process (default: the conf's default_date; conf/local.yaml
                       says latest, the newest capture date under raw_root; a conf
                       without it means yesterday, UTC)
  --all                every date, oldest first, as a backfill: capture dates under
                       raw_root (ingest, nightly), dates bronze holds (replay, metrics);
                       a date re-run replaces its rows (same rows: same tables)
  --from YYYY-MM-DD    backfill from this date (default with --to: the oldest date)
  --to YYYY-MM-DD      backfill up to this date (default with --from: the newest date)
  -v, --verbose        log at DEBUG, and print a failure's traceback (default: one line)
  --log-file FILE      also append the log, with tracebacks, to FILE (default: none)
  --retain-days N      maintain: keep the last N days' versions readable (default: 7)

passed to pyspark's spark-submit:
  --master URL         local[*] (default, or `master` in the conf), yarn, k8s://..., spark://...
  --deploy-mode MODE   client or cluster
  --packages COORDS    extra Maven packages, beside the ones every run resolves: Delta's
                       connector, and hadoop-aws when the warehouse is on S3 (fetched from
                       Maven Central once, cached under ~/.ivy2.5.2); a --jars naming a
                       delta-spark jar replaces Delta's package
  --conf KEY=VALUE     a Spark property
  -- ...               everything after `--` verbatim

launcher flags:
  --help               this text

output: results (the nightly summary, SQL rows) on stdout; logs and errors on stderr.
exit status: 0 done; 1 the run failed (one line on stderr: what failed and what to do);
2 a flag, the conf or a path cannot be used (one line on stderr; nothing was run).
"""
