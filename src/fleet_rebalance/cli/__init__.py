"""The command line: ./spark-submit.sh's launcher and each job's flags, checks and exit.

registry       the one list of jobs: name, script under jobs/, descriptions, flags
arg_types      argparse value types (dates, counts, non-empty paths)
job_flags      each job's flags and their help
job_parser     argparse that fails in one line, with "did you mean"; job_parser(job)
job_args       parsed flags -> conf, run date or backfill span
exit_status    the documented exit statuses and the one-line usage exit
launcher       what spark-submit.sh runs: routes flags, checks, execs spark-submit
launch_args    its command line split into job flags and Spark's; the job's script, conf
launcher_help  ./spark-submit.sh --help
spark_command  the spark-submit command: master, jars, shipped venv, job and flags
cluster_venv   the venv packed for a cluster's executors and linked for its driver
sql_on_duckdb  sql --engine duckdb in the launcher's process, no JVM
launch_checks  what a job would refuse, refused before the JVM starts
run_job        what every jobs/*.py runs: logging, main, exit status
job_failures   which failures are expected and their one line
driver_stderr  the driver's logs to the user's stderr under spark-submit
sql_input      sql's statements from QUERY, -f FILE or stdin
"""
