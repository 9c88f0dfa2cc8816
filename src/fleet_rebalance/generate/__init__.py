"""A synthetic fleet of raw captures, in exactly the formats Kafka's tools print."""
