"""The files of a report folder, named once: build.py writes them and the HTML page links to its siblings."""

HTML_NAME, PDF_NAME, XLSX_NAME, FIGURES_DIR = "index.html", "report.pdf", "report.xlsx", "figures"
