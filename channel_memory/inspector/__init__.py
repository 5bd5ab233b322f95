"""The read-only web inspector (``/inspect``): what an agent saw, and why.

Off unless ``inspector.enabled``: it shows stored message content to a web browser.
Every page reads through ``Store.read()``; nothing it serves writes to the database.
"""
