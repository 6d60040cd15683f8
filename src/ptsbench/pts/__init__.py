"""The SNIA PTS methodology: steady-state criterion, test specs as data, plans, the engine and its store."""
