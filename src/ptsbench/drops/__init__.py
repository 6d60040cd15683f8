"""Analysis: drops and steps inside a round or case, found in the per-second data fio's status documents left
(find.py), their likely causes from what was recorded beside them (causes.py), read from the store (stored.py)."""
