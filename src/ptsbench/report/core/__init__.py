"""The report model (Report -> Sections -> Text / Table / Figure blocks), its figure style, and its renderers: HTML,
PDF, xlsx, PNG / SVG figures and the terminal."""
