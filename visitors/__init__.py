"""The public-Space guard: what a visitor may call, spend and see, and the limits that hold them.

Who may spend (`access`), which endpoint admits whom (`endpoints`), answers hidden from those who may
not spend (`hidden_answers`), previews and task loads in a limited subprocess (`jobs`, `job_worker`),
and the server's own limits per visitor: request bodies (`body_limit`), upload bytes per address
(`upload_quota`), file fields that take uploads only (`upload_fields`), the queue's fair share
(`fair_share`, by `client_address`) and app batch runs (`batch_guard`).

Import-free on purpose: `visitors.job_worker` starts in a fresh interpreter for every visitor job and must
not pay for gradio or the agent before it refuses a bomb.
"""
