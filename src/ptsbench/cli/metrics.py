"""`ptsbench metrics RUN_DIR...`: serve stored runs as OpenMetrics; and --metrics ADDR / --metrics-push URL on every
run command, which serve (or push) the run while it runs."""

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

METRICS_HELP = ("Serve the run's live metrics (OpenMetrics, for Prometheus) at http://ADDR/metrics while it runs: "
                "PORT on 127.0.0.1, or ADDRESS:PORT to serve on another address (0 lets the system pick a port; "
                "see docs/metrics.md).")
PUSH_HELP = ("Also push the metrics to this URL every 10 s and at the end: Prometheus remote write to a URL ending in "
             "/api/v1/write, /push or /receive (e.g. http://prometheus:9090/api/v1/write), else InfluxDB line protocol "
             "(e.g. http://influx:8086/write?db=ptsbench). A failed push is said once and never stops the run.")


def _serve_note(url: str, loopback: bool) -> None:
    from ptsbench.metrics.serve import EXPOSURE_WARNING

    click.echo(f"ptsbench: metrics at {url}", err=True)
    if not loopback:
        click.secho("ptsbench: warning: " + EXPOSURE_WARNING.format(where=url), fg="yellow", err=True)


def metrics_options(function: Callable[..., Any]) -> Callable[..., Any]:
    """--metrics ADDR and --metrics-push URL on a run command: served (pushed) from before the run starts to its
    end. They only read what the run stores and publishes."""

    @functools.wraps(function)
    def wrapper(*args: Any, metrics_address: str | None, metrics_push: str | None, **kwargs: Any) -> Any:
        from ptsbench.metrics import board
        from ptsbench.metrics.push import pushing
        from ptsbench.metrics.serve import RunsCollector, Server, parse_address

        address = parse_address(metrics_address) if metrics_address else None  # a bad one: before any IO
        if address is not None or metrics_push:
            board.watch()
        collector = RunsCollector(live=True)
        server = Server(address, collector) if address is not None else None
        try:
            if server is not None and address is not None:
                _serve_note(server.url, address.loopback)
            with pushing(metrics_push, collector, lambda text: click.echo(f"ptsbench: {text}", err=True)):
                return function(*args, **kwargs)
        finally:
            if server is not None:
                server.stop()

    return click.option("--metrics", "metrics_address", metavar="ADDR", help=METRICS_HELP)(
        click.option("--metrics-push", metavar="URL", help=PUSH_HELP)(wrapper))


@click.command()
@click.argument("run_dirs", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--metrics", "metrics_address", metavar="ADDR", default="9464", show_default=True,
              help="Serve at http://ADDR/metrics: PORT on 127.0.0.1, or ADDRESS:PORT on another address.")
@click.option("--push", metavar="URL", help="Push them once to this URL instead of serving them: Prometheus remote "
              "write to a URL ending in /api/v1/write, /push or /receive, else InfluxDB line protocol (e.g. "
              "http://influx:8086/write?db=ptsbench).")
def metrics(run_dirs: tuple[Path, ...], metrics_address: str, push: str | None) -> None:
    """Serve stored runs' metrics (OpenMetrics, for Prometheus) until Ctrl-C: for runs made on hosts Prometheus
    cannot reach. A fleet's folder serves every device of it.

    \b
    Examples:
      ptsbench metrics ptsbench-results/*          # http://127.0.0.1:9464/metrics
      ptsbench metrics RUN_DIR --metrics 0.0.0.0:9464
      ptsbench metrics RUN_DIR --push 'http://influx:8086/write?db=ptsbench'
      ptsbench metrics RUN_DIR --push http://prometheus:9090/api/v1/write
    """
    from ptsbench.metrics.serve import RunsCollector, Server, parse_address, serve_forever
    from ptsbench.store import RunStore

    for run_dir in run_dirs:
        RunStore.open(run_dir)  # not a run directory: one line, before serving anything
    collector = RunsCollector(list(run_dirs))
    if push:
        from ptsbench.metrics.push import check_url, push_once

        check_url(push, "--push")
        count = push_once(push, collector)
        click.echo(f"ptsbench: pushed {count} samples to {push}", err=True)
        return
    address = parse_address(metrics_address)
    server = Server(address, collector)
    try:
        _serve_note(server.url, address.loopback)
        click.echo("ptsbench: Ctrl-C stops it", err=True)
        serve_forever(server)
    finally:
        server.stop()
