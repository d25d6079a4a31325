"""The tools' core: registry of factories, tool-spec table, ToolContext, executor, workspace, errors, paging.

Nothing here parses a document or opens a connection; every other wing builds on it.
"""
