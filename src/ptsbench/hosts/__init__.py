"""Many hosts through fio's own client/server mode: host lists, fio servers, pre-flight checks, per-host results.

Every host runs `fio --server`; the controller runs one `fio --client=HOSTLIST job.fio`, which sends the same job to
every host at once and gets one json+ entry per host job back (`client_stats`). ptsbench adds, per case, an all-hosts
entry (fio's group arithmetic: IOs over the longest runtime; latency merged exactly from the hosts' bins) and the
per-host status (what fio said about a host that dropped off).

Before any IO, `preflight` asks every host, with tiny fio jobs (1-byte reads, a 4 KiB scratch file removed again),
whether it answers, runs the same fio version as the controller and can use each target path.

Modules by role: `hostlist` (hosts and host lists), `server` (a fio server's life: start, pid file, stop),
`preflight` (the checks before any IO, and the guard for paths written on hosts), `results` (per-host status and the
all-hosts aggregate).
"""
