"""The lab's memory: headline values of stored runs, gates over them, the catalog of runs and its trends page."""
