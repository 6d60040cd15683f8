"""`ptsbench server`: start (or stop) the fio server a controller's `--hosts` runs talk to."""

import signal
import subprocess
import sys
from pathlib import Path

import click


@click.command()
@click.option("--bind", default="127.0.0.1", show_default=True,
              help="Address to listen on; 0.0.0.0 or :: (every address) only when asked, with a warning.")
@click.option("--port", type=click.IntRange(1, 65535), default=8765, show_default=True, help="TCP port.")
@click.option("--daemon", is_flag=True, help="Run in the background (needs --pidfile).")
@click.option("--pidfile", type=click.Path(path_type=Path), help="Pid file of the background server.")
@click.option("--stop", is_flag=True, help="Stop the background server named by --pidfile.")
def server(bind: str, port: int, daemon: bool, pidfile: Path | None, stop: bool) -> None:
    """Run a fio server on this host for `ptsbench run/quick --hosts` on a controller.

    fio servers have no authentication and can run commands: bind to an address only the controller can reach.

    \b
    Examples:
      ptsbench server                                   # 127.0.0.1:8765, in the foreground (Ctrl-C stops it)
      ptsbench server --bind 10.0.0.5 --daemon --pidfile /run/ptsbench-fio.pid
      ptsbench server --stop --pidfile /run/ptsbench-fio.pid
    """
    from ptsbench.hosts.server import (
        OPEN_SERVER_WARNING,
        check_port_free,
        is_all_addresses,
        server_argv,
        wait_listening,
    )

    if is_all_addresses(bind) and not stop:
        click.secho("ptsbench: warning: " + OPEN_SERVER_WARNING.format(port=port),
                    fg="yellow", err=True)
    if stop or daemon:
        from ptsbench.hosts.server import start_daemon, stop_server

        if pidfile is None:
            raise click.UsageError(f"--{'stop' if stop else 'daemon'} needs --pidfile FILE")
        if stop:
            click.echo(f"ptsbench: stopped the fio server (pid {stop_server(pidfile)})", err=True)
        else:
            pid = start_daemon(bind, port, pidfile)
            click.echo(f"ptsbench: fio server listening on {bind} port {port} (pid {pid}, pid file {pidfile})",
                       err=True)
        return
    from ptsbench.fio.lifetime import ends_with_ptsbench
    from ptsbench.hosts.server import stop_process

    check_port_free(bind, port)
    process = subprocess.Popen(server_argv(bind, port), stdin=subprocess.DEVNULL, preexec_fn=ends_with_ptsbench())
    signal.signal(signal.SIGTERM, _exit_on_signal)  # `kill` of ptsbench stops its fio server too
    signal.signal(signal.SIGHUP, _exit_on_signal)
    try:
        if wait_listening(bind, port, timeout_s=10.0):
            click.echo(f"ptsbench: fio server listening on {bind} port {port}; Ctrl-C stops it", err=True)
        sys.exit(process.wait())
    except KeyboardInterrupt:  # fio got the SIGINT too; it is stopped below if it stays
        pass
    finally:
        if process.poll() is None:
            stop_process(process.pid)
            process.wait()


def _exit_on_signal(signum: int, _frame: object) -> None:
    sys.exit(128 + signum)
