"""Watching runs from outside: OpenMetrics for Prometheus (`--metrics ADDR`, `ptsbench metrics RUN_DIR...`) and
InfluxDB line protocol pushed to a URL. Everything here reads what a run stores or publishes (board.py); nothing here
drives a run, and nothing here failing stops one."""
