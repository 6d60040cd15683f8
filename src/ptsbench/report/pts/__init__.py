"""The sections of a `ptsbench pts` report: a section per PTS test, its header facts, steady state and guides."""
