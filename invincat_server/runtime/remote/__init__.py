"""Invincat on a LangGraph Server: the graph a deployment runs (graph.py) and the client
side that starts, lists, approves and cancels its runs (deployments.py, tasks.py); see
docs/remote.md."""
