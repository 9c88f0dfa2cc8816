"""Fleet-wide Kafka consumer-group rebalance analysis on Spark and Delta."""

__version__ = "0.1.0"
