"""Documents: PDF, Word, PowerPoint, spreadsheets, tables, text and archives, with header checks before parsing.

`bounded` judges a file by its content before any parser sees it; `isolated` parses a run's documents in
the budgeted worker (tools.isolation.limited_job).
"""
