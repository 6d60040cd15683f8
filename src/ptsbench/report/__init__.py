"""How people see results: tables, terminal output, workbooks, figures and reports. Reads only the store."""
