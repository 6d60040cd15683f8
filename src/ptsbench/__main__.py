"""`python -m ptsbench` entry point."""

from ptsbench.cli import main

main()
