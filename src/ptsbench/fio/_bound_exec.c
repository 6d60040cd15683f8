/* _bound_exec PARENT_PID SIGNAL PROGRAM [ARG...]: run PROGRAM bound to ptsbench's life (see fio/lifetime.py).
 *
 * What ptsbench's preexec_fn does between fork and exec, done here instead, so that Python can start its children
 * with vfork: a fork copies ptsbench's page tables and then breaks copy-on-write pages for every fio a PTS round
 * starts, which was the larger part of ptsbench's CPU per cell.
 *   - SIGPIPE ignored: a dead ptsbench's stdout pipe must not kill fio half-way through stopping its jobs;
 *   - SIGINT at its default: a child started while a fleet ignores SIGINT must still stop on one;
 *   - prctl(PR_SET_PDEATHSIG, SIGNAL): the kernel signals PROGRAM when the thread that started it ends (it survives
 *     exec; only set-user-ID and capability-bearing programs clear it);
 *   - the race: when ptsbench died before prctl, the parent is no longer PARENT_PID and no signal would ever come,
 *     so PROGRAM is not started.
 * PROGRAM is the path ptsbench found, run with execv: execvp would search PATH again from the child's folder and
 * run a file without a #! line through /bin/sh, where Python's subprocess refuses it (ENOEXEC). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

static long number(const char *text) {
    char *end;
    errno = 0;
    long value = strtol(text, &end, 10);
    return (errno || *text == '\0' || *end != '\0' || value <= 0) ? -1 : value;
}

int main(int argc, char **argv) {
    if (argc < 4 || number(argv[1]) < 0 || number(argv[2]) < 0 || number(argv[2]) >= NSIG) {
        fputs("usage: _bound_exec PARENT_PID SIGNAL PROGRAM [ARG...] (started by ptsbench, not by hand)\n", stderr);
        return 127;
    }
    long parent = number(argv[1]);
    int signal_number = (int)number(argv[2]);
    signal(SIGPIPE, SIG_IGN);
    signal(SIGINT, SIG_DFL);
    if (prctl(PR_SET_PDEATHSIG, signal_number, 0, 0, 0) != 0) {
        fputs("ptsbench: prctl(PR_SET_PDEATHSIG) failed: this child would outlive ptsbench, so it does not start\n",
              stderr);
        return 127;
    }
    if (getppid() != (pid_t)parent)
        return 128 + signal_number;
    execv(argv[3], argv + 3);
    fprintf(stderr, "ptsbench: cannot run %s: %s\n", argv[3], strerror(errno));
    return 127;
}
