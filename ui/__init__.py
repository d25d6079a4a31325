"""The Gradio app's tabs and their building blocks: pure renderers (trace, tables, status) and per-tab logic.

`<tab>_tab.py` builders (one per tab, each a `ui.tab.Tab`) make the components and wire their events;
`app.py` lists them. Nothing here holds per-request state at module level. Who may call what, and the
limits a public Space puts on its visitors, live in `visitors/`.
"""
