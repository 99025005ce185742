"""The server hands back what closed sessions and expired cache entries held (see app_support.cache)."""

from __future__ import annotations

from streamlit.runtime import Runtime
from streamlit.runtime.memory_session_storage import MemorySessionStorage
from streamlit.runtime.websocket_session_manager import WebsocketSessionManager

from app_support import cache


def test_streamlit_internals_used_to_reap_disconnected_sessions_exist():
    """reap_disconnected_sessions relies on these attributes of the pinned Streamlit."""
    storage = MemorySessionStorage(ttl_seconds=1)
    assert callable(storage._cache.expire) and storage._cache.expire() == []
    from streamlit.runtime.app_session import AppSession

    assert callable(AppSession.shutdown)
    assert "_session_storage" in WebsocketSessionManager.__init__.__code__.co_names
    assert callable(Runtime._get_async_objs) and callable(Runtime.exists)


def test_reaping_without_a_server_is_a_no_op():
    assert not Runtime.exists()
    assert cache.reap_disconnected_sessions() is False


def test_sweep_drops_expired_entries_without_an_access():
    now = [0.0]
    c = cache.ByteBudgetCache(10_000, ttl_s=10.0, clock=lambda: now[0])
    c.put("a", b"x" * 100)
    now[0] = 11.0
    assert len(c) == 1  # nothing touched the entries yet
    c.sweep()
    assert len(c) == 0
