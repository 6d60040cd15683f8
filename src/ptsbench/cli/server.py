"""`ptsbench server`: start (or stop) a fio server on this host, on a Unix socket only its user can reach, or over
plain TCP when asked."""

import signal
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from ptsbench.hosts.server import Listen

TCP_HELP = ("Listen on TCP instead (--bind, --port). WARNING: a fio server has no authentication and runs commands; "
            "anyone who reaches the port runs anything here as this user. Only on a network that only the "
            "controller reaches; prefer --hosts ssh://HOST on the controller, which needs no server here.")


@click.command()
@click.option("--socket", "socket_path", type=click.Path(path_type=Path),
              help="Unix socket to serve on; its folder is made with mode 0700 (or must be this user's, 0700, not a "
                   "symlink).  [default: /run/ptsbench-fio/fio.sock]")
@click.option("--tcp", is_flag=True, help=TCP_HELP)
@click.option("--bind", help="With --tcp: the address to listen on (0.0.0.0 or :: for every address).  "
                             "[default: 127.0.0.1]")
@click.option("--port", type=click.IntRange(1, 65535), help="With --tcp: the TCP port.  [default: 8765]")
@click.option("--daemon", is_flag=True, help="Run in the background (needs --pidfile).")
@click.option("--pidfile", type=click.Path(path_type=Path), help="Pid file of the background server.")
@click.option("--stop", is_flag=True, help="Stop the background server named by --pidfile.")
def server(socket_path: Path | None, tcp: bool, bind: str | None, port: int | None, daemon: bool,
           pidfile: Path | None, stop: bool) -> None:
    """Run a fio server on this host, on a Unix socket that only its user (root, to test devices) can reach.

    Runs on hosts reach their fio servers through SSH (`--hosts ssh://HOST`), which starts one there by itself;
    this command serves fio clients on this host (`fio --client=sock:SOCKET`), or across an SSH tunnel you make.

    \b
    Examples:
      ptsbench server                         # /run/ptsbench-fio/fio.sock, in the foreground (Ctrl-C stops it)
      ptsbench server --daemon --pidfile /run/ptsbench-fio.pid
      ptsbench server --stop --pidfile /run/ptsbench-fio.pid
      ptsbench server --tcp --bind 10.0.0.5   # plain TCP, no authentication: see --tcp
    """
    from ptsbench.hosts.server import DEFAULT_SOCKET, TCP_WARNING, Listen

    if stop:
        from ptsbench.hosts.server import stop_server

        if pidfile is None:
            raise click.UsageError("--stop needs --pidfile FILE")
        click.echo(f"ptsbench: stopped the fio server (pid {stop_server(pidfile)})", err=True)
        return
    if not tcp and (bind is not None or port is not None):
        raise click.UsageError("--bind and --port listen on TCP, which has no authentication: add --tcp to ask for "
                               "it (see its warning), or leave them out to serve on a Unix socket")
    if tcp and socket_path is not None:
        raise click.UsageError("--socket and --tcp exclude each other")
    if tcp:
        listen = Listen(bind=bind or "127.0.0.1", port=port or 8765)
        click.secho("ptsbench: warning: " + TCP_WARNING.format(where=f"{listen.bind} port {listen.port}"),
                    fg="yellow", err=True)
    else:
        listen = Listen(socket=(socket_path or DEFAULT_SOCKET).absolute())
    if daemon:
        from ptsbench.hosts.server import start_daemon

        if pidfile is None:
            raise click.UsageError("--daemon needs --pidfile FILE")
        pid = start_daemon(listen, pidfile)
        click.echo(f"ptsbench: fio server listening on {listen} (pid {pid}, pid file {pidfile})", err=True)
        return
    _foreground(listen)


def _foreground(listen: "Listen") -> None:
    from ptsbench.fio.lifetime import start_bound, stop_server_with_ptsbench
    from ptsbench.hosts.server import prepare, server_argv, stop_process, wait_listening

    prepare(listen)
    argv = server_argv(listen)
    stop_server_with_ptsbench(argv[1])  # its jobs outlive the SIGTERM the fio server gets when ptsbench dies
    # `kill` of ptsbench stops its fio server too: handled before fio starts, as the server may listen (and be
    # killed) before this process runs its next line (CI: a SIGTERM then ended ptsbench by the default action)
    signal.signal(signal.SIGTERM, _exit_on_signal)
    signal.signal(signal.SIGHUP, _exit_on_signal)
    process: subprocess.Popen[bytes] | None = None
    try:
        process = start_bound(argv, stdin=subprocess.DEVNULL)
        if wait_listening(listen, timeout_s=10.0):
            click.echo(f"ptsbench: fio server listening on {listen}; Ctrl-C stops it", err=True)
        sys.exit(process.wait())
    except KeyboardInterrupt:  # fio got the SIGINT too; it is stopped below if it stays
        pass
    finally:
        if process is not None and process.poll() is None:
            stop_process(process.pid)
            process.wait()
        if listen.socket is not None:  # fio leaves it behind
            listen.socket.unlink(missing_ok=True)


def _exit_on_signal(signum: int, _frame: object) -> None:
    sys.exit(128 + signum)
