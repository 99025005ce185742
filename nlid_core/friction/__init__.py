"""Dynamic friction: staged LuGre identification and simulated friction experiments."""
