"""The sections of a case-runner report (`run`, `quick`, `sweep`, `plot` of fio JSON): the results table, a section
per case, and sweep charts."""
