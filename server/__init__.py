"""samedeal's asyncio websocket race server."""
