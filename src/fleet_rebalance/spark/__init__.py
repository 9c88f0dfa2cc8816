"""The Spark side of a run: the session every entry point builds (session.py) and the
Python daemon its workers start with (worker_daemon.py)."""
