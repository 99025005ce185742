"""Letting go of browser sessions that were closed long enough ago (their records, runs and uploads)."""

from __future__ import annotations


def reap_disconnected_sessions() -> bool:
    """Make Streamlit let go of browser sessions closed longer ago than ``server.disconnectedSessionTTL``.

    Streamlit keeps a closed tab's session (its ``session_state``: records, runs; its uploaded files)
    for that time so the browser can reconnect, but its session store drops an expired session only
    on its next write, when another session disconnects, and then without shutting the session down,
    so the session's uploaded files stay in the upload manager. On a server that falls idle the last
    sessions' data would stay in memory indefinitely. This runs, on Streamlit's event loop (the only
    thread that may touch the store), the store's ``expire()`` and ``shutdown()`` of every session it
    drops (which removes the session's uploaded and media files). It uses Streamlit internals of the
    pinned version (checked by a test); returns False, doing nothing, where they differ or no server
    runs.
    """
    try:
        from streamlit.runtime import Runtime

        if not Runtime.exists():
            return False
        runtime = Runtime.instance()
        store = runtime._session_mgr._session_storage._cache  # type: ignore[attr-defined]
        loop = runtime._get_async_objs().eventloop

        def reap() -> None:
            for _, info in store.expire():
                try:
                    info.session.shutdown()
                except Exception:  # noqa: BLE001, S110 - a session that cannot shut down is still dropped
                    pass

        loop.call_soon_threadsafe(reap)
    except Exception:  # noqa: BLE001 - housekeeping must never take the server down
        return False
    return True
