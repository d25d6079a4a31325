"""Computation without the web: the calculator and the knowledge-base search."""
