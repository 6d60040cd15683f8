"""The fio case runner: job files x targets -> cases (planned purely) -> run one by one, or targets at once -> store.

Each case is one fio process on one job file. Its exact job file and command line are written before fio starts,
and its result.json after fio ends, before the next case starts."""
