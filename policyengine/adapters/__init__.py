"""Enforcement points where agents run: an MCP proxy, a Claude Code hook, agent-framework adapters.

Internal: the supported entry points are the CLI verbs and each adapter module's documented functions.
"""
