"""The delta-spark engine: Spark's own Delta connector (clusters that ship it, or
jvm/pom.xml's delta set), refusing the same writes the delta-rs engine refuses."""
