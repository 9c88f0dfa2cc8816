"""fleet-capture: snapshots of live clusters' consumer groups from the admin API.

No Spark, no JVM: confluent-kafka's AdminClient (librdkafka) lists, describes and reads
the offsets of every group of each configured cluster on an interval and writes one
snapshot per cluster per cycle under raw_root in the layout ingest already reads
(`<cluster>/captures/<UTC time>/groups.jsonl` + `topics.txt`, DESIGN.md "Raw captures").
Layers: cli -> runner -> collect (admin) -> snapshot (pure) -> writer.
"""
