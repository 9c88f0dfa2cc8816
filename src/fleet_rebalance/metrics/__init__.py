"""Gold metric transforms: each a DataFrame -> DataFrame function of Spark built-ins.

Every output has `date` (the run date) as its partition column and is keyed by cluster
and group_id, as DESIGN.md's gold tables are.
"""
