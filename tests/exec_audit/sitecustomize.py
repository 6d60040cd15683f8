"""Records every program a Python process started by the tests starts, when PTSBENCH_EXEC_LOG names a file
(exec_record.py). conftest.py puts this folder on PYTHONPATH, so ptsbench's own processes record theirs too."""

import os

if os.environ.get("PTSBENCH_EXEC_LOG"):
    import exec_record

    exec_record.record_starts(os.environ["PTSBENCH_EXEC_LOG"])
