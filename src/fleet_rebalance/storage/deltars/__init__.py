"""The delta-rs engine: Delta tables through the embedded deltalake package, with
Spark tasks writing the files (files.py, source.py) and the driver committing them
(commit.py); no JVM jars and no network needed."""
