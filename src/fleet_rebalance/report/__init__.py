"""The nightly's terminal summary and self-contained HTML report, from the day's tables."""
